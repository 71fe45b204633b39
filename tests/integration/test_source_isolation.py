"""Aborted source transactions are never mirrored by default (``mirror.source_isolation_level: read_committed``), in
at_least_once too, on the sandbox: a source topic of three partitions written by a transactional producer that
commits 400 records and aborts 200, interleaved, mirrored in micro-batches (``--until-caught-up``) and in continuous
mode (half of the transactions written while it runs). The target, read by a read_uncommitted consumer so that
nothing on it could hide, holds exactly the 400 committed records, by content and in the source's order per
partition; the source, read the same way, still holds all 600; verify agrees."""

from __future__ import annotations

import signal
import subprocess
import time

import pytest

from benchmarks.harness.load import produce_transactions
from secure_mirror.errors import EXIT_OK
from secure_mirror.kafka.admin_ops import LOG
from secure_mirror.run.lag import format_table, lag
from secure_mirror.run.launcher import run_mirror
from secure_mirror.sandbox.sink_jar import sink_conf
from secure_mirror.sandbox.waiting import wait_for
from secure_mirror.verify import verify
from tests.support.mirror_case import MirrorCase

pytestmark = [pytest.mark.sandbox, pytest.mark.spark]
PARTITIONS = 3
ROUNDS = 8  # each round: a transaction of 50 records committed, then one of 25 aborted
COMMITTED, ABORTED = 50, 25


def _read_to_end(conf: dict, topic: str, timeout: float = 60.0) -> list[tuple[int, bytes, bytes]]:
    """(partition, key, value) of every record of ``topic`` up to its end offsets, as a consumer of ``conf``'s
    ``isolation.level`` reads them, in offset order per partition ([] while the topic does not exist). Runs in
    an identity's process (``kafka/processes.py``)."""
    from confluent_kafka import OFFSET_BEGINNING, Consumer, KafkaError, KafkaException, TopicPartition

    consumer = Consumer(
        {
            **conf,
            "group.id": "isolation-test",
            "enable.auto.commit": False,
            "enable.partition.eof": True,
            "logger": LOG,
        }
    )
    try:
        metadata = consumer.list_topics(topic, timeout=30).topics[topic]
        if metadata.error is not None:
            if metadata.error.code() == KafkaError.UNKNOWN_TOPIC_OR_PART:
                return []
            raise KafkaException(metadata.error)
        consumer.assign([TopicPartition(topic, p, OFFSET_BEGINNING) for p in metadata.partitions])
        pending, out = set(metadata.partitions), []
        deadline = time.monotonic() + timeout
        while pending:
            if time.monotonic() > deadline:
                raise TimeoutError(f"partitions {sorted(pending)} of {topic} not read to their end in {timeout:.0f} s")
            message = consumer.poll(1.0)
            if message is None:
                continue
            if message.error() is not None:
                if message.error().code() != KafkaError._PARTITION_EOF:
                    raise KafkaException(message.error())
                pending.discard(message.partition())
                continue
            out.append((message.partition(), message.key(), message.value()))
        return out
    finally:
        consumer.close()


def _read(sandbox, side: str, topic: str, isolation: str) -> list[tuple[int, bytes, bytes]]:
    reader = sandbox.identity(side, "admin").with_settings({"isolation.level": isolation})
    return reader.call(_read_to_end, topic)


def _rounds(tag: str, rounds: range) -> tuple[list[dict], list[tuple], list[tuple]]:
    """The transactions of ``rounds`` and the (partition, key, value) records they commit and abort, in order."""
    transactions, committed, aborted = [], [], []
    for r in rounds:
        for end, size, kept in (("commit", COMMITTED, committed), ("abort", ABORTED, aborted)):
            rows = []
            for _ in range(size):
                n = len(kept)
                key, value = f"{tag}-{end}-{n}".encode(), f"{end}ed {tag} {n} in round {r}".encode()
                rows.append({"key": key, "value": value, "partition": n % PARTITIONS})
                kept.append((n % PARTITIONS, key, value))
            transactions.append({"records": rows, "end": end})
    return transactions, committed, aborted


def _produce(sandbox, case, topic: str, tag: str, rounds: range) -> tuple[list[tuple], list[tuple]]:
    transactions, committed, aborted = _rounds(tag, rounds)
    sandbox.admin("source", produce_transactions, topic, transactions, f"{case.prefix}-{tag}-producer")
    return committed, aborted


def _per_partition(records: list[tuple]) -> dict[int, list[tuple]]:
    return {p: [r for r in records if r[0] == p] for p in range(PARTITIONS)}


def _holds_only_the_committed(sandbox, case, topic: str, committed: list, aborted: list, mode: str, took: float):
    source = _read(sandbox, "source", topic, "read_uncommitted")
    target = _read(sandbox, "target", case.profile.target_topic(topic), "read_uncommitted")
    assert sorted(source) == sorted(committed + aborted)  # the aborted records are on the source, uncommitted
    leaked = set(target) & set(aborted)
    assert not leaked, f"{len(leaked)} aborted records mirrored, e.g. {sorted(leaked)[:3]}"
    assert len(target) == len(committed) and _per_partition(target) == _per_partition(committed)
    result = verify(case.profile)
    assert result.ok and result.to_dict()["source_records"] == len(committed), result.text()
    print(
        f"\n{mode}: source {len(source)} records read_uncommitted ({len(committed)} committed, {len(aborted)} "
        f"aborted); target {len(target)} read_uncommitted, {len(committed)} of them committed ones, {len(leaked)} "
        f"aborted; verify {result.to_dict()['target_records']} = {result.to_dict()['source_records']}; {took:.1f} s"
    )


def test_at_least_once_micro_batches_mirror_no_aborted_record(sandbox, tmp_path):
    started = time.monotonic()
    with MirrorCase(sandbox, tmp_path) as case:
        assert case.profile.mirror.delivery.guarantee == "at_least_once"
        assert case.profile.mirror.source_isolation_level == "read_committed"  # the default, not set by the case
        case.create({"tx": PARTITIONS})
        topic = case.topic("tx")
        committed, aborted = _produce(sandbox, case, topic, "m", range(ROUNDS))
        code = run_mirror(case.profile, until_caught_up=True, skip_preflight=True, run_dir=str(tmp_path / "run"))
        assert code == EXIT_OK
        assert all(row.lag == 0 for row in lag(case.profile))  # the end offsets lag reads are the job's
        _holds_only_the_committed(
            sandbox, case, topic, committed, aborted, "micro-batch, at_least_once", time.monotonic() - started
        )
        # verify reads the source at the profile's level: read_uncommitted, the aborted records count as missing
        mirror = case.profile.mirror.model_copy(update={"source_isolation_level": "read_uncommitted"})
        uncommitted = verify(case.profile.model_copy(update={"mirror": mirror})).to_dict()
        assert (uncommitted["ok"], uncommitted["source_records"], uncommitted["target_records"]) == (False, 600, 400)
        missing = sum(c["missing"] for c in uncommitted["comparisons"])
        print(f"verify of the same mirror with read_uncommitted: source 600, target 400, {missing} missing")


# CI time: slow (CI overran 90 min at 1d870a0); CI keeps the micro-batch case and test_continuous.
@pytest.mark.slow
def test_at_least_once_continuous_mode_mirrors_no_aborted_record(sandbox, tmp_path):
    started = time.monotonic()
    spark = {"master": f"local[{PARTITIONS}]", "trigger": "continuous", "continuous_interval_ms": 500}
    spark["conf"] = sink_conf(tmp_path)
    with MirrorCase(sandbox, tmp_path, mirror={"spark": spark, "delivery": {"linger_ms": 0}}) as case:
        assert case.profile.mirror.continuous and case.profile.mirror.source_isolation_level == "read_committed"
        case.create({"tx": PARTITIONS})
        topic, target = case.topic("tx"), case.profile.target_topic(case.topic("tx"))
        committed, aborted = _produce(sandbox, case, topic, "c", range(ROUNDS // 2))  # a backlog at the start
        with (tmp_path / "run.out").open("w") as out, (tmp_path / "run.err").open("w") as err:
            job = subprocess.Popen(case.run_argv(tmp_path / "run"), stdout=out, stderr=err)
            try:
                wait_for(
                    lambda: len(_read(sandbox, "target", target, "read_uncommitted")) >= len(committed),
                    150,
                    "the backlog on the target",
                )
                more = _produce(sandbox, case, topic, "c2", range(ROUNDS // 2, ROUNDS))  # while it runs
                committed, aborted = committed + more[0], aborted + more[1]
                wait_for(
                    lambda: len(_read(sandbox, "target", target, "read_uncommitted")) >= len(committed),
                    90,
                    "the transactions written while the job runs",
                )
                time.sleep(2.0)  # four more epochs: anything else the job were to write would be there now
                rows = lag(case.profile)
            finally:
                job.send_signal(signal.SIGTERM)
                job.wait(timeout=120)
        assert job.returncode == EXIT_OK, (tmp_path / "run.err").read_text()[-3000:]
        print(f"\ncontinuous mode, lag before the stop:\n{format_table(rows)}")
        _holds_only_the_committed(
            sandbox, case, topic, committed, aborted, "continuous, at_least_once", time.monotonic() - started
        )
