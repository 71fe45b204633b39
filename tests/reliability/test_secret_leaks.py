"""Issue 7 part 6: no secret leaks, end to end.

Render, pre-flight, run and verify a profile whose secrets are unique marker strings (a SCRAM password given as
``env:NAME``, the password of an encrypted TLS client key given as ``file:/path``), and the demo, whose secrets
are the sandbox's random SCRAM passwords. While each command runs, every process of its tree (the CLI, spawned
Kerberos workers, spark-submit, the Spark JVM, the job's Python) is sampled every 0.2 s: ``/proc/PID/cmdline``
and ``/proc/PID/environ``. Afterwards the markers must appear in no stdout/stderr, no log, no Spark event log
(enabled through ``mirror.spark.conf``: Spark writes its whole configuration and every query plan there), no
process argument list or environment, and only in files of mode 0600.

The one environment allowed to hold a marker is the CLI's own: that is where the user put ``env:NAME``.
A first test plants markers on purpose and proves the scanner finds them.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import stat
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from dataclasses import asdict, dataclass, field
from pathlib import Path

import pytest
import yaml

from secure_mirror.kafka import admin_ops
from secure_mirror.profile import load_profile
from secure_mirror.render import acls
from secure_mirror.run import class_cache
from secure_mirror.sandbox.profile import profile_dict
from tests.support import jvm_starts

from .conftest import STATS

pytestmark = [pytest.mark.reliability, pytest.mark.sandbox, pytest.mark.spark]
CLI = [sys.executable, "-m", "secure_mirror"]
SAMPLE_EVERY = 0.2
FILE_SCAN_EVERY = 1.0


# ---- the scanner -----------------------------------------------------------------------------------------
def _children() -> dict[int, list[int]]:
    kids: dict[int, list[int]] = {}
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            ppid = int(Path(f"/proc/{entry.name}/stat").read_text().rsplit(")", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):
            continue
        kids.setdefault(ppid, []).append(int(entry.name))
    return kids


def process_tree(root: int) -> list[int]:
    kids, found, todo = _children(), [], [root]
    while todo:
        pid = todo.pop()
        found.append(pid)
        todo.extend(kids.get(pid, []))
    return found


def _read(path: str) -> bytes | None:
    try:
        with open(path, "rb") as handle:
            return handle.read()
    except OSError:
        return None


@dataclass
class Leaks:
    """What a scan found: each finding names the marker and where it was seen."""

    findings: list[str] = field(default_factory=list)

    def add(self, marker: str, where: str) -> None:
        self.findings.append(f"marker {marker} in {where}")


class ProcessWatch:
    """Samples cmdline and environ of every process under ``root`` (and scans ``folders``) until stopped.

    Blobs are kept (deduplicated), so markers only known afterwards (the demo's) can be searched too."""

    def __init__(self, root: int, folders: list[Path] = ()):
        self.root = root
        self.folders = list(folders)
        self.blobs: dict[str, tuple[int, str, str, bytes]] = {}  # digest -> (pid, kind, cmdline head, bytes)
        # every process seen: pid -> each command line it had (a pid changes it at exec: a forked child shows its
        # parent's until it execs, spark-class's bash becomes the SparkSubmit JVM)
        self.commands: dict[int, list[str]] = {}
        self.files: dict[str, tuple[int, bytes]] = {}  # path -> (mode, content) of files seen while running
        # a child of the root still showing the root's command line: forked, not yet exec'd, its environ is a copy of
        # the root's own (where the user put env:NAME) until it execs; judged in leaks(): only a child that stays so
        # (seen twice, never exec'd: a fork that runs on as the CLI) counts
        self.before_exec: dict[int, list[bytes]] = {}
        self.root_command: str | None = None
        self.samples = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, daemon=True)

    def __enter__(self) -> ProcessWatch:
        self._thread.start()
        return self

    def __exit__(self, *_exc) -> None:
        self._stop.set()
        self._thread.join(30)

    def _loop(self) -> None:
        last_files = 0.0
        while not self._stop.is_set():
            self.sample()
            if self.folders and time.monotonic() - last_files > FILE_SCAN_EVERY:
                self._scan_files()
                last_files = time.monotonic()
            self._stop.wait(SAMPLE_EVERY)
        self.sample()
        self._scan_files()

    @property
    def command_lines(self) -> list[str]:
        """Every command line seen, of every process."""
        return [command for had in self.commands.values() for command in had]

    def sample(self) -> None:
        self.samples += 1
        for pid in process_tree(self.root):
            cmdline = _read(f"/proc/{pid}/cmdline")
            if cmdline is None:
                continue
            command = cmdline.replace(b"\0", b" ").decode(errors="replace").strip()
            head = command[:300]
            had = self.commands.setdefault(pid, [])
            if command not in had:
                had.append(command)  # whole: a JVM's main class follows its long options
            if pid == self.root:
                self.root_command = command
            for kind, blob in (("cmdline", cmdline), ("environ", _read(f"/proc/{pid}/environ") or b"")):
                if kind == "environ" and pid == self.root:
                    continue  # the CLI's own environment is where the user put env:NAME
                if kind == "environ" and command == self.root_command:
                    self.before_exec.setdefault(pid, []).append(blob)
                    continue
                digest = hashlib.sha256(kind.encode() + blob).hexdigest()
                self.blobs.setdefault(digest, (pid, kind, head, blob))

    def _scan_files(self) -> None:
        for folder in self.folders:
            for path in _walk(folder):
                try:
                    mode = stat.S_IMODE(path.lstat().st_mode)
                    content = path.read_bytes()
                except OSError:
                    continue
                self.files[str(path)] = (mode, content)

    def leaks(self, markers: dict[str, str]) -> Leaks:
        found = Leaks()
        for pid, kind, head, blob in self.blobs.values():
            for name, value in markers.items():
                if value.encode() in blob:
                    found.add(name, f"/proc/{pid}/{kind} of `{head[:160]}`")
        for pid, blobs in self.before_exec.items():
            if len(blobs) < 2 or len(self.commands.get(pid, [])) > 1:
                continue  # caught between its fork and its exec (it exec'd later, or was seen once)
            for name, value in markers.items():
                if any(value.encode() in blob for blob in blobs):
                    found.add(name, f"/proc/{pid}/environ of a child still running the root's own program")
        for path, (mode, content) in self.files.items():
            for name, value in markers.items():
                if value.encode() in content and mode != 0o600:
                    found.add(name, f"{path} (mode {mode:04o}, seen while running)")
        return found


def _walk(folder: Path):
    for dirpath, _dirs, names in os.walk(folder):
        for name in names:
            path = Path(dirpath) / name
            if path.is_file() and not path.is_symlink():
                yield path


def scan_files(folders: list[Path], markers: dict[str, str], leaks: Leaks, *, forbidden: list[Path] = ()) -> int:
    """Files holding a marker must have mode 0600; under ``forbidden`` (logs, event logs) none may hold one.
    Returns how many files were read."""
    read = 0
    for folder in [*folders, *forbidden]:
        strict = folder in forbidden
        for path in _walk(folder):
            try:
                content, mode = path.read_bytes(), stat.S_IMODE(path.stat().st_mode)
            except OSError:
                continue
            read += 1
            for name, value in markers.items():
                if value.encode() in content and (strict or mode != 0o600):
                    found = "a log or event log" if strict else f"a file of mode {mode:04o}"
                    leaks.add(name, f"{path} ({found})")
    return read


def scan_text(label: str, text: str, markers: dict[str, str], leaks: Leaks) -> None:
    for name, value in markers.items():
        if value in text:
            leaks.add(name, label)


def crash_logs_since(started: float) -> list[Path]:
    """The CLI writes unexpected errors to secure-mirror-error-*.log in the temp folder: ours, if new."""
    return [p for p in Path(tempfile.gettempdir()).glob("secure-mirror-error-*.log") if p.stat().st_mtime >= started]


@dataclass
class Ran:
    args: list[str]
    code: int
    out: str
    err: str
    watch: ProcessWatch


def run_watched(args: list[str], *, env: dict[str, str], folders: list[Path], timeout: float) -> Ran:
    process = subprocess.Popen(
        [*CLI, *args],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=folders[0] if folders else None,
    )
    with ProcessWatch(process.pid, folders) as watch:
        try:
            out, err = process.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            for pid in reversed(process_tree(process.pid)):
                try:
                    os.kill(pid, 9)
                except ProcessLookupError:
                    pass
            out, err = process.communicate(timeout=30)
            raise AssertionError(
                f"`secure-mirror {' '.join(args)}` did not finish within {timeout:.0f} s; stderr:\n{err[-3000:]}"
            ) from None
    return Ran(args, process.returncode, out, err, watch)


def check_ran(ran: Ran, markers: dict[str, str], leaks: Leaks) -> None:
    label = f"`secure-mirror {ran.args[0]}`"
    scan_text(f"the stdout of {label}", ran.out, markers, leaks)
    scan_text(f"the stderr of {label}", ran.err, markers, leaks)
    leaks.findings.extend(f"{f} (during {label})" for f in ran.watch.leaks(markers).findings)
    STATS["leak_scans"] += 1


def record(leaks: Leaks) -> None:
    STATS["leaks_found"] += len(leaks.findings)


# ---- the scanner finds what is there -----------------------------------------------------------------------
PLANT = r"""
import os, subprocess, time
marker = os.environ.pop("ROOT_ONLY")  # only the root's own environment holds it at first
argv = subprocess.Popen(["sh", "-c", "sleep 2", "sh", marker])
environ = subprocess.Popen(["sleep", "2"], env={**os.environ, "PLANTED": marker})
forked = os.fork()  # runs on as the root's program, its environment block the root's: a leak all the same
if forked == 0:
    time.sleep(4)  # long enough to be sampled more than once on a busy machine
    os._exit(0)
argv.wait(); environ.wait(); os.waitpid(forked, 0)
"""


def test_the_scanner_finds_planted_markers(tmp_path):
    marker = f"planted-{uuid.uuid4().hex}"
    markers = {"planted": marker}
    private, shared = tmp_path / "private.txt", tmp_path / "shared.txt"
    for path, mode in ((private, 0o600), (shared, 0o644)):
        path.write_text(f"x {marker} y")
        path.chmod(mode)
    (tmp_path / "event-log").mkdir()
    (tmp_path / "event-log" / "app-1").write_text(json.dumps({"Spark Properties": {"k": marker}}))
    (tmp_path / "event-log" / "app-1").chmod(0o600)

    child = subprocess.Popen([sys.executable, "-c", PLANT], env={**os.environ, "ROOT_ONLY": marker})
    with ProcessWatch(child.pid, [tmp_path]) as watch:
        child.wait(30)
    leaks = watch.leaks(markers)
    scan_files([tmp_path], markers, leaks, forbidden=[tmp_path / "event-log"])
    scan_text("a planted stderr", f"error: {marker}", markers, leaks)
    text = "\n".join(leaks.findings)

    assert any("/cmdline of `sh -c sleep 2 sh " in f for f in leaks.findings), text
    assert any("/environ of `sleep 2`" in f for f in leaks.findings), text
    assert f"{shared} (a file of mode 0644)" in text and f"{shared} (mode 0644, seen while running)" in text
    assert str(private) not in text  # 0600 is where a secret may live
    assert "event-log/app-1 (a log or event log)" in text  # ... but never in a log, whatever its mode
    assert "a planted stderr" in text
    assert "environ of `" + sys.executable not in text  # the root's own environment is the user's
    assert "environ of a child still running the root's own program" in text  # a fork that never exec'd is not
    assert len(leaks.findings) == 7, text


# ---- render, pre-flight, run, verify with marker secrets ----------------------------------------------------
def _encrypted_key(sandbox, side: str, password: str, dest: Path) -> None:
    """The sandbox's client key, encrypted (PBES1 with SHA1 and 3DES: Kafka's PEM keystore on Java 17 cannot read
    PBES2, openssl's default; the password goes through stdin, never an argument)."""
    subprocess.run(
        [
            "openssl",
            "pkcs8",
            "-topk8",
            "-v1",
            "PBE-SHA1-3DES",
            "-in",
            str(sandbox.base / side / "mirror-client.key"),
            "-out",
            str(dest),
            "-passout",
            "stdin",
        ],
        input=password.encode(),
        check=True,
        capture_output=True,
    )
    dest.chmod(0o600)


def _private_file(path: Path, data: bytes) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "wb") as handle:
        handle.write(data)


class MarkerCase:
    """A profile of its own: source GSSAPI, target SCRAM-SHA-512 as a user of its own whose password is a marker
    (``env:``), mutual TLS on both sides with an encrypted client key whose password is a marker (``file:``),
    Spark event logs on; its topics, ACLs and SCRAM user exist only inside the ``with`` block."""

    def __init__(self, sandbox, folder: Path):
        self.sb, self.folder = sandbox, folder
        tag = uuid.uuid4().hex[:10]
        self.prefix, self.user, self.env_name = f"leak{tag}", f"leak{tag}", f"SM_LEAK_SCRAM_{tag.upper()}"
        self.markers = {
            "scram password": f"scram-marker-{uuid.uuid4().hex}",
            "tls key password": f"keypw-marker-{uuid.uuid4().hex}",
        }
        self.event_logs = folder / "event-logs"
        self.event_logs.mkdir()
        _private_file(folder / "key-password", self.markers["tls key password"].encode())
        data = profile_dict(sandbox, target_mechanism="SCRAM-SHA-512", topics=f"{self.prefix}\\..*")
        data["target"]["sasl"] |= {"username": self.user, "password": f"env:{self.env_name}"}
        for side in ("source", "target"):
            _encrypted_key(sandbox, side, self.markers["tls key password"], folder / f"{side}-client.key")
            data[side]["tls"] |= {
                "certificate": str(sandbox.base / side / "mirror-client.pem"),
                "key": str(folder / f"{side}-client.key"),
                "key_password": f"file:{folder / 'key-password'}",
            }
        data["mirror"]["checkpoint_location"] = str(folder / "checkpoint")
        data["mirror"]["spark"]["conf"] = {
            "spark.eventLog.enabled": True,
            "spark.eventLog.compress": False,
            "spark.eventLog.dir": f"file://{self.event_logs}",
        }  # plain text to scan
        self.profile_path = folder / "profile.yaml"
        self.profile_path.write_text(yaml.safe_dump(data, sort_keys=False))
        self.env = {**os.environ, self.env_name: self.markers["scram password"]}
        os.environ[self.env_name] = self.markers["scram password"]  # for load_profile's check in this process
        try:
            self.profile = load_profile(self.profile_path)
        finally:
            del os.environ[self.env_name]
        self.acls = {
            "source": [asdict(b) for b in acls.source_acls(self.profile).bindings],
            "target": [asdict(b) for b in acls.target_acls(self.profile).bindings],
        }
        self.acls["target"].append({**self.acls["target"][0], "operation": "READ"})  # verify reads the target

    def __enter__(self) -> MarkerCase:
        password_file = self.folder / "scram-password"
        _private_file(password_file, self.markers["scram password"].encode())
        self.sb.admin("target", admin_ops.upsert_scram_user, self.user, str(password_file))
        password_file.unlink()
        for side in ("source", "target"):
            self.sb.admin(side, admin_ops.create_acls, self.acls[side])
        self.sb.admin("source", admin_ops.create_topics, {f"{self.prefix}.a": 2, f"{self.prefix}.b": 1})
        for topic, count in ((f"{self.prefix}.a", 120), (f"{self.prefix}.b", 40)):
            self.sb.admin(
                "source",
                admin_ops.produce,
                topic,
                [{"key": f"k{i}".encode(), "value": f"v{i}".encode()} for i in range(count)],
            )
        return self

    def __exit__(self, *_exc) -> None:
        for side in ("source", "target"):
            self.sb.admin(side, admin_ops.delete_acls, self.acls[side])
            mine = [t for t in self.sb.admin(side, admin_ops.list_topics) if self.prefix in t]
            if mine:
                self.sb.admin(side, admin_ops.delete_topics, mine)
        # the user stays (admin_ops cannot delete SCRAM users) but without ACLs it can do nothing


CLASS_CACHE = "class-cache"


def _writing_class_cache(env: dict[str, str], folder: Path) -> dict[str, str]:
    """``env`` for a run that writes the product's class-data archive (secure_mirror/run/class_cache.py) into
    ``folder``: without the tests' own archive option, the quick compiler kept."""
    options = jvm_starts.without_archive(env.get("SPARK_SUBMIT_OPTS", ""))
    return {**env, "SPARK_SUBMIT_OPTS": " ".join(options), class_cache.CACHE_VARIABLE: str(folder)}


@pytest.fixture(scope="module")
def marker_flow(sandbox, tmp_path_factory):
    folder = tmp_path_factory.mktemp("leaks")
    started = time.time()
    with MarkerCase(sandbox, folder) as case:
        profile = str(case.profile_path)
        ran = [
            run_watched(
                ["render", profile, "--out", str(folder / "rendered")], env=case.env, folders=[folder], timeout=120
            ),
            run_watched(
                ["preflight", profile, "--accept-unverified"], env=case.env, folders=[folder], timeout=300
            ),  # WRITE on the target topic still to create is unverified without --as-admin
            run_watched(
                [
                    "run",
                    profile,
                    "--until-caught-up",
                    "--skip-preflight",
                    "--run-dir",
                    str(folder / "run"),
                    "--trigger-interval",
                    "1 second",
                ],
                env=_writing_class_cache(case.env, folder / CLASS_CACHE),
                folders=[folder],
                timeout=600,
            ),
            run_watched(["verify", profile], env=case.env, folders=[folder], timeout=300),
        ]
        # every other command that acts as the mirror's identities (kafka/processes.py, identities/): lag; group
        # sync's reading (the groups the mirror may see); the consumers' ACL plan, which the mirror may not describe
        others = [
            run_watched(["lag", profile], env=case.env, folders=[folder], timeout=300),
            run_watched(["groups", profile, "--group", "leak-check"], env=case.env, folders=[folder], timeout=300),
            run_watched(["acls", profile, "--consumers"], env=case.env, folders=[folder], timeout=300),
        ]
        wrong = {**case.env, case.env_name: f"wrong-scram-marker-{uuid.uuid4().hex}"}
        refused = run_watched(["preflight", profile, "--side", "target"], env=wrong, folders=[folder], timeout=300)
        yield {
            "case": case,
            "folder": folder,
            "ran": ran,
            "refused": refused,
            "others": others,
            "wrong": wrong[case.env_name],
            "started": started,
        }


def test_render_preflight_run_and_verify_succeed_with_marker_secrets(marker_flow):
    for ran in marker_flow["ran"]:
        assert ran.code == 0, f"secure-mirror {ran.args[0]} exited {ran.code}:\n{ran.err[-3000:]}\n{ran.out[-3000:]}"
    verified = marker_flow["ran"][3].out
    assert "160" in verified, verified  # 120 + 40 records compared
    refused = marker_flow["refused"]
    assert refused.code == 1, refused.err[-3000:] + refused.out[-3000:]


def test_lag_groups_and_acls_ran_as_the_mirror(marker_flow):
    lag, groups, consumer_acls = marker_flow["others"]
    for ran in (lag, groups):
        assert ran.code == 0, f"secure-mirror {ran.args[0]} exited {ran.code}:\n{ran.err[-3000:]}\n{ran.out[-3000:]}"
    # the mirror may not describe the source's ACLs: the brokers refuse it, and no plan is drawn from nothing
    said = ("no consumer access plan", "DescribeAcls was refused (CLUSTER_AUTHORIZATION_FAILED)")
    assert consumer_acls.code == 1 and all(words in consumer_acls.err for words in said), consumer_acls.err


def test_the_run_was_really_watched(marker_flow):
    """The scan saw the Spark JVM, the job's Python and the files while they existed, so it could have failed."""
    run = marker_flow["ran"][2].watch
    commands = run.command_lines
    assert any("java" in c and "org.apache.spark.deploy.SparkSubmit" in c for c in commands), [
        c[:300] for c in commands
    ]
    assert any("run/job/__main__.py" in c and "--options-dir" in c for c in commands), [c[:300] for c in commands]
    assert run.samples > 20
    options = [p for p in run.files if p.endswith("spark/sink-options.json")]
    assert options, "the run's rendered options were never seen"
    logs = list(_walk(marker_flow["case"].event_logs))
    assert logs, "Spark wrote no event log"
    text = "".join(p.read_text(errors="replace") for p in logs)
    assert "SparkListenerEnvironmentUpdate" in text and "SparkListenerSQLExecutionStart" in text, (
        "the event log does not hold the configuration and the query plans we meant to scan"
    )
    # The write's plan is logged (the mirror's sink: its plan node names the guarantee and no setting), and Spark's
    # own redaction was at work on the configuration.
    assert "AppendData" in text and "secure-mirror sink settings (at_least_once)" in text and "(redacted)" in text, (
        "the write's plan or redaction is missing"
    )


def test_no_marker_leaks_anywhere(marker_flow, sandbox):
    case, folder = marker_flow["case"], marker_flow["folder"]
    markers = {**case.markers, "wrong scram password": marker_flow["wrong"]}
    leaks = Leaks()
    for ran in [*marker_flow["ran"], marker_flow["refused"], *marker_flow["others"]]:
        check_ran(ran, markers, leaks)
    logs = [folder / "run" / "job.log", *crash_logs_since(marker_flow["started"])]
    for log in logs:
        if log.exists():
            scan_text(str(log), log.read_text(errors="replace"), markers, leaks)
    files_read = scan_files([folder, sandbox.base], markers, leaks, forbidden=[case.event_logs])
    record(leaks)
    assert files_read > 10
    assert not leaks.findings, "secrets leaked:\n" + "\n".join(leaks.findings)


def _keys(keytab: Path) -> list[bytes]:
    """The keys in ``keytab``, as MIT's klist shows them (``-K``: ``(0x<hex>)`` after each entry)."""
    shown = subprocess.run(["klist", "-k", "-K", str(keytab)], capture_output=True, text=True, check=True).stdout
    return [bytes.fromhex(found) for found in re.findall(r"\(0x([0-9a-f]+)\)", shown)]


def test_the_class_data_archive_the_run_wrote_holds_no_secret(marker_flow, sandbox):
    """The run wrote the driver JVM's class-data archive at its exit, private, and it holds neither marker (in the
    JVM's two string encodings) nor any key of the keytabs the mirror logged in with."""
    folder = marker_flow["folder"] / CLASS_CACHE
    archives = list(folder.glob("spark-*.jsa"))
    assert len(archives) == 1, f"{folder}: {sorted(p.name for p in folder.iterdir())}"
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700 and stat.S_IMODE(archives[0].stat().st_mode) == 0o600
    content = archives[0].read_bytes()
    assert len(content) > 50_000_000, f"{archives[0]}: {len(content)} bytes, not a whole archive"
    keys = [key for side in ("source", "target") for key in _keys(sandbox.keytab(side, "mirror"))]
    assert keys
    found = [
        name
        for name, value in marker_flow["case"].markers.items()
        if value.encode() in content or value.encode("utf-16-le") in content
    ]
    found += [f"a key of a mirror keytab ({len(key)} bytes)" for key in keys if key in content]
    assert not found, f"{archives[0]} holds: {', '.join(found)}"


# ---- the demo -------------------------------------------------------------------------------------------------
def test_the_demo_leaks_none_of_the_sandbox_secrets(tmp_path):
    """``secure-mirror demo`` (its own sandbox): its secrets are random (the SCRAM passwords the sandbox writes,
    the KDC's master password), so the process tree's command lines and environments are kept and searched
    afterwards for the passwords read from the kept sandbox; the master password must not be an argument."""
    started = time.time()
    base = tmp_path / "demo"
    ran = run_watched(
        ["demo", "--dir", str(base), "--records", "200", "--keep-sandbox"],
        env=dict(os.environ),
        folders=[tmp_path],
        timeout=900,
    )
    sandbox_dir = base / "sandbox"
    try:
        assert ran.code == 0, f"the demo exited {ran.code}:\n{ran.err[-3000:]}\n{ran.out[-3000:]}"
        markers = {
            f"{side} SCRAM password": (sandbox_dir / "secrets" / f"{side}-mirror.scram-password").read_text()
            for side in ("source", "target")
        }
        assert all(len(value) >= 24 for value in markers.values())
        leaks = Leaks()
        check_ran(ran, markers, leaks)
        for log in [base / "run" / "job.log", *crash_logs_since(started)]:
            if log.exists():
                scan_text(str(log), log.read_text(errors="replace"), markers, leaks)
        scan_files([tmp_path], markers, leaks)
        for pid, kind, head, _blob in ran.watch.blobs.values():
            if kind == "cmdline" and "kdb5_util" in head and " -P " in f"{head} ":
                leaks.add("KDC master password", f"/proc/{pid}/cmdline of `kdb5_util ...`")
        record(leaks)
        commands = ran.watch.command_lines
        assert any("org.apache.spark.deploy.SparkSubmit" in c for c in commands), [c[:300] for c in commands]
        assert not leaks.findings, "secrets leaked:\n" + "\n".join(leaks.findings)
    finally:
        if (sandbox_dir / "state.json").exists():
            from secure_mirror.sandbox import Sandbox

            Sandbox.load(sandbox_dir).down()
