"""Pre-flight never passes what it did not prove: the false-pass classes, each set up on the real sandbox.

For each: pre-flight must not pass, ``run`` must refuse (exit 1, nothing written), and the message names the fix.
Each case failed before the fix: WRITE on a target topic still to create was "skipped" (the job then failed at its
first write), a LITERAL grant on the probe's own group name passed for Spark's random group ids, and weak settings
had no check at all.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from secure_mirror.errors import EXIT_FAILED
from secure_mirror.kafka import admin_ops
from secure_mirror.preflight import FAIL, PASS, UNVERIFIED, WARN, run_preflight
from secure_mirror.preflight.admin_identity import admin_clusters
from secure_mirror.profile import load_profile
from secure_mirror.profile.topics import HEARTBEATS_TOPIC
from tests.support.mirror_case import MirrorCase, records

pytestmark = pytest.mark.sandbox
CLI = [sys.executable, "-m", "secure_mirror"]


def admin_of(sb, profile):
    return admin_clusters(
        profile,
        ",".join(
            f"{side}.principal={sb.sides[side].admin_principal},{side}.keytab={sb.keytab(side, 'admin')}"
            for side in ("source", "target")
        ),
    )


def run_refused(case: MirrorCase, folder: Path, *extra: str) -> subprocess.CompletedProcess:
    run_dir = folder / "run"
    proc = subprocess.run(
        [*CLI, "run", str(case.profile_path), "--until-caught-up", "--run-dir", str(run_dir), *extra],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "COLUMNS": "200"},
    )
    assert proc.returncode == EXIT_FAILED, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert not run_dir.exists() and not Path(case.profile.mirror.checkpoint_location).exists()
    assert "Traceback" not in proc.stderr
    return proc


def without(case: MirrorCase, side: str, operation: str, resource_type: str = "TOPIC") -> None:
    """The case's grants less ``operation`` on ``resource_type``; the grants on the mirror's own heartbeats topic
    stay (a false pass on the mirrored topics is the question, not the heartbeats' own check)."""
    case.acls[side] = [
        a
        for a in case.acls[side]
        if not (a["operation"] == operation and a["resource_type"] == resource_type)
        or a["resource_name"] == HEARTBEATS_TOPIC
    ]


def test_write_on_target_topics_still_to_create_is_unverified_and_run_refuses(sandbox, tmp_path):
    case = MirrorCase(sandbox, tmp_path)
    without(case, "target", "WRITE")
    with case:
        case.create({"w": 1})
        case.produce("w", records(3, 1, "w"))
        report = run_preflight(case.profile)
        check = report.get("target.acl.topic-write")
        assert check.status == UNVERIFIED and case.topic("w") in check.finding, report.to_json()
        assert "--as-admin" in check.fix and not report.ok() and report.ok(accept_unverified=True)
        proc = run_refused(case, tmp_path)
        assert "target.acl.topic-write" in proc.stdout and "not proven: target.acl.topic-write" in proc.stdout
        assert (
            "could not prove every permission the mirror needs" in proc.stderr and "--accept-unverified" in proc.stderr
        )
        # the admin audit asks the question pre-flight could not: here it is denied, so accepting changes nothing
        audited = run_preflight(case.profile, admin=admin_of(sandbox, case.profile))
        assert audited.get("target.audit.topic-write").status == FAIL
        assert not audited.ok(accept_unverified=True)


def test_the_admin_audit_proves_write_on_topics_still_to_create(sandbox, tmp_path):
    case = MirrorCase(sandbox, tmp_path)
    with case:
        case.create({"a": 1})
        case.produce("a", records(3, 1, "a"))
        plain = run_preflight(case.profile)
        assert plain.get("target.acl.topic-write").status == UNVERIFIED and not plain.ok()
        audited = run_preflight(case.profile, admin=admin_of(sandbox, case.profile))
        assert audited.get("target.audit.topic-write").status == PASS
        assert audited.ok() and audited.unproven() == [], audited.to_json()


def test_a_literal_grant_on_one_group_name_does_not_pass_for_sparks_group_ids(sandbox, tmp_path):
    case = MirrorCase(sandbox, tmp_path)
    without(case, "source", "READ", "GROUP")
    prefix = case.profile.group_prefix
    case.acls["source"].append(
        {
            **case.acls["source"][0],
            "operation": "READ",
            "resource_type": "GROUP",
            "resource_name": f"{prefix}-preflight",
            "pattern_type": "LITERAL",
        }
    )
    with case:
        case.create({"g": 1})
        case.produce("g", records(3, 1, "g"))
        report = run_preflight(case.profile)
        check = report.get("source.acl.group-read")
        assert check.status == FAIL, report.to_json()
        grant = case.profile.own_groups  # the prefix and its '-': no other mirror's groups
        assert check.acls and check.acls[0].pattern_type == "PREFIXED" and check.acls[0].resource_name == grant
        proc = run_refused(case, tmp_path, "--accept-unverified")
        assert "source.acl.group-read" in proc.stdout and "--group " + prefix in proc.stdout


def test_weak_settings_warn_and_strict_refuses(sandbox, tmp_path):
    case = MirrorCase(sandbox, tmp_path)
    data = yaml.safe_load(case.profile_path.read_text())
    data["target"]["tls"]["hostname_verification"] = False
    case.profile_path.write_text(yaml.safe_dump(data, sort_keys=False))
    case.profile = load_profile(case.profile_path)
    with case:
        case.create({"s": 1})
        case.produce("s", records(3, 1, "s"))
        report = run_preflight(case.profile, admin=admin_of(sandbox, case.profile))
        check = report.get("target.config.weak-settings")
        assert check.status == WARN and "target.tls.hostname_verification: off" in check.finding
        assert "set target.tls.hostname_verification: true" in check.fix
        assert report.ok() and not report.ok(strict=True)
        proc = run_refused(case, tmp_path, "--strict", "--accept-unverified")
        assert "target.config.weak-settings" in proc.stdout
    assert sandbox.admin("target", admin_ops.list_topics) is not None


def test_a_setting_only_the_java_client_refuses_fails_preflight(sandbox, tmp_path):
    """librdkafka never sees client_options; Spark's Java client does, and would stop at start."""
    case = MirrorCase(sandbox, tmp_path, target_client_options={"retry.backoff.ms": "soon"})
    with case:
        case.create({"j": 1})
        case.produce("j", records(3, 1, "j"))
        report = run_preflight(case.profile, admin=admin_of(sandbox, case.profile))
        assert report.get("target.kafka.connect").status == PASS  # librdkafka is content
        check = report.get("target.java.client")
        assert check.status == FAIL and "ConfigException" in check.finding and "retry.backoff.ms" in check.finding
        assert "Spark's job and MirrorMaker 2 would fail the same way" in check.fix
        source = report.get("source.java.client")
        assert source.status == PASS and "authenticated and reached cluster" in source.finding
        proc = run_refused(case, tmp_path, "--accept-unverified")
        assert "target.java.client" in proc.stdout


def test_a_topic_named_in_the_selection_but_hidden_from_the_mirror_fails(sandbox, tmp_path):
    """Before, a literally named topic the identity may not DESCRIBE was left out of the selection without a word."""
    case = MirrorCase(sandbox, tmp_path)
    data = yaml.safe_load(case.profile_path.read_text())
    data["mirror"]["topics"]["include"] = f"{case.prefix}\\.a,{case.prefix}\\.hidden"
    case.profile_path.write_text(yaml.safe_dump(data, sort_keys=False))
    case.profile = load_profile(case.profile_path)
    hidden = case.topic("hidden")
    case.acls["source"] = [a for a in case.acls["source"] if a["resource_type"] != "TOPIC"] + [
        {
            **case.acls["source"][0],
            "operation": op,
            "resource_type": "TOPIC",
            "resource_name": case.topic("a"),
            "pattern_type": "LITERAL",
        }
        for op in ("READ", "DESCRIBE")
    ]
    with case:
        case.create({"a": 1, "hidden": 1})
        case.produce("a", records(3, 1, "a"))
        report = run_preflight(case.profile, sides=("source",))
        check = report.get("source.acl.topic-describe-named")
        assert check.status == FAIL and hidden in check.finding and "silently" in check.finding, report.to_json()
        assert check.acls[0].resource_name == hidden and check.acls[0].operation == "DESCRIBE"
