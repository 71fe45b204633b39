"""`secure-mirror sandbox up` options that cannot work are one sentence and exit 2, before anything starts: a
--dir that is or lies below a file, a --port-base whose ports do not exist, a --ticket-lifetime that is not a
Kerberos duration (it is written into kdc.conf, so a line break there would add settings)."""

from __future__ import annotations

import subprocess
import sys

import pytest

from secure_mirror.errors import BadInputError
from secure_mirror.sandbox.kdc import KDC


def test_sandbox_options_that_cannot_work_are_one_sentence_with_exit_2(tmp_path):
    (tmp_path / "a-file").write_text("x")
    cases = {
        ("--dir", str(tmp_path / "a-file")): f"--dir {tmp_path / 'a-file'} cannot be created ({tmp_path / 'a-file'} "
        "is not a folder); choose another folder",
        ("--dir", str(tmp_path / "a-file" / "x")): f"--dir {tmp_path / 'a-file' / 'x'} cannot be created",
        ("--port-base", "99999"): "argument --port-base: '99999' is not a port from 1024 to 65520 (16 follow it)",
        (
            "--ticket-lifetime",
            "10h\n[realms]",
        ): "argument --ticket-lifetime: '10h\\n[realms]' is not a Kerberos duration",
        ("--reauth-ms", "500"): "argument --reauth-ms: '500' is not a number of milliseconds of at least 1000",
        ("--reauth-ms", "1m"): "argument --reauth-ms: '1m' is not a number of milliseconds of at least 1000",
        (
            "--wan",
            "abc",
        ): "argument --wan: 'abc' is not RTT_MS[:MBIT]: a round trip of 0 to 10000 milliseconds, optionally "
        "a colon and a cap above 0 and up to 100000 Mbit/s (e.g. 50, or 100:200)",
        ("--wan", "50:0"): "argument --wan: '50:0' is not RTT_MS[:MBIT]",
        ("--wan", "20000"): "argument --wan: '20000' is not RTT_MS[:MBIT]",
    }
    for args, said in cases.items():
        done = subprocess.run(
            [sys.executable, "-m", "secure_mirror", "sandbox", "up", *args], capture_output=True, text=True, timeout=60
        )
        assert done.returncode == 2 and said in done.stderr, (args, done.returncode, done.stderr)
        assert "Traceback" not in done.stderr
    assert (tmp_path / "a-file").read_text() == "x"


@pytest.mark.parametrize("good", ["10h", "5m", "1d12h", "36000", "10:00", "10:00:00"])
def test_the_kdc_takes_kerberos_durations(tmp_path, good):
    assert KDC(tmp_path, [], max_life=good).max_life == good


@pytest.mark.parametrize("bad", ["10h\n[realms]", "10 hours", "", "1h; x", "-5m"])
def test_the_kdc_refuses_anything_else_before_writing_kdc_conf(tmp_path, bad):
    with pytest.raises(BadInputError, match="is not a Kerberos duration such as 5m, 10h or 1d12h"):
        KDC(tmp_path, [], max_life=bad)
    assert not list(tmp_path.iterdir())
