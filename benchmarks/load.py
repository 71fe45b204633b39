"""Benchmark helpers that talk to the sandbox: load data, read end offsets. Run in an identity's
process (``kafka/processes.py``)."""

from __future__ import annotations

import json
import random
import time


def values(seed: int, count: int = 4096, mean_size: int = 1024) -> list[bytes]:
    """``count`` distinct record values shaped like real event data: JSON objects with ids, names, amounts, times
    and a free-text field, sizes spread around ``mean_size`` (about a third to twice it), compressing about as
    real JSON does. Seeded: the same seed gives the same values."""
    rng = random.Random(seed)
    words = [
        rng.choice("bcdfghjklmnpqrstvwxz") + rng.choice("aeiou") + rng.choice("lmnrst") + rng.choice("aeiouy")
        for _ in range(600)
    ]
    out = []
    for i in range(count):
        target = int(rng.triangular(mean_size / 3, mean_size * 2, mean_size))
        event = {
            "id": f"{rng.getrandbits(64):016x}",
            "seq": i,
            "type": rng.choice(("order", "payment", "refund", "shipment", "login")),
            "customer": {
                "id": rng.randrange(10**7),
                "name": " ".join(rng.sample(words, 2)),
                "country": rng.choice(("DE", "FR", "US", "JP", "BR", "IN", "GB")),
            },
            "amount": round(rng.lognormvariate(3, 1.2), 2),
            "currency": rng.choice(("EUR", "USD", "JPY")),
            "at": 1_790_000_000_000 + rng.randrange(10**9),
        }
        text = json.dumps(event)
        note = []
        while len(text) + sum(len(w) + 1 for w in note) + 12 < target:
            note.append(rng.choice(words))
        event["note"] = " ".join(note)
        out.append(json.dumps(event).encode())
    return out


def produce_load(
    conf: dict, topic: str | list[str], records: int, *, seed: int = 1, rate: float | None = None
) -> float:
    """Produce ``records`` keyed records with a few headers and varied JSON values (:func:`values`); seconds taken.
    Over a list of topics, record i goes to topic i modulo their number.

    With ``rate`` (records/s) the producer paces itself (for latency runs); each record's timestamp is its
    create time, which the latency measurement compares with the target's log-append time."""
    from confluent_kafka import Producer

    producer = Producer(
        {
            **conf,
            "acks": "all",
            "enable.idempotence": True,
            "linger.ms": 20,
            "batch.size": 1_000_000,
            "compression.type": "lz4",
            "queue.buffering.max.kbytes": 1_048_576,
        }
    )
    payloads = values(seed)
    topics = [topic] if isinstance(topic, str) else topic
    start = time.monotonic()
    for i in range(records):
        while True:
            try:
                producer.produce(
                    topics[i % len(topics)],
                    key=b"k%09d" % i,
                    value=payloads[i % len(payloads)],
                    headers=[("bench", b"1"), ("seq", b"%d" % i), ("created-ms", b"%d" % int(time.time() * 1000))],
                )
                break
            except BufferError:
                producer.poll(0.05)
        if rate:
            delay = start + (i + 1) / rate - time.monotonic()
            if delay > 0:
                producer.poll(delay)
        elif i % 10_000 == 0:
            producer.poll(0)
    if producer.flush(300) != 0:
        raise RuntimeError("not every benchmark record was acknowledged")
    return time.monotonic() - start


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


_ADMINS: dict = {}


def _admin(conf: dict):
    """One admin client per configuration, kept: polling with a new one each time would log in each time."""
    from confluent_kafka.admin import AdminClient

    key = tuple(sorted((k, str(v)) for k, v in conf.items()))
    if key not in _ADMINS:
        _ADMINS[key] = AdminClient(conf)
    return _ADMINS[key]


def set_on_brokers(conf: dict, name: str, value: str, timeout: float = 30.0) -> None:
    """Set the dynamic broker setting ``name`` on every broker of the cluster ``conf`` reaches (each takes it at once,
    without a restart)."""
    from confluent_kafka.admin import AlterConfigOpType, ConfigEntry, ConfigResource, ResourceType

    admin = _admin(conf)
    entry = ConfigEntry(name, value, incremental_operation=AlterConfigOpType.SET)
    brokers = admin.list_topics(timeout=timeout).brokers
    resources = [ConfigResource(ResourceType.BROKER, str(b), incremental_configs=[entry]) for b in brokers]
    for future in admin.incremental_alter_configs(resources, request_timeout=timeout).values():
        future.result(timeout=timeout)


def delete_groups(conf: dict, groups: list[str]) -> None:
    """Delete those consumer ``groups`` that exist (the positions of an earlier exactly_once run)."""
    for future in _admin(conf).delete_consumer_groups(groups, request_timeout=30).values():
        try:
            future.result(timeout=30)
        except Exception:  # noqa: BLE001 - GROUP_ID_NOT_FOUND: nothing to forget
            pass


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
    for tp, future in _admin(conf).list_offsets(wanted, isolation_level=isolation, request_timeout=30).items():
        try:
            out[(tp.topic, tp.partition)] = max(future.result(timeout=60).offset, 0)
        except Exception:  # noqa: BLE001 - no leader or no topic yet: nothing there
            out[(tp.topic, tp.partition)] = 0
    return out


def end_offset_sum(conf: dict, partitions: dict[str, int]) -> int:
    """The sum of the end offsets of ``partitions`` (topic -> partition count), in one ListOffsets round."""
    listed = [(t, p) for t, count in partitions.items() for p in range(count)]
    return sum(partition_end_offsets(conf, listed).values())


def prefixed_groups(conf: dict, prefix: str) -> list[str]:
    """The consumer groups whose id starts with ``prefix``."""
    listed = _admin(conf).list_consumer_groups(request_timeout=30).result(timeout=60)
    return sorted(g.group_id for g in listed.valid if g.group_id.startswith(prefix))


def forget_groups(conf: dict, prefix: str) -> None:
    """Delete every consumer group named ``prefix...`` (an exactly_once job's positions of an earlier run, whichever
    groups its sink keeps them in: they would make the sink skip everything)."""
    if earlier := prefixed_groups(conf, prefix):
        delete_groups(conf, earlier)
