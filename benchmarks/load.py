"""Benchmark helpers that talk to the sandbox: load data, read end offsets. Run inside ``call_isolated``."""

from __future__ import annotations

import os
import time


def produce_load(conf: dict, topic: str, records: int, value_size: int = 1024, *, rate: float | None = None) -> float:
    """Produce ``records`` keyed records with a few headers and ``value_size``-byte values; seconds taken.

    With ``rate`` (records/s) the producer paces itself (for latency runs); each record's timestamp is its
    create time, which the latency measurement compares with the target's log-append time."""
    from confluent_kafka import Producer

    producer = Producer({**conf, "acks": "all", "enable.idempotence": True, "linger.ms": 20,
                         "batch.size": 1_000_000, "compression.type": "lz4", "queue.buffering.max.kbytes": 1_048_576})
    payload = os.urandom(value_size // 2).hex().encode()[:value_size]
    start = time.monotonic()
    for i in range(records):
        while True:
            try:
                producer.produce(topic, key=b"k%09d" % i, value=payload,
                                 headers=[("bench", b"1"), ("seq", b"%d" % i),
                                          ("created-ms", b"%d" % int(time.time() * 1000))])
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


def end_offsets(conf: dict, topic: str) -> int:
    """The sum of the end offsets of ``topic``'s partitions (0 when the topic does not exist yet)."""
    from confluent_kafka import Consumer, TopicPartition

    consumer = Consumer({**conf, "group.id": "secure-mirror-src-tgt-bench", "enable.auto.commit": False})
    try:
        md = consumer.list_topics(topic, timeout=10).topics.get(topic)
        if md is None or md.error is not None:
            return 0
        return sum(consumer.get_watermark_offsets(TopicPartition(topic, p), timeout=10)[1] for p in md.partitions)
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
