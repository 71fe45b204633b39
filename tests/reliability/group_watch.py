"""Consumer groups through the three-broker faults (issue 40, point 3), for tests/reliability/test_three_broker_faults.py
(no tests here).

- The loops run in a spawned process of their own (:class:`tests.support.spawned.Spawned`), logged in as a side's admin, until
  stopped, and hand back their answer: :func:`member_loop` is a member of a consumer group on the source that commits
  what it read every few seconds; :func:`sample_loop` is an independent reader of the translated offsets on the
  target (OffsetFetch by a consumer that never joins the group, not secure_mirror's group sync), which notes every
  offset that moved backwards between two samples.
- :func:`committed_offsets` and :func:`read_as_group` run in an identity's process (``sandbox.admin``): the group's
  committed offsets on a side, and what the group's consumer reads on the target from its committed offsets (a
  partition without one fails: ``auto.offset.reset=error``).
- :func:`failover_figures` judges a failover: of the records the source holds, those the group had consumed (below
  its committed offsets) and those it had not; what the target's consumer read again, skipped, or read twice.
"""

from __future__ import annotations

import os
import time
from collections import Counter

SEQ_HEADER = "seq"
# seconds one sample may wait for the coordinator: a failed sample holds the next ones back no longer than this (the
# judge is how many of a fault's seconds had an answer: test_three_broker_faults.SAMPLED_SHARE)
SAMPLE_TIMEOUT = 5.0


def _quiet(name: str):
    """A logger for librdkafka that swallows what a broker's outage makes it say (the loops count errors)."""
    import logging

    logger = logging.getLogger(name)
    logger.addHandler(logging.NullHandler())
    logger.propagate = False
    return logger


def member_loop(env: dict, conf: dict, group: str, topic: str, commit_every: float, stop, out) -> None:
    """A member of ``group`` reading ``topic`` (read_committed) and committing its position every ``commit_every``
    seconds until ``stop``, then once more; sends how many records it read and its commits (done, failed by error)."""
    os.environ.update(env)
    from confluent_kafka import Consumer, KafkaException

    consumer = Consumer(
        {
            **conf,
            "group.id": group,
            "enable.auto.commit": False,
            "auto.offset.reset": "earliest",
            "isolation.level": "read_committed",
            "logger": _quiet("reliability.group-member"),
        }
    )
    consumer.subscribe([topic])
    read, commits, failed, last = 0, 0, Counter(), time.monotonic()

    def commit() -> bool:
        try:
            consumer.commit(asynchronous=False)
            return True
        except KafkaException as error:
            failed[error.args[0].name()] += 1
            return False

    while not stop.is_set():
        read += sum(1 for m in consumer.consume(num_messages=500, timeout=0.5) if m.error() is None)
        if time.monotonic() - last >= commit_every:
            last = time.monotonic()
            commits += commit()
    for _ in range(10):  # the last position, once the coordinator answers
        if commit():
            commits += 1
            break
        time.sleep(1.0)
    consumer.close()  # leaves the group: a failover refuses while it has members
    out.send({"read": read, "commits": commits, "failed_commits": dict(failed)})
    out.close()


def sample_loop(env: dict, conf: dict, topics: dict[str, str], partitions: int, interval: float, stop, out) -> None:
    """Every ``interval`` seconds until ``stop``, each group's committed offsets on its topic (group -> topic), as the
    target holds them (OffsetFetch by a consumer of the group that never joins it); sends the samples taken, how often
    an offset moved forward, every move backwards, the errors, each sample's time and whether it was answered
    (``outcomes``: group -> [(ms, answered)]) and the last offsets. (AdminClient's
    list_consumer_group_offsets crashed librdkafka 2.8.0 here: a segfault in its main thread, twice in a run.)"""
    os.environ.update(env)
    from confluent_kafka import Consumer, KafkaException, TopicPartition

    readers = {
        group: Consumer(
            {**conf, "group.id": group, "enable.auto.commit": False, "logger": _quiet("reliability.offset-sampler")}
        )
        for group in topics
    }
    last: dict[tuple[str, str, int], int] = {}
    samples, forward, backwards, errors = Counter(), Counter(), [], Counter()
    outcomes: dict[str, list[tuple[int, bool]]] = {group: [] for group in topics}  # (ms, answered) per sample
    started = time.monotonic()
    while not stop.wait(interval):
        for group, topic in topics.items():
            try:
                answer = readers[group].committed(
                    [TopicPartition(topic, p) for p in range(partitions)], timeout=SAMPLE_TIMEOUT
                )
            except KafkaException as error:  # a coordinator down or moving: the next sample
                errors[error.args[0].name()] += 1
                outcomes[group].append((int(time.time() * 1000), False))
                continue
            outcomes[group].append((int(time.time() * 1000), True))
            samples[group] += 1
            for tp in answer:
                if tp.error is not None or tp.offset < 0:
                    continue
                key = (group, tp.topic, tp.partition)
                before = last.get(key)
                if before is not None and tp.offset < before:
                    backwards.append({"group": group, "partition": tp.partition, "from": before, "to": tp.offset,
                                      "second": round(time.monotonic() - started, 1)})  # fmt: skip
                forward[group] += before is not None and tp.offset > before
                last[key] = tp.offset
    for reader in readers.values():
        reader.close()
    out.send(
        {
            "samples": dict(samples),
            "forward": dict(forward),
            "backwards": backwards,
            "errors": dict(errors),
            "outcomes": outcomes,
            "last": {f"{g} {t} {p}": o for (g, t, p), o in last.items()},
        }
    )
    out.close()


def committed_offsets(conf: dict, group: str, timeout: float = 30.0) -> dict[int, int]:
    """partition -> ``group``'s committed offset on this side (partitions without one left out)."""
    from confluent_kafka import ConsumerGroupTopicPartitions
    from confluent_kafka.admin import AdminClient

    admin = AdminClient({**conf, "logger": _quiet("reliability.offsets")})
    [future] = admin.list_consumer_group_offsets(
        [ConsumerGroupTopicPartitions(group)], request_timeout=timeout
    ).values()
    answer = future.result(timeout=timeout)
    return {tp.partition: tp.offset for tp in answer.topic_partitions if tp.error is None and tp.offset >= 0}


def read_as_group(conf: dict, group: str, topic: str, partitions: int, timeout: float = 300.0) -> list[list[int]]:
    """[partition, offset, seq] of every record the group's consumer reads on ``topic`` from its committed offsets to
    the partitions' ends (read_committed, committing nothing)."""
    from confluent_kafka import Consumer, KafkaError, KafkaException

    consumer = Consumer(
        {
            **conf,
            "group.id": group,
            "auto.offset.reset": "error",
            "isolation.level": "read_committed",
            "enable.partition.eof": True,
            "enable.auto.commit": False,
            "logger": _quiet("reliability.failover-reader"),
        }
    )
    consumer.subscribe([topic])
    out, ended, deadline = [], set(), time.monotonic() + timeout
    try:
        while len(ended) < partitions:
            if time.monotonic() > deadline:
                raise TimeoutError(f"{topic} not read to its ends in {timeout:.0f} s: {sorted(ended)} were")
            for message in consumer.consume(num_messages=1000, timeout=1.0):
                if message.error() is not None:
                    if message.error().code() != KafkaError._PARTITION_EOF:
                        raise KafkaException(message.error())
                    ended.add(message.partition())
                    continue
                seq = int(dict(message.headers())[SEQ_HEADER])
                out.append([message.partition(), message.offset(), seq])
        return out
    finally:
        consumer.close()


def failover_figures(
    source_positions: dict[int, list[tuple[int, int]]], committed: dict[int, int], read: list[list[int]]
) -> dict[str, int]:
    """What the source group had not consumed (``unread``: the source's records at or past its committed offsets),
    what its consumer read on the target after the failover, how many of those it had consumed already
    (``re_read``), how many it had not and were not read (``skipped``), and how many it read more than once."""
    consumed = {seq for seq, at in source_positions.items() if at[0][1] < committed.get(at[0][0], 0)}
    unread = set(source_positions) - consumed
    seqs = [seq for _p, _o, seq in read]
    return {
        "unread": len(unread),
        "read": len(seqs),
        "re_read": sum(1 for seq in seqs if seq in consumed),
        "skipped": len(unread - set(seqs)),
        "read_twice": len(seqs) - len(set(seqs)),
    }
