"""Support of the run/verify integration tests (no tests here): a profile per test (own topics, own checkpoint), its
granted on the sandbox and revoked afterwards, and its topics deleted afterwards."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import uuid
from dataclasses import asdict
from pathlib import Path

import yaml

from secure_mirror.errors import EXIT_OK
from secure_mirror.kafka import admin_ops
from secure_mirror.kafka.processes import pid_alive
from secure_mirror.profile import load_profile
from secure_mirror.render import acls
from secure_mirror.run.control_folder import ControlFolder
from secure_mirror.sandbox.profile import profile_dict
from secure_mirror.sandbox.waiting import wait_for
from tests.support.cluster import group_acls, topic_acls

CLI = [sys.executable, "-m", "secure_mirror"]


class MirrorCase:
    def __init__(
        self,
        sandbox,
        folder: Path,
        *,
        target_mechanism: str = "GSSAPI",
        source_mechanism: str = "GSSAPI",
        create_allowed: bool = True,
        withhold: frozenset[str] = frozenset(),
        mirror: dict | None = None,
        target_client_options: dict | None = None,
        shared_keytab: Path | None = None,
        hadoop: dict | None = None,
        executor_auth: str = "keytab",
    ):
        self.sb = sandbox
        self.prefix = f"t{uuid.uuid4().hex[:8]}"
        data = profile_dict(
            sandbox, target_mechanism=target_mechanism, source_mechanism=source_mechanism, topics=f"{self.prefix}\\..*"
        )
        data["mirror"]["checkpoint_location"] = str(folder / "checkpoint")
        data["mirror"].update(mirror or {})
        data["source"]["client_options"] = {"metadata.max.age.ms": 1000}
        data["target"]["client_options"] = target_client_options or {}
        if hadoop is not None:  # the profile's hadoop section (a run on YARN, a checkpoint on HDFS)
            data["hadoop"] = hadoop
        if executor_auth != "keytab":  # both sides' executors log in this way (delegation_token)
            data["source"]["executor_auth"] = data["target"]["executor_auth"] = executor_auth
        if shared_keytab is not None:  # one keytab file holding both sides' keys
            data["source"]["sasl"]["keytab"] = data["target"]["sasl"]["keytab"] = str(shared_keytab)
        self.profile_path = folder / "profile.yaml"
        self.profile_path.write_text(yaml.safe_dump(data, sort_keys=False))
        self.profile = load_profile(self.profile_path)
        self.acls = {
            "source": [asdict(b) for b in acls.source_acls(self.profile).bindings],
            "target": [
                asdict(b)
                for b in acls.target_acls(self.profile).bindings
                if (create_allowed or b.operation != "CREATE") and b.operation not in withhold
            ],
        }
        self.acls["target"].append({**self.acls["target"][0], "operation": "READ"})  # verify reads the target
        self.topics: dict[str, list[str]] = {"source": [], "target": []}

    def topic(self, name: str) -> str:
        return f"{self.prefix}.{name}"

    def __enter__(self) -> MirrorCase:
        for side in ("source", "target"):
            self.sb.admin(side, admin_ops.create_acls, self.acls[side])
        return self

    def __exit__(self, *_exc) -> None:
        for side in ("source", "target"):
            self.sb.admin(side, admin_ops.delete_acls, self.acls[side])
            existing = self.sb.admin(side, admin_ops.list_topics)
            mine = [t for t in existing if self.prefix in t]
            if mine:
                self.sb.admin(side, admin_ops.delete_topics, mine)

    def create(self, topics: dict[str, int]) -> None:
        """The source topics (name -> partitions), as many replicas as the sandbox's topics for mirroring have."""
        topics = {self.topic(t): n for t, n in topics.items()}
        self.sb.admin("source", admin_ops.create_topics, topics, replication_factor=self.sb.replication_factor)

    def produce(self, name: str, records: list[dict], side: str = "source") -> None:
        self.sb.admin(side, admin_ops.produce, name if side == "target" else self.topic(name), records)

    def run_argv(self, run_dir: Path, *extra: str) -> list[str]:
        """``secure-mirror run`` of this case's profile into ``run_dir`` (pre-flight is proven by its own tests)."""
        return [*CLI, "run", str(self.profile_path), "--skip-preflight", "--run-dir", str(run_dir), *extra]

    def start_streaming(self, run_dir: Path) -> subprocess.Popen:
        """The mirror running until stopped, a batch a second, its output discarded (the run folder keeps the logs)."""
        return subprocess.Popen(
            self.run_argv(run_dir, "--trigger-interval", "1 second"),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )


def records(count: int, partitions: int, tag: str) -> list[dict]:
    """Keys, headers (repeated names, empty and binary values) and some null values."""
    return [
        {
            "key": f"{tag}-k{i}".encode() if i % 7 else None,
            "value": None if i % 5 == 0 else f"{tag}-v{i}".encode(),
            "headers": [("h", b"x"), ("seq", str(i).encode()), ("bin", bytes([0, 255, i % 256]))] if i % 3 else None,
            "partition": i % partitions,
        }
        for i in range(count)
    ]


def kill_when(launcher: subprocess.Popen, run_dir: Path, ready, what: str, step: float) -> None:
    """Once ``ready()`` holds, SIGKILL the run's driver and spark-submit (their process group), as a crash would: the
    run must end with a failure; the launcher is never left running."""
    try:
        wait_for(ready, 300, what, step=step)
        driver = ControlFolder(run_dir).pid()
        os.killpg(os.getpgid(driver), signal.SIGKILL)
        assert launcher.wait(timeout=120) != EXIT_OK
    finally:
        if launcher.poll() is None:
            launcher.kill()
            launcher.wait()
        driver = ControlFolder(run_dir).pid()  # a driver the launcher started is not ended with it
        if driver is not None and pid_alive(driver):
            with contextlib.suppress(ProcessLookupError):
                os.killpg(os.getpgid(driver), signal.SIGKILL)


def with_groups(case: MirrorCase, group: str, *more: str, include: str | None = None) -> None:
    """The case's profile with ``mirror.groups`` selecting ``group`` (or ``include``, a prefix ``p.*`` selecting
    ``group`` and ``more``), and the grants render gives it, plus what group sync needs of each group unless render
    grants it already (the ACL part of issue 28)."""
    data = yaml.safe_load(case.profile_path.read_text())
    data["mirror"]["groups"] = {"include": include or group, "sync_interval_seconds": 2}
    # An alias of its own: the group prefix, the offset map and checkpoints topics (deleted with the case's topics)
    # and their grants are the case's alone, whatever other cases on the sandbox grant and revoke meanwhile.
    data["source"]["alias"] = f"fo-{case.prefix}"
    case.profile_path.write_text(yaml.safe_dump(data, sort_keys=False))
    case.profile = load_profile(case.profile_path)
    case.acls = {
        "source": [asdict(b) for b in acls.source_acls(case.profile).bindings],
        "target": [asdict(b) for b in acls.target_acls(case.profile).bindings],
    }
    principal = case.acls["target"][0]["principal"]
    case.acls["target"].append({**case.acls["target"][0], "operation": "READ"})  # verify reads the target
    named = [acl for name in (group, *more) for acl in group_acls(name, principal)]
    wanted = {
        "source": [{**acl, "operation": "DESCRIBE"} for acl in named],
        "target": [{**acl, "operation": op} for acl in named for op in ("READ", "DESCRIBE")],
    }
    wanted["source"] += topic_acls(case.prefix, "DESCRIBE_CONFIGS", principal=principal, pattern="PREFIXED")
    for side, grants in wanted.items():
        case.acls[side] += [acl for acl in grants if acl not in case.acls[side]]
