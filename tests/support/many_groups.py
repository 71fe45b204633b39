"""Many idle consumer groups on the sandbox (issue 61's CI case): committed at once as the admin, read back and
deleted the same way (one request per group, every request sent before an answer is read: no consumer joins,
nothing starts per group), and what each committed offset must become on the target, from the records alone.

The admin calls run in the admin identity's process (``sandbox.admin(side, fn, ...)``: ``conf`` is its)."""

from __future__ import annotations

from collections.abc import Iterable

from secure_mirror.kafka import admin_ops

TIMEOUT = 120.0


def _admin(conf: dict):
    from confluent_kafka.admin import AdminClient

    return AdminClient({**conf, "logger": admin_ops.LOG})


def commit_groups(conf: dict, topic: str, offsets: dict[str, dict[int, int]]) -> int:
    """Commit each group's offsets of ``topic`` (group -> partition -> offset); how many groups were committed."""
    from confluent_kafka import ConsumerGroupTopicPartitions, TopicPartition

    admin = _admin(conf)
    asked = {
        group: admin.alter_consumer_group_offsets(
            [ConsumerGroupTopicPartitions(group, [TopicPartition(topic, p, o) for p, o in sorted(parts.items())])],
            request_timeout=TIMEOUT,
        )[group]
        for group, parts in offsets.items()
    }
    for group, future in asked.items():
        refused = [tp.error.str() for tp in future.result(TIMEOUT).topic_partitions if tp.error is not None]
        if refused:
            raise RuntimeError(f"group {group}: {refused[0]}")
    return len(asked)


def committed_groups(conf: dict, topic: str, groups: list[str]) -> dict[str, dict[int, int]]:
    """Each group's committed offsets of ``topic`` (partition -> offset; a partition without one left out)."""
    from confluent_kafka import ConsumerGroupTopicPartitions

    admin = _admin(conf)
    asked = {
        group: admin.list_consumer_group_offsets([ConsumerGroupTopicPartitions(group)], request_timeout=TIMEOUT)[group]
        for group in groups
    }
    return {
        group: {
            tp.partition: tp.offset
            for tp in future.result(TIMEOUT).topic_partitions or ()
            if tp.topic == topic and tp.error is None and tp.offset >= 0
        }
        for group, future in asked.items()
    }


def delete_groups(conf: dict, groups: list[str]) -> int:
    """Delete ``groups`` (none may have members); those the cluster does not have are passed over. How many were."""
    from confluent_kafka import KafkaError, KafkaException

    admin = _admin(conf)  # a call per group, all sent at once: one call naming 1,000 did not answer in 120 s here
    futures = [admin.delete_consumer_groups([group], request_timeout=TIMEOUT)[group] for group in groups]
    deleted = 0
    for future in futures:
        try:
            future.result(TIMEOUT)
            deleted += 1
        except KafkaException as exc:
            if exc.args[0].code() != KafkaError.GROUP_ID_NOT_FOUND:
                raise
    return deleted


def translations(
    source: Iterable[tuple[int, int, bytes]], target: Iterable[tuple[int, int, bytes]], end: int
) -> dict[tuple[int, int], int]:
    """(partition, committed source offset) -> the target offset it must become, for every offset from 0 to ``end``
    (the source's log end) past the first record. From both sides' records as a read_committed reader sees them,
    (partition, offset, value), each value once on each side as exactly_once copies them: the target offset of the
    record at that offset; where there is none (a transaction marker, aborted records, the end), one past the target
    copy of the last record before it (docs/failover.md: a consumer resuming there reads what it would from the next
    record, and skips none)."""
    copies = {value: offset for _, offset, value in target}
    by_partition: dict[int, dict[int, bytes]] = {}
    for partition, offset, value in source:
        by_partition.setdefault(partition, {})[offset] = value
    out = {}
    for partition, records in by_partition.items():
        last = None
        for offset in range(end + 1):
            if offset in records:
                out[(partition, offset)] = copies[records[offset]]
                last = records[offset]
            elif last is not None:
                out[(partition, offset)] = copies[last] + 1
    return out
