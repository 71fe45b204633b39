"""Issue 11 part 10: no secret in any error path.

Marker secrets go into every secret field a profile has (SCRAM and PLAIN passwords, the OAuth client secret,
the TLS key password, the truststore password), as literals (which validate refuses), as ``env:`` and
``file:`` references, and into every command-line form that takes one (``preflight --as-admin``
SIDE.password=..., an admin profile file). Then every error we can reach without a cluster is driven through
the real CLI (invalid profiles, bad references, unreadable or non-UTF-8 secret files, unreachable brokers and
token endpoints, a bogus truststore, render into bad folders, ``run`` refusals) with ``-v`` so that logs go
to stderr too, and stdout and stderr are scanned for the markers. Each case must also fail (a non-zero exit)
so that it really is an error path.
"""

from __future__ import annotations

import os
import subprocess
import sys
import uuid
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
import yaml

from secure_mirror.errors import EXIT_INTERNAL
from tests.support import profiles as pf

pytestmark = pytest.mark.reliability
CLI = [sys.executable, "-m", "secure_mirror", "-v"]
MARKER = f"LeakMarker{uuid.uuid4().hex[:12]}"  # printed below so that a failure can be reproduced
UNREACHABLE = ["127.0.0.1:1"]


def cli(*args: str, env: dict[str, str] | None = None, timeout: float = 180) -> subprocess.CompletedProcess:
    return subprocess.run(
        [*CLI, *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        env={**os.environ, **(env or {})},
        cwd=Path(__file__).resolve().parents[2],
    )


def leaks(result: subprocess.CompletedProcess, marker: str = MARKER) -> list[str]:
    """What is wrong with one error path: it did not fail, or the marker is on stdout or stderr."""
    command = " ".join(result.args[len(CLI) :])
    if result.returncode == 0:
        return [f"{command}: not an error path (exit 0)"]
    if result.returncode == EXIT_INTERNAL:  # a traceback in a log file, where a sentence naming the fix belongs
        return [f"{command}: an unexpected error (exit {EXIT_INTERNAL}), not a sentence: {result.stderr[-300:]}"]
    return [
        f"{command}: leaked on {stream}: {text[max(0, text.find(marker) - 200) :][:400]}"
        for stream, text in (("stdout", result.stdout), ("stderr", result.stderr))
        if marker in text
    ]


def assert_no_leaks(results: list[subprocess.CompletedProcess]) -> None:
    print("marker:", MARKER)
    found = [problem for result in results for problem in leaks(result)]
    assert not found, "\n".join(found)


def _profile(tmp: Path, source: dict, target: dict | None = None) -> Path:
    data = pf.profile_data(tmp, source, target)
    data["source"]["bootstrap_servers"] = UNREACHABLE
    data["target"]["bootstrap_servers"] = UNREACHABLE
    return pf.write_profile(tmp, data)


def _secret_fields(tmp: Path, ref: str) -> dict[str, dict]:
    """One source cluster per secret field, that field set to ``ref``."""
    scram = pf.password(tmp, "source", "SCRAM-SHA-512")
    scram["sasl"]["password"] = ref
    plain = pf.password(tmp, "source", "PLAIN")
    plain["sasl"]["password"] = ref
    oauth = pf.oauth(tmp, "source")
    oauth["sasl"]["client_secret"] = ref
    oauth["sasl"]["token_endpoint_url"] = "https://127.0.0.1:1/token"
    key = pf.mutual_tls(tmp, "source")
    key["tls"]["key_password"] = ref
    store = pf.password(tmp, "source", "SCRAM-SHA-512")
    (tmp / "trust.p12").write_bytes(b"not a keystore " + MARKER.encode())
    store["tls"] = {"ca": str(tmp / "trust.p12"), "truststore_password": ref}
    return {"scram": scram, "plain": plain, "oauth": oauth, "key_password": key, "truststore_password": store}


FIELDS = ["scram", "plain", "oauth", "key_password", "truststore_password"]


@pytest.mark.parametrize("field", FIELDS)
def test_a_literal_secret_in_a_secret_field_is_refused_without_echoing_it(field, tmp_path):
    profile = _profile(tmp_path, _secret_fields(tmp_path, MARKER)[field])
    assert_no_leaks(
        [
            cli(*command, str(profile))
            for command in (["validate"], ["render", "--out", str(tmp_path / "out")], ["preflight", "--timeout", "2"])
        ]
    )


@pytest.mark.parametrize("field", FIELDS)
def test_env_secrets_do_not_leak_when_brokers_are_unreachable_or_folders_are_bad(field, tmp_path):
    profile = _profile(tmp_path, _secret_fields(tmp_path, "env:SM_LEAK_SECRET")[field])
    env = {"SM_LEAK_SECRET": MARKER}
    (tmp_path / "full").mkdir()
    (tmp_path / "full" / "x").write_text("x")
    (tmp_path / "a-file").write_text("x")
    cases = [
        ["preflight", "--timeout", "2", str(profile)],
        ["preflight", "--timeout", "2", "--json", str(profile)],
        ["render", "--out", str(tmp_path / "full"), str(profile)],
        ["render", "--out", str(tmp_path / "a-file" / "out"), str(profile)],
        ["run", "--run-dir", str(tmp_path / "a-file"), str(profile)],
        ["run", "--run-dir", str(tmp_path / "run"), str(profile)],  # the pre-flight gate refuses
        ["verify", str(profile)],
    ]
    with ThreadPoolExecutor(len(cases)) as pool:  # CI time: the cases wait on unreachable brokers side by side
        results = list(pool.map(lambda command: cli(*command, env=env), cases))
    assert_no_leaks(results)


def test_bad_secret_files_are_named_not_quoted(tmp_path):
    bad = tmp_path / "bad.txt"
    bad.write_bytes(MARKER.encode() + b"\xff\xfe" + MARKER.encode())
    bad.chmod(0o600)
    results = []
    for field in FIELDS:
        profile = _profile(tmp_path, _secret_fields(tmp_path, f"file:{bad}")[field])
        results.append(cli("render", "--out", str(tmp_path / f"out-{field}"), str(profile)))
    assert_no_leaks(results)


def test_as_admin_credentials_on_the_command_line_never_come_back(tmp_path):
    profile = _profile(tmp_path, pf.password(tmp_path, "source", "SCRAM-SHA-512"), pf.gssapi(tmp_path, "target"))
    admin_file = tmp_path / "admin.yaml"
    data = yaml.safe_load(profile.read_text())
    data["source"]["sasl"]["password"] = MARKER  # a literal: refused
    admin_file.write_text(yaml.safe_dump(data))
    env = {"SM_ADMIN_SECRET": MARKER}
    forms = [
        f"source.username=admin,source.password={MARKER}",  # a literal password
        f"source.username=admin,source.pasword={MARKER}",  # a misspelt key
        f"source.password={MARKER}",  # no username
        f"target.password={MARKER}",  # a password for a Kerberos side
        "source.username=admin,source.password=env:SM_ADMIN_SECRET",  # good form, unreachable broker
        f"source.username=admin,source.password=file:{tmp_path / 'missing'}",  # no such file
        f"{MARKER}",  # neither a file nor KEY=VALUE
        str(admin_file),
    ]
    assert_no_leaks([cli("preflight", "--timeout", "2", "--as-admin", form, str(profile), env=env) for form in forms])
