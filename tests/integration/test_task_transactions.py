"""exactly_once with one transactional producer per task (docs/exactly-once.md, issue 26) on the sandbox: a task
whose transaction has been open for a third of ``transaction.timeout.ms`` commits what it wrote so far (records and
positions together) and begins the next one, so a task over a large backlog never outlives its transaction (the
coordinator would abort it and fence the producer: a batch of a million records over 5,000 partitions failed so on
2 CPUs). Each transaction enlists the task's planned partitions at once. Counted with a read_committed reader: each
record once, in its partition and order; the transaction markers show more than one transaction per partition in one
batch; the same records mirrored again from a fresh checkpoint are all skipped. A task reads the positions it needs
before its transaction begins: a read that waits (here on another transaction's pending offsets in the position
group) never runs out the transaction's timeout."""

from __future__ import annotations

import os
import shutil
import subprocess
import time

import pytest

from secure_mirror.errors import EXIT_OK
from secure_mirror.kafka import admin_ops
from secure_mirror.run.clients import watermarks
from tests.support.cluster import keys_by_partition
from tests.support.mirror_case import MirrorCase
from tests.support.spawned import READY, Spawned

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


HOLD_MS = 20_000  # the holder's transaction: aborted by its coordinator 20 to 30 s after it began (a sweep every 10 s)


def _hold_pending_offsets(env: dict, conf: dict, group: str, topic: str, stop, out) -> None:
    """A :class:`Spawned` loop, as the target's admin: a transaction holding an offset of ``group`` pending (a read of
    the group's stable offsets waits while it is open), left open until its coordinator aborts it after HOLD_MS."""
    os.environ.update(env)
    from confluent_kafka import Consumer, Producer, TopicPartition

    producer = Producer({**conf, "transactional.id": f"{group}.holder", "transaction.timeout.ms": HOLD_MS})
    producer.init_transactions(60)
    metadata = Consumer({**conf, "group.id": group}).consumer_group_metadata()
    # Kafka's group coordinator holds a stable read back for a partition with a committed offset and a pending one:
    # position 0 first (nothing mirrored yet: the job starts where it would), then 1 in a transaction left open
    for position, commit in ((0, True), (1, False)):
        producer.begin_transaction()
        producer.send_offsets_to_transaction([TopicPartition(topic, 0, position)], metadata, 60)
        if commit:
            producer.commit_transaction(60)
    out.send(READY)
    stop.wait(300)
    out.send({})


# CI time: slow (it waits out a transaction timeout; CI overran 90 min at 1d870a0); CI keeps the mid-way commit case.
@pytest.mark.slow
def test_a_position_read_that_waits_out_the_transaction_timeout_comes_before_the_transaction(sandbox, tmp_path):
    """A position that another transaction holds pending (here in the topic's position group, for 20 to 30 s) is
    waited for, never read as no position: Kafka's admin client leaves such a partition out of its answer, and the
    sink once took that for "nothing mirrored yet" (a task would write again what that transaction commits). The
    wait outlasts the job's transaction timeout of 3 s, and the task reads positions before its transaction begins,
    so the wait cannot run the transaction out."""
    mirror = {"delivery": {"guarantee": "exactly_once"}, "spark": {"master": "local[2]", "tasks": 2}}
    options = {"transaction.timeout.ms": TRANSACTION_TIMEOUT_MS}
    partitions = 4
    with MirrorCase(sandbox, tmp_path, mirror=mirror, target_client_options=options) as case:
        case.create({"held": partitions})
        sent = [{"key": b"k%05d" % i, "value": b"v", "partition": i % partitions} for i in range(2000)]
        case.produce("held", sent)
        source = case.topic("held")
        target = case.profile.target_topic(source)
        sandbox.admin(
            "target", admin_ops.create_topics, {target: partitions}, replication_factor=sandbox.replication_factor
        )
        group = f"{case.profile.transactional_prefix}topic#{source}"  # the sink's position group of a kept topic
        holder = Spawned(sandbox, "target", _hold_pending_offsets, group, target, name="the holding transaction")
        try:
            holder.wait_ready(90)
            began = time.monotonic()
            _run(case, tmp_path / "run")
            took = time.monotonic() - began
            holder.stop(60)
        finally:
            holder.kill()
        held = sandbox.identity("target", "admin").call(keys_by_partition, target)
        assert held == {p: [r["key"] for r in sent if r["partition"] == p] for p in range(partitions)}
        assert took >= HOLD_MS / 1000, f"the run took {took:.0f} s: its position read did not wait for the holder"
