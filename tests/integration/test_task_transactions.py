"""exactly_once with one transactional producer per task (docs/exactly-once.md, issue 26) on the sandbox: a task
whose transaction has been open for a third of ``transaction.timeout.ms`` commits what it wrote so far (records and
positions together) and begins the next one, so a task over a large backlog never outlives its transaction (the
coordinator would abort it and fence the producer: a batch of a million records over 5,000 partitions failed so on
2 CPUs). Each transaction enlists the task's planned partitions at once. Counted with a read_committed reader: each
record once, in its partition and order; the transaction markers show more than one transaction per partition in one
batch; the same records mirrored again from a fresh checkpoint are all skipped."""

from __future__ import annotations

import shutil
import subprocess

import pytest

from secure_mirror.errors import EXIT_OK
from secure_mirror.kafka import admin_ops
from secure_mirror.run.clients import watermarks
from tests.support.cluster import keys_by_partition
from tests.support.mirror_case import MirrorCase

pytestmark = [pytest.mark.sandbox, pytest.mark.spark]
PARTITIONS = 12
# a task's share takes well over a second even on a quiet machine: 120,000 once took less, and 240,000 did once the
# job sized its fetches and batches for its partitions (benchmarks/NOTES.md section 19)
RECORDS = 600_000
TRANSACTION_TIMEOUT_MS = 3000  # a task commits every second


def _run(case: MirrorCase, run_dir) -> None:
    proc = subprocess.run(case.run_argv(run_dir, "--until-caught-up"), capture_output=True, text=True, timeout=600)
    assert proc.returncode == EXIT_OK, proc.stderr[-3000:]


def test_a_task_longer_than_a_third_of_its_transaction_timeout_commits_mid_way_and_doubles_nothing(sandbox, tmp_path):
    mirror = {"delivery": {"guarantee": "exactly_once"}, "spark": {"master": "local[2]", "tasks": 2}}
    options = {"transaction.timeout.ms": TRANSACTION_TIMEOUT_MS}
    with MirrorCase(sandbox, tmp_path, mirror=mirror, target_client_options=options) as case:
        case.create({"many": PARTITIONS})
        sent = [{"key": b"k%06d" % i, "value": b"v%06d" % i * 16, "partition": i % PARTITIONS} for i in range(RECORDS)]
        for start in range(0, RECORDS, 20_000):
            case.produce("many", sent[start : start + 20_000])
        target = case.profile.target_topic(case.topic("many"))
        _run(case, tmp_path / "run")

        def held() -> dict[int, list[bytes]]:
            return sandbox.identity("target", "admin").call(keys_by_partition, target)

        expected = {p: [r["key"] for r in sent if r["partition"] == p] for p in range(PARTITIONS)}
        assert held() == expected  # each record once, in its partition, in order (read_committed)
        ends = sandbox.identity("target", "admin").call(watermarks, [target])
        markers = sum(high for _low, high in ends.values()) - RECORDS
        # one batch: one transaction per task would leave one marker per partition; mid-way commits leave more
        assert markers > PARTITIONS, f"{markers} transaction markers over {PARTITIONS} partitions: no mid-way commit"
        # the same records again from a fresh checkpoint: every one is below a committed position, so skipped
        shutil.rmtree(tmp_path / "checkpoint")
        _run(case, tmp_path / "again")
        assert held() == expected
        assert sandbox.admin("target", admin_ops.list_topics)[target] == PARTITIONS
