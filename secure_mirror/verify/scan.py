"""Reading offset ranges of one cluster with confluent-kafka, one record at a time, in an
identity's process (``kafka/processes.py``).

A range is ``(topic, partition, start, end, group)``: records with start <= offset < end are fed into the
digest of ``group`` (a source partition, or a whole topic when partitions were not kept). A ``keep`` rule
(:func:`provenance_keeps`) leaves out records by their provenance headers (docs/provenance.md): on the source those
that came from the target (the sink never writes them back), on a target topic the flow shares with other writers
(kept names) those another cluster wrote.
"""

from __future__ import annotations

import time

from secure_mirror.kafka.admin_ops import LOG
from secure_mirror.kafka.oauth import token_served
from secure_mirror.verify.digest import DEFAULT_CELLS, PRIME, Digest, record_hash

IDLE_TIMEOUT = 60.0
NOT_FROM = "not-from"  # keep a record none of whose <name> headers is <value>
LAST_FROM = "last-from"  # keep a record whose last <name> header is <value>


def provenance_keeps(headers, rule: tuple[str, str, str] | None) -> bool:
    """Whether a record with ``headers`` ((name, bytes) pairs) is compared under ``rule``: None (every record),
    ``(NOT_FROM, name, value)`` or ``(LAST_FROM, name, value)``."""
    if rule is None:
        return True
    kind, name, value = rule
    found = [header_value for header_name, header_value in headers or () if header_name == name]
    wanted = value.encode("utf-8")
    if kind == NOT_FROM:
        return wanted not in found
    return bool(found) and found[-1] == wanted


def cluster_id(conf: dict, timeout: float = 30.0) -> str | None:
    """The cluster's Kafka cluster id, from its metadata."""
    consumer = _consumer_of(conf)
    try:
        return consumer.list_topics(timeout=timeout).cluster_id
    finally:
        consumer.close()


def _consumer_of(conf: dict):
    from confluent_kafka import Consumer

    settings = {"group.id": "secure-mirror-verify", **conf, "logger": LOG, "enable.auto.commit": False}
    return token_served(Consumer(settings), conf)


def _each_record(conf: dict, ranges: list[tuple], handle) -> None:
    from confluent_kafka import Consumer, KafkaError, KafkaException, TopicPartition

    todo = {(t, p): (start, end, group) for t, p, start, end, group in ranges if end > start}
    if not todo:
        return
    consumer = token_served(
        Consumer(
            {
                "group.id": "secure-mirror-verify",
                **conf,
                "logger": LOG,
                "enable.auto.commit": False,
                "enable.partition.eof": True,
                "auto.offset.reset": "earliest",
                "queued.max.messages.kbytes": 8192,
            }
        ),
        conf,
    )
    try:
        consumer.assign([TopicPartition(t, p, start) for (t, p), (start, _e, _g) in todo.items()])
        last_progress = time.monotonic()
        while todo:
            messages = consumer.consume(num_messages=500, timeout=1.0)
            if messages:
                last_progress = time.monotonic()
            elif time.monotonic() - last_progress > IDLE_TIMEOUT:
                raise TimeoutError(
                    f"no records for {IDLE_TIMEOUT:.0f} s while {len(todo)} partitions were unread "
                    f"(e.g. {next(iter(todo))})"
                )
            for message in messages:
                key = (message.topic(), message.partition())
                if key not in todo:
                    continue
                start, end, group = todo[key]
                error = message.error()
                if error is not None:
                    if error.code() == KafkaError._PARTITION_EOF:
                        _done(consumer, todo, key)
                        continue
                    raise KafkaException(error)
                if start <= message.offset() < end:
                    handle(group, message)
                if message.offset() >= end - 1:
                    _done(consumer, todo, key)
    finally:
        consumer.close()


def _done(consumer, todo: dict, key: tuple) -> None:
    from confluent_kafka import TopicPartition

    todo.pop(key, None)
    consumer.pause([TopicPartition(*key)])


def scan(
    conf: dict,
    ranges: list[tuple],
    ignore_prefix: str | None = None,
    cells: int = DEFAULT_CELLS,
    keep: tuple[str, str, str] | None = None,
) -> dict[object, Digest]:
    """group -> Digest of the records in ``ranges`` that ``keep`` keeps."""
    digests: dict[object, Digest] = {}
    for *_tp, group in ranges:
        digests.setdefault(group, Digest(cells))

    def handle(group, message) -> None:
        if provenance_keeps(message.headers(), keep):
            digests[group].add(record_hash(message.key(), message.value(), message.headers(), ignore_prefix))

    _each_record(conf, ranges, handle)
    return digests


def _text(data: bytes | None, limit: int = 60) -> str | None:
    if data is None:
        return None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        text = "0x" + data.hex()
    return text if len(text) <= limit else text[:limit] + "..."


def find(
    conf: dict,
    ranges: list[tuple],
    ids: set[int],
    ignore_prefix: str | None = None,
    per_id: int = 2,
    keep: tuple[str, str, str] | None = None,
) -> dict[int, list[dict]]:
    """id -> up to ``per_id`` records (as short text) whose ``record_hash % PRIME`` is one of ``ids``."""
    hits: dict[int, list[dict]] = {}

    def handle(_group, message) -> None:
        if not provenance_keeps(message.headers(), keep):
            return
        ident = record_hash(message.key(), message.value(), message.headers(), ignore_prefix) % PRIME
        if ident in ids and len(hits.setdefault(ident, [])) < per_id:
            hits[ident].append(
                {
                    "topic": message.topic(),
                    "partition": message.partition(),
                    "offset": message.offset(),
                    "key": _text(message.key()),
                    "value": _text(message.value()),
                    "headers": [[name, _text(value)] for name, value in message.headers() or []],
                }
            )

    _each_record(conf, ranges, handle)
    return hits
