"""Pre-flight reports the profile's warnings (``profile/warnings.py``) as WARN checks, which ``--strict`` fails: a
side's as ``<side>.config.weak-settings`` (its keytab's as ``<side>.files.keytab``), the rest as
``profile.config.weak-settings``; the same finding and fix validate prints. Pure decisions: no cluster."""

from __future__ import annotations

from pathlib import Path

from secure_mirror.preflight.checks.base import SideChecks
from secure_mirror.preflight.checks.settings import keytab_file, profile_settings, weak_settings
from secure_mirror.preflight.model import PASS, WARN, Report
from secure_mirror.profile import profile_warnings
from tests.support import profiles as pf


def _side(profile, side: str):
    return weak_settings(profile, side)


def test_a_plain_profile_passes(tmp_path):
    profile = pf.load(tmp_path)
    for side in ("source", "target"):
        check = _side(profile, side)
        assert (check.id, check.status) == (f"{side}.config.weak-settings", PASS)
    check = profile_settings(profile)
    assert (check.id, check.status, check.fix) == ("profile.config.weak-settings", PASS, "")


def test_a_sides_warnings_are_its_weak_settings_check(tmp_path):
    target = pf.mutual_tls(tmp_path, "target")
    target["client_options"] = {"producer.interceptor.classes": "com.example.Spy"}
    profile = pf.load(tmp_path, target=target)
    warnings = profile_warnings(profile)
    check = _side(profile, "target")
    assert check.id == "target.config.weak-settings" and check.status == WARN
    assert check.finding == "; ".join(f"{w.field}: {w.finding}" for w in warnings)
    assert check.finding.startswith("target.tls.hostname_verification: off, so any certificate the CA signed")
    assert check.fix == (
        "set target.tls.hostname_verification: true and connect by the names the certificates list; remove it, or "
        "name only classes from jars your security team has reviewed"
    )
    assert _side(profile, "source").status == PASS
    assert not Report([check]).ok(strict=True) and Report([check]).ok()


def test_a_keytab_warns_once_as_files_keytab_with_validates_words(tmp_path):
    profile = pf.load(tmp_path)
    keytab = Path(profile.source.sasl.keytab)
    keytab.chmod(0o640)
    (warning,) = profile_warnings(profile)
    assert _side(profile, "source").status == PASS  # not twice
    run = SideChecks("source")
    keytab_file(run, keytab)
    (check,) = run.checks
    assert (check.id, check.status, check.finding, check.fix) == (
        "source.files.keytab",
        WARN,
        warning.finding,
        warning.fix,
    )


def test_a_keytab_named_through_a_link_warns(tmp_path):
    real = Path(pf.keytab(tmp_path / "real.keytab"))
    link = tmp_path / "link.keytab"
    link.symlink_to(real)
    run = SideChecks("target")
    keytab_file(run, link)
    (check,) = run.checks
    assert check.status == WARN and check.finding.startswith(f"keytab {link} is a symbolic link to {real}")
    assert check.fix == f"name the file itself ({real}) instead of the link"


def test_the_profiles_other_warnings_are_one_check(tmp_path):
    conf = {"spark.executor.extraJavaOptions": "-Dsun.security.krb5.debug=true"}
    profile = pf.load(tmp_path, spark={"conf": conf}, source_isolation_level="read_uncommitted")
    check = profile_settings(profile)
    assert check.id == "profile.config.weak-settings" and check.status == WARN
    assert check.finding == (
        "mirror.spark.conf.spark.executor.extraJavaOptions: -Dsun.security.krb5.debug=true prints Kerberos tickets "
        "and key material into the JVM's output, which Spark keeps in its logs; mirror.source_isolation_level: "
        "read_uncommitted: records of aborted and open transactions are copied as committed records"
    )
    assert _side(profile, "source").status == _side(profile, "target").status == PASS
