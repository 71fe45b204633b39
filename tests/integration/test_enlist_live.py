"""exactly_once's tasks enlist all their partitions in their transaction at once (docs/exactly-once.md step 5; jvm/sink
PartitionEnlister, TaskTransaction.enlist, TaskPlan), judged by the target broker's transaction coordinator rather
than by the sink.

The coordinator appends a record to ``__transaction_state`` for each state change of a transactional id, and one in
state Ongoing, with the whole partition set so far, for each AddPartitionsToTxn. One job in exactly_once mirrors a
topic of 32 partitions, 2,500 records each, with two tasks: each task meets its 16 partitions one after the other.
Kafka's own decoder (``kafka-dump-log.sh --transaction-log-decoder``, tests/support/transaction_log.py) then reads the
target broker's segments of ``__transaction_state``, and for every transaction of the job's task ids that wrote to
the target topic, its first Ongoing record must already list every partition of the topic the transaction ended
with. Where the enlisting does not happen (the fallback: a client without the transaction manager the enlister
reaches), the producer adds each partition as its first record is sent, and this test fails: with a sink whose
enlister never resolves, each transaction's first Ongoing record listed 1 of its 16 partitions and the set grew at
15 or 16 of its records. The sink's own log is not asked: the judge is the coordinator's record, read by Kafka's tool.
"""

from __future__ import annotations

import subprocess

import pytest

from secure_mirror.errors import EXIT_OK
from secure_mirror.sandbox.sink_jar import sink_conf
from tests.support import transaction_log
from tests.support.mirror_case import MirrorCase

pytestmark = [pytest.mark.sandbox, pytest.mark.spark]
PARTITIONS = 32
PER_PARTITION = 2_500  # a task writes each partition's share for longer than a round trip to the coordinator
TASKS = 2


def _figures(found: list[transaction_log.Transaction], topic: str) -> list[str]:
    """One line per transaction: its id, its Ongoing records (those adding partitions of ``topic``: the others add
    the position group's ``__consumer_offsets`` partition), the topic's partitions in the first and in the last."""
    return [
        f"{t.transactional_id}: {len(t.steps)} Ongoing records, {len(set(t.of(topic)) - {frozenset()})} of them "
        f"adding partitions of the topic; its partitions in the first: {len(t.of(topic)[0])}, "
        f"in the last: {len(t.of(topic)[-1])}"
        for t in found
    ]


def test_each_transaction_of_a_task_lists_all_its_partitions_in_its_first_ongoing_record(sandbox, tmp_path):
    spark = {"master": f"local[{TASKS}]", "tasks": TASKS, "conf": sink_conf(tmp_path)}  # this checkout's sink
    with MirrorCase(sandbox, tmp_path, mirror={"delivery": {"guarantee": "exactly_once"}, "spark": spark}) as case:
        case.create({"wide": PARTITIONS})
        sent = [
            {"key": b"k%06d" % i, "value": b"v" * 100, "partition": i % PARTITIONS}
            for i in range(PARTITIONS * PER_PARTITION)
        ]
        for start in range(0, len(sent), 20_000):
            case.produce("wide", sent[start : start + 20_000])
        run = subprocess.run(
            case.run_argv(tmp_path / "run", "--until-caught-up"), capture_output=True, text=True, timeout=600
        )
        assert run.returncode == EXIT_OK, run.stderr[-3000:]
        target = case.profile.target_topic(case.topic("wide"))
        ids = f"{case.profile.transactional_prefix}task#{case.profile.job_key}#"  # docs/exactly-once.md step 1

    text = transaction_log.dump(transaction_log.segments(sandbox.broker("target").base / "data"))
    found = transaction_log.transactions(transaction_log.parse(text), lambda tid: tid.startswith(ids))
    written = [t for t in found if t.of(target)[-1]]
    figures = _figures(written, target)
    print("\n".join([f"{len(written)} transactions of {ids}* wrote to {target}:", *figures]))
    assert written, (
        f"__transaction_state holds no transaction of {ids}* writing to {target} ({len(found)} of those ids)"
    )
    assert frozenset().union(*(t.of(target)[-1] for t in written)) == set(range(PARTITIONS))
    assert max(len(t.of(target)[-1]) for t in written) > 1, "no transaction wrote two partitions: nothing to judge"
    late = [t for t in written if t.of(target)[0] != t.of(target)[-1]]
    if late:
        pytest.fail(
            f"{len(late)} of {len(written)} transactions added partitions after their first AddPartitionsToTxn (the "
            f"partitions were not enlisted at once; the job log {tmp_path / 'run' / 'job.log'} says whether "
            "PartitionEnlister resolved):\n" + "\n".join(figures),
            pytrace=False,
        )
