"""What the benchmarks put on the source: seeded record values shaped like event data (:func:`values`), loaded at
full speed or at a steady rate (:func:`produce_load`), and a layout of committed, aborted and plain transactions
(:func:`produce_transactions`). Run in an identity's process (``kafka/processes.py``) or this one's."""

from __future__ import annotations

import json
import random
import time

from secure_mirror.kafka import admin_ops


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


def warm(producer, topics: list[str], settle: float = 1.0) -> None:
    """Before a paced load: the producer's metadata for ``topics`` (its connection, TLS and SASL login done on the
    way), then ``settle`` seconds of polling for what it does next unasked (the idempotent producer's id). Without
    it the first records' create times included the load producer's own start, up to 0.7 s, which set the p99 of
    a 500-record run for every contender alike (benchmarks/NOTES.md section 24)."""
    for name in topics:
        producer.list_topics(name, timeout=30)
    producer.poll(settle)


def produce_load(
    conf: dict, topic: str | list[str], records: int, *, seed: int = 1, rate: float | None = None
) -> float:
    """Produce ``records`` keyed records with a few headers and varied JSON values (:func:`values`); seconds taken.
    Over a list of topics, record i goes to topic i modulo their number.

    With ``rate`` (records/s) the producer paces itself (for latency runs); each record's ``created-ms`` header is
    its create time, which the latency measurement compares with the target's log-append time. So that the figures
    hold the mirror's time and not the load's own, a paced producer sends each record at once (linger 0) and is
    connected, logged in and given its producer id before the first record is made (:func:`warm`)."""
    from confluent_kafka import Producer

    producer = Producer(
        {
            **conf,
            "acks": "all",
            "enable.idempotence": True,
            "linger.ms": 0 if rate else 20,
            "batch.size": 1_000_000,
            "compression.type": "lz4",
            "queue.buffering.max.kbytes": 1_048_576,
        }
    )
    payloads = values(seed)
    topics = [topic] if isinstance(topic, str) else topic
    if rate:
        warm(producer, topics)
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


def produce_transactions(conf: dict, topic: str, transactions: list[dict], transactional_id: str) -> None:
    """Produce ``transactions`` ({"records": [...], "end": "commit" | "abort" | "none"}) in order with one
    transactional producer; "none" writes its records without a transaction (an idempotent producer of its own)
    between the others. Run through ``sandbox.admin`` (the admin may use any transactional id)."""
    from confluent_kafka import KafkaException, Producer

    producer = Producer({**conf, "transactional.id": transactional_id, "acks": "all", "enable.idempotence": True})
    producer.init_transactions(60)
    for tx in transactions:
        if tx["end"] == "none":
            admin_ops.produce(conf, topic, tx["records"])
            continue
        producer.begin_transaction()
        for r in tx["records"]:
            producer.produce(topic, key=r["key"], value=r["value"], partition=r["partition"])
        if producer.flush(60):
            raise KafkaException("transactional records unacknowledged")
        if tx["end"] == "commit":
            producer.commit_transaction(60)
        else:
            producer.abort_transaction(60)
