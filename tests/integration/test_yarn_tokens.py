"""Executors without keytabs: the mirror on the sandbox's YARN (client mode) with ``executor_auth:
delegation_token`` on both sides. Pre-flight proves each identity gets a token that logs in; the job runs through
several token lifetimes (the sandbox's brokers issue tokens that live ``TOKEN_EXPIRY_MS`` and remove expired ones
every few seconds), Spark's driver obtains new tokens and the sink replaces its producers, nothing is lost (verify
passes, and confluent-kafka readers find the source's records on the target); and every container's folder, launch
script, environment and the application's HDFS staging folder hold no keytab bytes and no password of the sandbox.

The session's sandbox re-authenticates SCRAM connections (``connections.max.reauth.ms``, KIP-368; tests/conftest.py),
so the brokers end a token's session when the token expires: a client kept past its token's life must authenticate
again with the expired token, or open new connections with it, and the broker refuses both ("Failed
(re-)authentication" in its log). The target broker's log must therefore show no failed authentication while the job
runs: the sink writes there, and a sink that kept its transactional producers past their token was refused there
(docs/delegation-tokens.md). The source's refusals are printed, not judged. The job runs this checkout's sink
(secure_mirror/sandbox/sink_jar.py), on the executors too."""

from __future__ import annotations

import os
import re
import subprocess
import time
import uuid
import zipfile
from pathlib import Path

import pytest

from secure_mirror.preflight.runner import run_preflight
from secure_mirror.run.control_folder import ControlFolder
from secure_mirror.run.lag import lag
from secure_mirror.sandbox import procs
from secure_mirror.sandbox.kafka import TOKEN_EXPIRY_MS
from secure_mirror.sandbox.profile import yarn_profile_dict
from secure_mirror.sandbox.sink_jar import sink_conf
from secure_mirror.sandbox.waiting import wait_for
from secure_mirror.verify import verify
from tests.support.cluster import assert_same_records
from tests.support.mirror_case import MirrorCase, records

# CI time: the module is slow (1d870a0's CI overran 90 min); docs/testing.md#what-ci-leaves-to-slow says what CI keeps.
pytestmark = [pytest.mark.sandbox, pytest.mark.spark, pytest.mark.hadoop, pytest.mark.slow]
# (guarantee, token lifetimes the run outlives, source partitions). exactly_once keeps a transactional producer per
# source partition between batches, and those must be replaced when a new token arrives: in the default selection
# through two lifetimes of one partition (a sink that kept its producers past their token failed it: the brokers
# refused their re-authentication and the tasks failed), under slow (-m "hadoop and slow") through three of two.
# at_least_once (the same sink, its producers idempotent, not transactional) is under slow too, for CI's time: 138 s.
CASES = [
    pytest.param("at_least_once", 2, 2, id="at_least_once", marks=pytest.mark.slow),
    pytest.param("exactly_once", 2, 1, id="exactly_once-two-lifetimes"),
    pytest.param("exactly_once", 3, 2, id="exactly_once", marks=pytest.mark.slow),
]


def _token_case(sandbox, tmp_path, guarantee: str) -> MirrorCase:
    data = yarn_profile_dict(sandbox, "client", "delegation_token")
    sink = sink_conf(tmp_path)  # this checkout's sink, on the driver and (one machine: the same path) the executors
    if sink:
        data["mirror"]["spark"].setdefault("conf", {}).update(
            {**sink, "spark.executor.extraClassPath": sink["spark.driver.extraClassPath"]}
        )
    location = f"{sandbox.hadoop().default_fs}/user/mirror/checkpoints/{uuid.uuid4().hex[:8]}-tokens"
    return MirrorCase(
        sandbox,
        tmp_path,
        mirror={
            "spark": data["mirror"]["spark"],
            "checkpoint_location": location,
            "delivery": {"guarantee": guarantee},
        },
        hadoop=data["hadoop"],
        executor_auth="delegation_token",
    )


def _secrets(sandbox, case: MirrorCase) -> dict[str, bytes]:
    """What must not be in any container: every keytab the profile names (whole, and each key's bytes), the
    Hadoop keytab, and every password and client secret of the sandbox."""
    found: dict[str, bytes] = {}
    keytabs = {case.profile.source.sasl.keytab, case.profile.target.sasl.keytab, case.profile.hadoop.keytab}
    for path in keytabs:
        data = Path(path).read_bytes()
        found[f"keytab {path}"] = data
        for index, key in enumerate(_keytab_keys(data)):
            found[f"key {index} of {path}"] = key
    for path in [*sorted((sandbox.base / "secrets").iterdir()), *sandbox.base.glob("*/delegation-token.key")]:
        if path.is_file() and (value := path.read_bytes().strip()):
            found[f"secret {path.relative_to(sandbox.base)}"] = value
    return found


def _keytab_keys(data: bytes) -> list[bytes]:
    """The key blocks of an MIT keytab (version 0x502): what a copy in any other wrapping would still hold."""
    keys, at = [], 2
    while at + 4 <= len(data):
        size = int.from_bytes(data[at : at + 4], "big", signed=True)
        at += 4
        if size <= 0:
            at += -size
            continue
        entry, at = data[at - 0 : at + size], at + size
        count, pos = int.from_bytes(entry[0:2], "big"), 2
        pos += 2 + int.from_bytes(entry[pos : pos + 2], "big")  # realm
        for _ in range(count):
            pos += 2 + int.from_bytes(entry[pos : pos + 2], "big")
        pos += 4 + 4 + 1 + 2  # name type, timestamp, vno8, enctype
        length = int.from_bytes(entry[pos : pos + 2], "big")
        keys.append(entry[pos + 2 : pos + 2 + length])
    return [k for k in keys if len(k) >= 16]


def _contents(path: Path):
    """A file's bytes, and each member's bytes when it is a zip (Spark ships its configuration zipped)."""
    data = path.read_bytes()
    yield str(path), data
    if zipfile.is_zipfile(path):
        with zipfile.ZipFile(path) as archive:
            for name in archive.namelist():
                yield f"{path}!{name}", archive.read(name)


def _leaks(folders: list[Path], secrets: dict[str, bytes]) -> tuple[int, list[str]]:
    scanned, leaks = 0, []
    for folder in folders:
        found = [folder] if folder.is_file() else folder.rglob("*")
        for path in sorted(p for p in found if p.is_file() and not p.is_symlink()):
            try:
                items = list(_contents(path))
            except OSError:
                continue
            for where, data in items:
                scanned += 1
                leaks += [f"{what} in {where}" for what, value in secrets.items() if value in data]
                if data[:2] == b"\x05\x02" and where.endswith(".keytab"):
                    leaks.append(f"a keytab file: {where}")
    return scanned, leaks


def _container_processes(local_dir: Path) -> list[int]:
    """Processes whose working folder is a container folder of the NodeManager (the AM, executors, Python)."""
    pids = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if str(local_dir) in os.readlink(entry / "cwd"):
                    pids.append(int(entry.name))
            except OSError:
                continue
    return pids


def _environment_leaks(pids: list[int], secrets: dict[str, bytes]) -> list[str]:
    leaks = []
    for pid in pids:
        try:
            environ = Path(f"/proc/{pid}/environ").read_bytes()
        except OSError:
            continue
        leaks += [
            f"{what} in the environment of container process {pid}" for what, v in secrets.items() if v in environ
        ]
        leaks += [f"KRB5_KTNAME in process {pid}" for line in environ.split(b"\0") if line.startswith(b"KRB5_KTNAME=")]
    return leaks


FAILED_LOGIN = re.compile(r"Failed (re-)?authentication with .*")


def _refusals(sandbox, since: dict[str, int]) -> list[str]:
    """What each side's broker logged of failed (re-)authentications after ``since`` (its log's sizes then)."""
    found = []
    for side, start in since.items():
        text = procs.log_since(sandbox.broker(side).log, start)
        found += [f"{side}: {m.group(0)[:300]}" for m in FAILED_LOGIN.finditer(text)]
    return found


def _log_sizes(sandbox) -> dict[str, int]:
    return {side: sandbox.broker(side).log.stat().st_size for side in ("source", "target")}


def _committed(case: MirrorCase) -> int:
    return sum(r.offset or 0 for r in lag(case.profile))


def _staging(hadoop, into: Path) -> Path:
    """A copy of the application's HDFS staging folder (Spark deletes it when the application ends)."""
    listing = hadoop.fs_shell("-ls", "/user/mirror/.sparkStaging")
    apps = re.findall(r"(/user/mirror/\.sparkStaging/application_\S+)", listing)
    assert apps, listing
    into.mkdir()
    for app in apps:
        hadoop.fs_shell("-copyToLocal", app, str(into))
    return into


@pytest.mark.parametrize(("guarantee", "lifetimes", "partitions"), CASES)
def test_token_mode_outlives_several_token_lifetimes_and_no_keytab_reaches_a_container(
    sandbox, hadoop, tmp_path, guarantee, lifetimes, partitions
):
    reauth = sandbox.state.get("reauth_ms")
    mechanisms = sandbox.state.get("reauth_mechanisms")
    assert reauth and (mechanisms is None or "SCRAM-SHA-512" in mechanisms), (
        "this sandbox's brokers do not re-authenticate SCRAM connections, so a producer kept past its token would go "
        "on writing: start it with `secure-mirror sandbox up --hadoop --reauth-ms 600000`"
    )
    started = time.monotonic()
    with _token_case(sandbox, tmp_path, guarantee) as case:
        report = run_preflight(case.profile)
        for side in ("source", "target"):
            (check,) = [c for c in report.checks if c.id == f"{side}.kafka.delegation_token"]
            assert check.status == "pass", check
        print(next(c.finding for c in report.checks if c.id == "target.kafka.delegation_token"))

        case.create({"s": partitions})
        logged = _log_sizes(sandbox)  # pre-flight's token logins are done
        run_dir = tmp_path / "run"
        launcher = case.start_streaming(run_dir)
        produced = 0
        try:
            wait_for(lambda: ControlFolder(run_dir).job_started(), 240, "the job on YARN", step=2)
            local = hadoop.base / "nm-local"
            wait_for(lambda: _container_processes(local), 120, "the containers", step=2)
            staging = _staging(hadoop, tmp_path / "staging")
            case.produce("s", records(10, partitions, "first"))  # the job is mirroring before the clock starts
            produced = 10
            wait_for(lambda: _committed(case) >= produced, 300, "the first records committed", step=2)
            run_start, batch, environment = time.monotonic(), 0, []
            while time.monotonic() - run_start < lifetimes * TOKEN_EXPIRY_MS / 1000 + 5:
                case.produce("s", records(10, partitions, f"b{batch}"))
                produced, batch = produced + 10, batch + 1
                if batch == 3:  # the executors are up: read every container process's environment
                    pids = _container_processes(local)
                    environment = _environment_leaks(pids, _secrets(sandbox, case))
                    print(f"{len(pids)} container processes' environments read")
                time.sleep(4)
            wait_for(lambda: _committed(case) >= produced, 180, f"{produced} records committed", step=3)
            result = verify(case.profile)
            assert result.ok and result.to_dict()["source_records"] == produced, result.text()
            admins = [sandbox.identity(side, "admin") for side in ("source", "target")]
            assert_same_records(*admins, case.topic("s"), case.profile.target_topic(case.topic("s")), produced)
            refused = _refusals(sandbox, logged)
        finally:
            ControlFolder(run_dir).request_stop()
            launcher.terminate()
            try:
                launcher.wait(timeout=120)
            except subprocess.TimeoutExpired:
                launcher.kill()
                launcher.wait()

        apps = [p.name for p in staging.iterdir()]
        executor_logs = "\n".join(
            p.read_text(errors="replace") for app in apps for p in (hadoop.base / "nm-logs" / app).rglob("stderr")
        )
        renewals = executor_logs.count("SparkHadoopUtil: Updating delegation tokens for current user.")
        retired = executor_logs.count("logged in with an older delegation token")
        print(
            f"{produced} records over {time.monotonic() - run_start:.0f} s, token lifetime {TOKEN_EXPIRY_MS} ms; "
            f"new tokens received by the containers {renewals} times; sink clients retired {retired} times"
        )
        print(f"failed authentications the brokers logged during the run: {len(refused)}", *refused, sep="\n  ")
        # The sink's clients write to the target: a client refused there logged in with a token that had expired.
        assert not [r for r in refused if r.startswith("target")], "\n".join(refused[:20])
        assert renewals > lifetimes and retired >= max(1, lifetimes - 1), executor_logs[-4000:]

        secrets = _secrets(sandbox, case)
        # This application's own folders only: the session's Hadoop sandbox also ran keytab-mode applications
        # (test_yarn), whose localized keytabs stay in the NodeManager's caches.
        own = [f for app in apps for f in [*local.glob(f"usercache/*/appcache/{app}"), local / "nmPrivate" / app]]
        logs = [hadoop.base / "nm-logs" / app for app in apps]
        # ... and what its containers link to in those caches (the files localized for this application)
        linked = sorted({p.resolve() for folder in own for p in folder.rglob("*") if p.is_symlink() and p.exists()})
        scanned, leaks = _leaks([*own, *linked, *logs, staging], secrets)
        print(
            f"scanned {scanned} files and archive members, {len(secrets)} secret values, "
            f"{len(_container_processes(local))} live container processes after the run"
        )
        assert scanned > 20 and not leaks + environment, leaks + environment
        assert any(list(folder.rglob("launch_container.sh")) for folder in own), (
            "no container launch script was scanned"
        )
    print(f"token-mode test took {time.monotonic() - started:.0f} s")
