"""Clock skew measured: a second krb5kdc serving the sandbox's source realm from the same database, its clock shifted
with libfaketime (Debian's libfaketime, installed by scripts/setup). Pre-flight reads each KDC's time from the
KRB-ERROR it answers a probe with, and fails beyond the skew Kerberos allows; with the sandbox's own KDC it passes.
MIT's client adjusts to the KDC's time, so the initial ticket still passes: the clock check is what tells.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from secure_mirror.preflight import FAIL, PASS, run_preflight
from secure_mirror.profile import load_profile
from secure_mirror.sandbox import procs
from secure_mirror.sandbox.kdc import KDC, SandboxRealm

pytestmark = pytest.mark.sandbox
FAKETIME = Path("/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1")


@pytest.fixture
def shifted_kdc(sandbox, tmp_path):
    """Start a KDC for the source realm whose clock runs ``shift`` ahead (or behind); yields a starter."""
    if not FAKETIME.exists():
        pytest.fail(f"{FAKETIME} is missing: run scripts/setup (Debian package libfaketime)")
    started: list[KDC] = []
    own = sandbox.kdc()

    def start(shift: str) -> int:
        realm = sandbox.sides["source"].realm
        base = tmp_path / f"kdc{len(started)}"
        base.mkdir(mode=0o700)
        (base / realm).symlink_to(own.base / realm)  # the sandbox's database and stash, read by a second KDC
        (base / "kadm5.acl").write_text("")
        [port] = procs.free_ports(1)
        kdc = KDC(
            base,
            [SandboxRealm(realm, port, [])],
            launch_env={"LD_PRELOAD": str(FAKETIME), "FAKETIME": shift, "FAKETIME_DONT_FAKE_MONOTONIC": "1"},
        )
        (base / "kdc.conf").write_text(kdc.kdc_conf())
        (base / "krb5.conf").write_text(own.krb5_conf.read_text())
        kdc.start()
        started.append(kdc)
        return port

    yield start
    for kdc in started:
        kdc.stop()


def profile_with_kdc(sandbox, folder: Path, port: int | None):
    data = yaml.safe_load(sandbox.profile_path.read_text())
    if port is not None:
        data["kerberos"]["realms"][sandbox.sides["source"].realm]["kdcs"] = [f"127.0.0.1:{port}"]
    path = folder / "profile.yaml"
    path.write_text(yaml.safe_dump(data))
    return load_profile(path)


@pytest.mark.parametrize("shift, words", [("+15m", "ahead of"), ("-12m", "behind")])
def test_a_kdc_beyond_the_allowed_skew_fails_with_its_offset(sandbox, shifted_kdc, tmp_path, shift, words):
    port = shifted_kdc(shift)
    report = run_preflight(profile_with_kdc(sandbox, tmp_path, port), sides=("source",))
    check = report.get("source.kerberos.clock")
    assert check.status == FAIL, report.to_json()
    assert f"127.0.0.1:{port}" in check.finding and words in check.finding and "NTP" in check.fix
    offset = check.details["kdcs"][0]["offset_s"]
    expected = 15 * 60 if shift.startswith("+") else -12 * 60
    assert abs(offset - expected) < 30, offset  # measured, not assumed: within the probe's few seconds
    assert not report.ok()


def test_a_kdc_within_the_allowed_skew_passes_and_a_near_limit_one_warns(sandbox, shifted_kdc, tmp_path):
    report = run_preflight(profile_with_kdc(sandbox, tmp_path, None), sides=("source",))
    check = report.get("source.kerberos.clock")
    assert check.status == PASS and abs(check.details["kdcs"][0]["offset_s"]) < 5, report.to_json()
    near = run_preflight(profile_with_kdc(sandbox, tmp_path, shifted_kdc("+200")), sides=("source",))
    assert near.get("source.kerberos.clock").status == "warn", near.to_json()
