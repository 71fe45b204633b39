"""``secure-mirror run`` when things go wrong, against the sandbox: a target broker that dies mid-run
(``--supervise`` restarts the job), Ctrl-C, a source topic deleted during the run, and a failed pre-flight
that blocks the run. Each ends with one clear sentence, a documented exit code, and nothing lost."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from secure_mirror.errors import EXIT_FAILED, EXIT_INTERRUPTED, EXIT_OK, EXIT_REFUSED
from secure_mirror.kafka import admin_ops
from secure_mirror.run.launcher import run_mirror
from secure_mirror.sandbox import procs
from secure_mirror.sandbox.waiting import caught_up, wait_for
from secure_mirror.verify import verify
from tests.support.cluster import consume_to_end
from tests.support.mirror_case import MirrorCase, records

pytestmark = [pytest.mark.sandbox, pytest.mark.spark]
CLI = [sys.executable, "-m", "secure_mirror"]


class Run:
    """``secure-mirror run`` in a session of its own (as a terminal starts it), output in files we can watch."""

    def __init__(self, case: MirrorCase, folder: Path, *args: str):
        self.out, self.err = folder / "cli.out", folder / "cli.err"
        with open(self.out, "w") as out, open(self.err, "w") as err:
            self.process = subprocess.Popen(
                [
                    *CLI,
                    "run",
                    str(case.profile_path),
                    "--skip-preflight",
                    "--trigger-interval",
                    "1 second",
                    "--status-interval",
                    "5",
                    "--run-dir",
                    str(folder / "run"),
                    *args,
                ],
                stdout=out,
                stderr=err,
                stdin=subprocess.DEVNULL,
                start_new_session=True,
            )

    def stderr(self) -> str:
        return self.err.read_text(errors="replace")

    def wait(self, timeout: float = 180) -> int:
        try:
            return self.process.wait(timeout)
        except subprocess.TimeoutExpired:
            # the test failed already; leave no job behind (the CLI stops its job on SIGTERM)
            os.killpg(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(120)
            except subprocess.TimeoutExpired:
                self.process.kill()
            raise

    def stop(self, sig: int = signal.SIGTERM) -> int:
        if self.process.poll() is None:
            os.killpg(self.process.pid, sig)
        return self.wait()

    def __enter__(self) -> Run:
        return self

    def __exit__(self, *_exc) -> None:
        if self.process.poll() is None:
            self.stop(signal.SIGTERM)


def _target_records(sandbox, case: MirrorCase, name: str) -> list[dict]:
    """Every record of the target copy, to each partition's end (a record more than expected is seen)."""
    return sandbox.admin("target", consume_to_end, f"src.{case.topic(name)}")


@pytest.mark.slow  # about 2-3 minutes: three Spark starts and a broker restart
def test_supervise_restarts_the_job_while_the_target_broker_is_down(sandbox, tmp_path):
    # Short client timeouts make the dead broker fail the job within seconds (a retryable failure) instead of the
    # producer and the admin client waiting minutes for it; ride_through_seconds 0 gives up at the first failure, as
    # every job did before it rode through (tests/reliability/test_ride_through.py: the same outage ridden through).
    with MirrorCase(
        sandbox,
        tmp_path,
        mirror={"delivery": {"delivery_timeout_ms": 15000}, "ride_through_seconds": 0},
        target_client_options={"request.timeout.ms": 5000, "default.api.timeout.ms": 10000},
    ) as case:
        case.create({"r": 2})
        case.produce("r", records(40, 2, "r"))
        topic = case.topic("r")
        with Run(case, tmp_path, "--supervise", "--max-restarts", "4") as run:
            try:
                wait_for(lambda: caught_up(case.profile, {topic}), 240, "the first batch")
                sandbox.broker("target").stop(hard=True)
                case.produce("r", records(30, 2, "r2"))  # the next batch cannot be delivered
                # ... and the restarted job cannot look the target topic up: a second restart
                wait_for(lambda: "restart 2 of 4" in run.stderr(), 300, "two restarts by --supervise", step=2)
            finally:
                if not procs.pid_alive(sandbox.state["pids"]["target"]):
                    sandbox.start_broker("target")
            wait_for(lambda: caught_up(case.profile, {topic}), 300, "the restarted job to catch up", step=2)
            code = run.stop(signal.SIGTERM)
        err = run.stderr()
        assert code == EXIT_OK, err[-3000:]
        reasons = re.findall(r"secure-mirror run: the job failed \((.+)\); restart (\d) of 4 in (\d+) s", err)
        assert [(n, pause) for _, n, pause in reasons] == [("1", "2"), ("2", "4")], err
        assert reasons[0][0].startswith("the mirror query failed: TimeoutException: Expiring "), err
        # the target topic's look-up timed out: retryable (not "check the DESCRIBE ACL", exit 5)
        assert reasons[1][0].startswith(
            "the mirror query failed: TimeoutException: Timed out waiting for a node assignment"
        ), err
        assert "Traceback" not in err
        result = verify(case.profile)
        assert result.ok and result.to_dict()["source_records"] == 70, result.text()


def test_ctrl_c_stops_the_job_with_130_and_a_resume_loses_nothing(sandbox, tmp_path):
    with MirrorCase(sandbox, tmp_path) as case:
        case.create({"c": 3})
        case.produce("c", records(50, 3, "c"))
        with Run(case, tmp_path) as run:
            wait_for(lambda: caught_up(case.profile, {case.topic("c")}), 240, "the first batch")
            case.produce("c", records(30, 3, "c2"))  # in flight when Ctrl-C comes, or left for the resume
            code = run.stop(signal.SIGINT)  # to the process group, as a terminal delivers Ctrl-C
        err = run.stderr()
        assert code == EXIT_INTERRUPTED, err[-3000:]
        assert "secure-mirror run: stopped on Ctrl-C; run it again to resume from the checkpoint" in err
        assert "Traceback" not in err
        case.produce("c", records(20, 3, "c3"))
        assert (
            run_mirror(case.profile, until_caught_up=True, skip_preflight=True, run_dir=str(tmp_path / "resume"))
            == EXIT_OK
        )
        result = verify(case.profile)
        assert result.ok and result.to_dict()["source_records"] == 100, result.text()


def test_source_topic_deleted_during_the_run_is_refused_and_nothing_is_skipped(sandbox, tmp_path):
    with MirrorCase(sandbox, tmp_path) as case:
        case.create({"d": 2})
        case.produce("d", records(40, 2, "d"))
        with Run(case, tmp_path) as run:
            wait_for(lambda: caught_up(case.profile, {case.topic("d")}), 240, "the first batch")
            sandbox.admin("source", admin_ops.delete_topics, [case.topic("d")])
            code = run.wait(240)
        err = run.stderr()
        assert code == EXIT_REFUSED, err[-3000:]
        assert (
            "secure-mirror run: source records the checkpoint expects are gone (a source topic was deleted or "
            "truncated)" in err
        )
        assert "Nothing was skipped" in err and "Traceback" not in err
        # what was mirrored before the deletion is intact on the target
        got = _target_records(sandbox, case, "d")
        assert sorted(r["value"] or b"" for r in got) == sorted(r["value"] or b"" for r in records(40, 2, "d"))


def test_target_topic_deleted_during_the_run_is_refused_at_once(sandbox, tmp_path):
    """A deleted target topic is not a bad minute: the producer's UNKNOWN_TOPIC_OR_PARTITION is retriable, but the
    deleted-topic watch asks the target and stops the job (exit 5) long before mirror.ride_through_seconds."""
    with MirrorCase(sandbox, tmp_path) as case:
        case.create({"g": 2})
        case.produce("g", records(40, 2, "g"))
        with Run(case, tmp_path) as run:
            wait_for(lambda: caught_up(case.profile, {case.topic("g")}), 240, "the first batch")
            target = case.profile.target_topic(case.topic("g"))
            sandbox.admin("target", admin_ops.delete_topics, [target])
            deleted = time.monotonic()
            case.produce("g", records(20, 2, "after"))
            code = run.wait(240)
            took = time.monotonic() - deleted
        err = run.stderr()
        assert code == EXIT_REFUSED, err[-3000:]
        assert f"the target lost a topic the job writes while it ran: {target}." in err, err[-3000:]
        assert "new checkpoint location" in err and "Traceback" not in err
        assert took < 120, f"stopped {took:.0f} s after the deletion"  # the ride would have lasted 1800 s
        print(f"the job stopped {took:.0f} s after its target topic was deleted")


def test_failed_preflight_blocks_run_and_writes_nothing(sandbox, tmp_path):
    case = MirrorCase(sandbox, tmp_path)
    case.acls["source"] = [
        b for b in case.acls["source"] if not (b["resource_type"] == "TOPIC" and b["operation"] == "READ")
    ]
    with case:
        case.create({"p": 1})
        case.produce("p", records(5, 1, "p"))
        run_dir = tmp_path / "run"
        proc = subprocess.run(
            [*CLI, "run", str(case.profile_path), "--until-caught-up", "--run-dir", str(run_dir)],
            capture_output=True,
            text=True,
            timeout=300,
            env={**os.environ, "COLUMNS": "200"},
        )
        assert proc.returncode == EXIT_FAILED, proc.stdout[-3000:] + proc.stderr[-3000:]
        failing = [line for line in proc.stdout.splitlines() if "source.acl.topic-read" in line]
        assert failing and "fail" in failing[0], proc.stdout
        assert (
            "secure-mirror run: pre-flight failed, the mirror was not started (use --skip-preflight to "
            "override)" in proc.stderr
        )
        # nothing written: no run folder (so no Spark job was started), no checkpoint, no target topic
        assert not run_dir.exists()
        assert not Path(case.profile.mirror.checkpoint_location).exists()
        assert not [t for t in sandbox.admin("target", admin_ops.list_topics) if case.prefix in t]
