"""The independent judge of time and lag in the three-broker faults (tests/reliability/test_three_broker_faults.py),
the same for every contender (our jobs, MirrorMaker 2 with and without exactly-once); no tests here.

Two readers run for the whole module, each in a spawned process of its own logged in as a side's admin
(:class:`tests.support.spawned.Spawned`), neither of them a mirror's code: :func:`tail_loop` on the source over every
contender's source topic, and on the target over every contender's target topic (assigned, from each partition's
start, once the topic exists: no group, so no coordinator in the way). Both read ``read_committed``: what a downstream
consumer sees, so a record of an exactly-once mirror counts once its transaction committed. Each appends a line per
record to a file of its own (``r topic partition offset seq timestamp_ms received_ms``) and, every second, each
partition's position (``p topic partition position received_ms``). The test reads the files as they grow
(:class:`Tail`) and judges with the pure functions below:

- :func:`lag_events` / :func:`highest_lag`: the records a reader of the source had received by a moment that a reader
  of the target had not (a record counts from its first receipt on the source until its first receipt on the
  target; one that reached the target reader first never counts). The readers are consumers like any other: while a
  broker they fetch from is down, their own receipts wait too, as a downstream consumer's would.
- :func:`caught_up_at`: the moment the target reader had received every record the source held below given end
  offsets (the source reader must have read past them: its positions).
- :func:`first_new`: the first record the target reader received whose timestamp as read on the target lies after a
  moment (the fault's end): records are timestamped by the test's producers when produced (CreateTime), and both our
  sink and MirrorMaker 2 copy the source record's timestamp, so it is the first record produced after that moment
  that reached a reader of the target; its receipt time is the answer.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field
from pathlib import Path

SEQ_HEADER = "seq"
POSITIONS_EVERY = 1.0  # seconds between two lines of positions


def _quiet(name: str):
    import logging

    logger = logging.getLogger(name)
    logger.addHandler(logging.NullHandler())
    logger.propagate = False
    return logger


def tail_loop(env: dict, conf: dict, topics: list[str], path: str, stop, out) -> None:
    """Read ``topics`` read_committed from their beginnings until ``stop`` (topics not there yet are assigned once
    they exist), appending to ``path`` as the module doc says; sends the records read and the errors seen."""
    os.environ.update(env)
    from confluent_kafka import OFFSET_BEGINNING, Consumer, KafkaError, TopicPartition

    consumer = Consumer(
        {
            **conf,
            "group.id": "reliability-tail",  # never joins: partitions are assigned, nothing is committed
            "enable.auto.commit": False,
            "isolation.level": "read_committed",
            "fetch.wait.max.ms": 100,
            "logger": _quiet("reliability.tail"),
        }
    )
    assigned: dict[str, list[int]] = {}
    errors: dict[str, int] = {}
    read, last_look, last_positions = 0, 0.0, 0.0
    with open(path, "a", buffering=1 << 16) as sink:
        while not stop.is_set():
            now = time.monotonic()
            if len(assigned) < len(topics) and now - last_look >= 2.0:
                last_look = now
                try:
                    metadata = consumer.list_topics(timeout=10)
                except Exception as error:  # noqa: BLE001 - a broker down: looked at again in 2 s
                    errors[type(error).__name__] = errors.get(type(error).__name__, 0) + 1
                    metadata = None
                for topic in topics:
                    found = metadata.topics.get(topic) if metadata is not None else None
                    if topic in assigned or found is None or found.error is not None or not found.partitions:
                        continue
                    assigned[topic] = sorted(found.partitions)
                    consumer.incremental_assign([TopicPartition(topic, p, OFFSET_BEGINNING) for p in assigned[topic]])
            for message in consumer.consume(num_messages=1000, timeout=0.2) if assigned else ():
                if message.error() is not None:
                    if message.error().code() != KafkaError._PARTITION_EOF:
                        name = message.error().name()
                        errors[name] = errors.get(name, 0) + 1
                    continue
                headers = dict(message.headers() or [])
                if SEQ_HEADER not in headers:
                    continue
                _kind, stamp = message.timestamp()
                sink.write(
                    f"r {message.topic()} {message.partition()} {message.offset()} {int(headers[SEQ_HEADER])} "
                    f"{stamp} {int(time.time() * 1000)}\n"
                )
                read += 1
            if assigned and time.monotonic() - last_positions >= POSITIONS_EVERY:
                last_positions = time.monotonic()
                wall = int(time.time() * 1000)
                try:
                    at = consumer.position([TopicPartition(t, p) for t, ps in assigned.items() for p in ps])
                except Exception as error:  # noqa: BLE001 - asked again in a second
                    errors[type(error).__name__] = errors.get(type(error).__name__, 0) + 1
                    at = []
                for tp in at:
                    if tp.offset >= 0:
                        sink.write(f"p {tp.topic} {tp.partition} {tp.offset} {wall}\n")
            sink.flush()
    consumer.close()
    out.send({"read": read, "errors": errors, "assigned": {t: len(ps) for t, ps in assigned.items()}})
    out.close()


@dataclass
class Tail:
    """What one reader's file says so far (:meth:`update` reads what was appended since)."""

    path: Path
    first: dict[str, dict[int, int]] = field(default_factory=dict)  # topic -> seq -> first receipt (ms)
    stamp: dict[str, dict[int, int]] = field(default_factory=dict)  # topic -> seq -> its timestamp (ms)
    where: dict[str, dict[int, tuple[int, int]]] = field(default_factory=dict)  # topic -> seq -> (partition, offset)
    positions: dict[str, dict[int, int]] = field(default_factory=dict)  # topic -> partition -> position
    _offset: int = 0
    _rest: str = ""

    def update(self) -> Tail:
        if not self.path.exists():
            return self
        with open(self.path) as f:
            f.seek(self._offset)
            text = f.read()
            self._offset = f.tell()
        lines = (self._rest + text).split("\n")
        self._rest = lines.pop()  # a line not complete yet
        for line in lines:
            self._take(line.split())
        return self

    def _take(self, parts: list[str]) -> None:
        if len(parts) == 7 and parts[0] == "r":
            topic, partition, offset, seq, stamp, received = parts[1], *map(int, parts[2:])
            if seq not in self.first.setdefault(topic, {}):
                self.first[topic][seq] = received
                self.stamp.setdefault(topic, {})[seq] = stamp
                self.where.setdefault(topic, {})[seq] = (partition, offset)
        elif len(parts) == 5 and parts[0] == "p":
            self.positions.setdefault(parts[1], {})[int(parts[2])] = int(parts[3])


# ---- the judgements (pure functions) ------------------------------------------------------------------------
def lag_events(source_first: dict[int, int], target_first: dict[int, int]) -> list[tuple[int, int]]:
    """(ms, +1 or -1), sorted: a record adds one to the lag when the source reader first received it and takes it
    away when the target reader first did; one the target reader had first, or never on the target, as said."""
    events = []
    for seq, at in source_first.items():
        on_target = target_first.get(seq)
        if on_target is None:
            events.append((at, 1))
        elif on_target > at:
            events += [(at, 1), (on_target, -1)]
    events.sort()
    return events


def highest_lag(events: list[tuple[int, int]], start_ms: int, end_ms: int) -> int:
    """The highest lag from ``start_ms`` to ``end_ms`` (:func:`lag_events`), the lag as the window opens included."""
    level, at = 0, 0
    while at < len(events) and events[at][0] <= start_ms:
        level += events[at][1]
        at += 1
    highest = level
    while at < len(events) and events[at][0] <= end_ms:
        level += events[at][1]
        highest = max(highest, level)
        at += 1
    return highest


def caught_up_at(source: Tail, target: Tail, source_topic: str, target_topic: str, ends: dict[int, int]) -> int | None:
    """The moment (ms) the target reader had every record the source holds below ``ends`` (partition -> end
    offset), or None while it has not or the source reader has not read that far."""
    read_to = source.positions.get(source_topic, {})
    if any(read_to.get(p, -1) < end for p, end in ends.items() if end > 0):
        return None
    on_target = target.first.get(target_topic, {})
    latest = 0
    for seq, (partition, offset) in source.where.get(source_topic, {}).items():
        if offset < ends.get(partition, 0):
            got = on_target.get(seq)
            if got is None:
                return None
            latest = max(latest, got)
    return latest


def missing_below(source: Tail, target: Tail, source_topic: str, target_topic: str, ends: dict[int, int]) -> int:
    """How many records the source holds below ``ends`` that the target reader has not received."""
    on_target = target.first.get(target_topic, {})
    return sum(
        1
        for seq, (partition, offset) in source.where.get(source_topic, {}).items()
        if offset < ends.get(partition, 0) and seq not in on_target
    )


def first_new(target: Tail, target_topic: str, after_ms: int) -> int | None:
    """The first receipt (ms) of a record on the target whose timestamp is after ``after_ms`` (module doc)."""
    stamps = target.stamp.get(target_topic, {})
    found = [at for seq, at in target.first.get(target_topic, {}).items() if stamps.get(seq, 0) > after_ms]
    return min(found) if found else None


def sampled_spans(
    times_ok: list[tuple[int, bool]], start_ms: int, end_ms: int, span_ms: int, away: list[tuple[int, int]] = ()
) -> dict:
    """Of the spans of ``span_ms`` from ``start_ms`` to ``end_ms`` (the last one may be shorter), those with at
    least one successful sample (``times_ok``: (ms, succeeded) per sample), leaving out the spans that overlap an
    interval of ``away`` (when nothing could answer: ``left_out``); the samples that succeeded and failed in the
    window; the longest time without a successful one (seconds, the window's edges counted)."""
    spans = max(1, -(-(end_ms - start_ms) // span_ms))
    gone = {n for n in range(spans) for a, b in away if a < start_ms + (n + 1) * span_ms and b > start_ms + n * span_ms}
    ok = sorted(at for at, good in times_ok if good and start_ms <= at <= end_ms)
    covered = {(at - start_ms) // span_ms for at in ok} & (set(range(spans)) - gone)
    failed = sum(1 for at, good in times_ok if not good and start_ms <= at <= end_ms)
    edges = [start_ms, *ok, end_ms]
    gap = max(b - a for a, b in zip(edges, edges[1:]))
    return {
        "spans": spans - len(gone),
        "covered": len(covered),
        "left_out": len(gone),
        "succeeded": len(ok),
        "failed": failed,
        "longest_gap_seconds": round(gap / 1000, 1),
    }


def quorum_lost(down: list[tuple[int, int]], voters: int) -> list[tuple[int, int]]:
    """The intervals in which a majority of ``voters`` was down (``down``: each stopped broker's (from, to) ms)."""
    events = sorted([(a, 1) for a, _b in down] + [(b, -1) for _a, b in down])
    lost, level, since = [], 0, 0
    for at, step in events:
        before, level = level, level + step
        if before * 2 < voters <= level * 2:
            since = at
        elif level * 2 < voters <= before * 2:
            lost.append((since, at))
    return lost
