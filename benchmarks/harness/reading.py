"""What the benchmarks read back from the clusters: end offsets (a topic's sum, or many partitions in one round,
the last stable ones too), the target's append times (its own clock), what a read_committed reader sees, records
from given offsets to the end, and latencies from the source's create times."""

from __future__ import annotations

import time

from benchmarks.harness.admin import kept
from secure_mirror.kafka.admin_ops import LOG


def append_times(conf: dict, topic: str | list[str], counts: list[int], since_ms: int) -> list[int]:
    """For each of ``counts``, the first millisecond (at or after ``since_ms``) by which that many records of
    ``topic`` (a LogAppendTime topic, or all of a list of them) had been appended, found in the brokers' time index
    (ListOffsets by timestamp, a binary search over time): the target's own clock, the same for every contender."""
    from confluent_kafka import Consumer, TopicPartition

    consumer = Consumer({**conf, "group.id": "secure-mirror-src-tgt-bench", "enable.auto.commit": False})
    try:
        topics = [topic] if isinstance(topic, str) else topic
        metadata = consumer.list_topics(timeout=10).topics
        partitions = [(t, p) for t in topics for p in metadata[t].partitions]
        ends = partition_end_offsets(conf, partitions)

        def appended_before(when: int) -> int:
            # thousands of partitions in one ListOffsets round: 30 s timed out at 5,000 on a loaded machine
            found = consumer.offsets_for_times([TopicPartition(t, p, when) for t, p in partitions], timeout=120)
            return sum(tp.offset if tp.offset >= 0 else ends[(tp.topic, tp.partition)] for tp in found)

        out = []
        for count in counts:
            low, high = since_ms, int(time.time() * 1000) + 1
            while high - low > 1:
                middle = (low + high) // 2
                low, high = (low, middle) if appended_before(middle) >= count else (middle, high)
            out.append(high)
        return out
    finally:
        consumer.close()


def read_append_times(conf: dict, topics: list[str], counts: list[int]) -> list[int]:
    """The same figure as :func:`append_times` (for each of ``counts``, the first millisecond by which that many
    records had been appended), found by reading every record's append time instead of searching the time index.
    For thousands of partitions: the search asks every partition about 20 times per count, which at 5,000
    partitions kept the target broker busy for over ten minutes per contender (its time index lookups); reading
    the records costs one pass over them. Reads ``read_committed`` (records of aborted transactions and
    transaction markers are not counted)."""
    from array import array

    from confluent_kafka import OFFSET_BEGINNING, KafkaError, KafkaException, TopicPartition

    consumer = committed_reader(conf)
    try:
        metadata = consumer.list_topics(timeout=30).topics
        assigned = [TopicPartition(t, p, OFFSET_BEGINNING) for t in topics for p in metadata[t].partitions]
        consumer.assign(assigned)
        pending = {(tp.topic, tp.partition) for tp in assigned}
        stamps = array("q")
        deadline = time.monotonic() + 600
        while pending:
            if time.monotonic() > deadline:
                raise RuntimeError(f"{len(pending)} target partitions not read to their end within 600 s")
            for message in consumer.consume(10_000, 1.0):
                error = message.error()
                if error is None:
                    stamps.append(message.timestamp()[1])
                elif error.code() == KafkaError._PARTITION_EOF:
                    pending.discard((message.topic(), message.partition()))
                else:
                    raise KafkaException(error)
        ordered = sorted(stamps)
        return [ordered[min(count, len(ordered)) - 1] + 1 for count in counts]
    finally:
        consumer.close()


def committed_reader(conf: dict):
    """A consumer that reads what a read_committed reader sees (records of aborted transactions and transaction
    markers are skipped), assigned by hand, committing nothing, its partitions' ends told as events."""
    from confluent_kafka import Consumer

    return Consumer(
        {
            **conf,
            "group.id": "secure-mirror-src-tgt-bench",
            "enable.auto.commit": False,
            "enable.partition.eof": True,
            "isolation.level": "read_committed",
            "fetch.wait.max.ms": 50,
            "queued.max.messages.kbytes": 262_144,
        }
    )


def count_committed(consumer, ranges: dict[tuple[str, int], tuple[int, int]], timeout: float = 600.0) -> int:
    """The records a read_committed reader sees in ``ranges`` ((topic, partition) -> [from, to), ``to`` at most the
    partition's last stable offset), read with ``consumer`` (:func:`committed_reader`). A partition is done at its
    first record at or past ``to``, or at its end (a range may end in commit markers, which are never delivered)."""
    from confluent_kafka import KafkaError, KafkaException, TopicPartition

    pending = {tp: to for tp, (_, to) in ranges.items()}
    consumer.assign([TopicPartition(t, p, start) for (t, p), (start, _) in ranges.items()])
    counted, deadline, paused = 0, time.monotonic() + timeout, []
    try:
        while pending:
            if time.monotonic() > deadline:
                raise RuntimeError(
                    f"{len(pending)} target partitions not read to their last stable offset in {timeout} s"
                )
            for message in consumer.consume(10_000, 1.0):
                key, error = (message.topic(), message.partition()), message.error()
                if key not in pending:
                    continue
                if error is None:
                    if message.offset() < pending[key]:
                        counted += 1
                    reached = message.offset() + 1
                elif error.code() == KafkaError._PARTITION_EOF:
                    reached = message.offset()
                else:
                    raise KafkaException(error)
                if reached >= pending[key]:
                    del pending[key]
                    paused.append(TopicPartition(*key))
                    consumer.pause(paused[-1:])
        return counted
    finally:
        if paused:  # librdkafka keeps a partition paused by the application across assignments
            consumer.resume(paused)
        consumer.unassign()


def end_offsets(conf: dict, topic: str) -> int:
    """The sum of the end offsets of ``topic``'s partitions (0 when the topic does not exist yet)."""
    from confluent_kafka import Consumer, KafkaError, KafkaException, TopicPartition

    consumer = Consumer({**conf, "group.id": "secure-mirror-src-tgt-bench", "enable.auto.commit": False})
    try:
        md = consumer.list_topics(topic, timeout=10).topics.get(topic)
        if md is None or md.error is not None:
            return 0
        try:
            return sum(consumer.get_watermark_offsets(TopicPartition(topic, p), timeout=10)[1] for p in md.partitions)
        except KafkaException as exc:  # a topic created a moment ago may have no leader yet: nothing there
            if exc.args[0].code() in (KafkaError.NOT_LEADER_FOR_PARTITION, KafkaError.LEADER_NOT_AVAILABLE):
                return 0
            raise
    finally:
        consumer.close()


def latencies(conf: dict, topic: str, expected: int, timeout: float = 120.0, since_ms: int = 0) -> list[float]:
    """Milliseconds from each record's source create time (its ``created-ms`` header) to its log-append
    time on the target, for every record of ``topic`` (a topic with message.timestamp.type=LogAppendTime)."""
    from confluent_kafka import Consumer, TopicPartition

    consumer = Consumer({**conf, "group.id": "secure-mirror-src-tgt-bench", "enable.auto.commit": False})
    md = consumer.list_topics(topic, timeout=10).topics[topic]
    consumer.assign([TopicPartition(topic, p, 0) for p in md.partitions])
    out: list[float] = []
    deadline = time.monotonic() + timeout
    seen = 0
    while seen < expected and time.monotonic() < deadline:
        msg = consumer.poll(0.5)
        if msg is None or msg.error():
            continue
        seen += 1
        created = dict(msg.headers() or []).get("created-ms")
        if created is not None and int(created) >= since_ms:
            out.append(msg.timestamp()[1] - int(created))
    consumer.close()
    return out


def partition_end_offsets(
    conf: dict, partitions: list[tuple[str, int]], *, stable: bool = False
) -> dict[tuple[str, int], int]:
    """(topic, partition) -> its end offset, in one ListOffsets round (a partition without a leader yet, or of a
    topic not there yet, 0). For many partitions at once: :func:`end_offsets` asks one partition per request.
    ``stable``: the last stable offset (read_committed), which stays below an open transaction's first record
    until its markers are written."""
    from confluent_kafka import IsolationLevel, TopicPartition
    from confluent_kafka.admin import OffsetSpec

    wanted = {TopicPartition(t, p): OffsetSpec.latest() for t, p in partitions}
    isolation = IsolationLevel.READ_COMMITTED if stable else IsolationLevel.READ_UNCOMMITTED
    out = {}
    for tp, future in kept(conf).list_offsets(wanted, isolation_level=isolation, request_timeout=30).items():
        try:
            out[(tp.topic, tp.partition)] = max(future.result(timeout=60).offset, 0)
        except Exception:  # noqa: BLE001 - no leader or no topic yet: nothing there
            out[(tp.topic, tp.partition)] = 0
    return out


def end_offset_sum(conf: dict, partitions: dict[str, int]) -> int:
    """The sum of the end offsets of ``partitions`` (topic -> partition count), in one ListOffsets round."""
    listed = [(t, p) for t, count in partitions.items() for p in range(count)]
    return sum(partition_end_offsets(conf, listed).values())


def records_from(conf: dict, topic: str, starts: dict[int, int], group: str, timeout: float = 120.0):
    """(partition, offset, value) of every record read_committed from ``starts`` to the end, and the end offsets."""
    from confluent_kafka import Consumer, KafkaError, KafkaException, TopicPartition

    settings = {"group.id": group, "enable.partition.eof": True, "isolation.level": "read_committed"}
    consumer = Consumer({**conf, **settings, "enable.auto.commit": False, "auto.offset.reset": "error", "logger": LOG})
    out: list[tuple[int, int, bytes]] = []
    ended: set[int] = set()
    deadline = time.monotonic() + timeout
    try:
        ends = {p: consumer.get_watermark_offsets(TopicPartition(topic, p), timeout=30)[1] for p in starts}
        todo = {p for p, start in starts.items() if start < ends[p]}
        consumer.assign([TopicPartition(topic, p, starts[p]) for p in todo])
        while ended < todo:
            if time.monotonic() > deadline:
                raise TimeoutError(f"{topic}: partitions {sorted(todo - ended)} not read to the end in {timeout:.0f} s")
            msg = consumer.poll(1.0)
            if msg is None:
                continue
            if msg.error() is not None:
                if msg.error().code() != KafkaError._PARTITION_EOF:
                    raise KafkaException(msg.error())
                ended.add(msg.partition())
                continue
            out.append((msg.partition(), msg.offset(), msg.value()))
        return out, ends
    finally:
        consumer.close()


def ends_of(conf: dict, topics: dict[str, int]) -> dict[str, dict[int, int]]:
    """Each partition's end offset of ``topics`` (topic -> partition count): topic -> partition -> offset."""
    from confluent_kafka import Consumer, TopicPartition

    consumer = Consumer({**conf, "group.id": "cutover-bench-ends", "logger": LOG})
    try:
        return {
            t: {p: consumer.get_watermark_offsets(TopicPartition(t, p), timeout=30)[1] for p in range(n)}
            for t, n in topics.items()
        }
    finally:
        consumer.close()
