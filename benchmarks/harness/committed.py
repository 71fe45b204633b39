"""When a transactional contender is done: the one way both harnesses (``benchmarks/harness/bench.py`` and
``benchmarks/scale/``) count the records a contender that writes in transactions has put on the target.

Such a contender (the job with ``exactly_once``, MirrorMaker 2 with exactly-once) has finished when a
``read_committed`` reader of the target sees all N records, and not before: the records of an open transaction, its
commit markers and the records of an aborted one all take offsets, so the end offsets run ahead of what such a
reader sees. The mirror's own book-keeping is no clock for it: the positions the job's sink commits have changed
their groups once already (one group per source partition, then one per topic, which left ``scripts/bench``
waiting for groups that were no longer written), and MirrorMaker 2 keeps none there. So the records themselves are
counted, each once: a partition is read from where the last reading stopped up to its last stable offset (below it
every transaction is decided, committed or aborted), and only once the offsets left to read could bring the count to
N, so that a contender's own run is not slowed by the harness reading it. A contender without transactions writes
one record per offset and is counted by its end offsets (:func:`on_target`).

The decisions are pure functions of offsets and counts (:func:`unread`, :func:`worth_reading`, :func:`on_target`);
:class:`ReadCommitted` asks the target and reads (``benchmarks/harness/reading.py``).
"""

from __future__ import annotations

import sys
import threading

from benchmarks.harness import reading

Partition = tuple[str, int]
CLOSE_TIMEOUT = 30.0  # seconds ReadCommitted.close waits for the consumer's close


def unread(stable: dict[Partition, int], read_to: dict[Partition, int]) -> dict[Partition, tuple[int, int]]:
    """Each partition's offsets not read yet, ``[from, to)``: from where the last reading stopped (0 at first) to its
    last stable offset now; partitions with nothing new are left out."""
    return {tp: (read_to.get(tp, 0), end) for tp, end in stable.items() if end > read_to.get(tp, 0)}


def worth_reading(records: int, counted: int, ranges: dict[Partition, tuple[int, int]]) -> bool:
    """Whether reading ``ranges`` could bring the count to ``records``: an offset holds one record at the most (a
    commit marker or an aborted record holds one and counts none), so while what is counted and the offsets left
    stay below N, reading can wait."""
    return counted + sum(to - start for start, to in ranges.values()) >= records


def on_target(records: int, held: int, reader: ReadCommitted | None) -> int:
    """The records that count as on the target: ``held`` (the sum of its end offsets) for a contender without
    transactions; what a read_committed reader sees for one with (``reader``), read only once the end offsets hold N
    or more (fewer offsets cannot hold N committed records)."""
    if reader is None:
        return held
    return reader.seen(records) if held >= records else reader.counted


class ReadCommitted:
    """The records a read_committed reader of ``partitions`` (target topic -> partition count) sees, counted once
    each as they become visible; one kept consumer (a new one per reading would log in each time)."""

    def __init__(self, conf: dict, partitions: dict[str, int]):
        self.conf = conf
        self.partitions = [(t, p) for t, count in partitions.items() for p in range(count)]
        self.read_to: dict[Partition, int] = {}
        self.counted = 0
        self._consumer = None

    def seen(self, records: int | None = None) -> int:
        """The count now. With ``records`` the new offsets are read only when they could bring it to N
        (:func:`worth_reading`); without, always (the count of a run that did not finish)."""
        ranges = unread(reading.partition_end_offsets(self.conf, self.partitions, stable=True), self.read_to)
        if ranges and (records is None or worth_reading(records, self.counted, ranges)):
            if self._consumer is None:
                self._consumer = reading.committed_reader(self.conf)
            self.counted += reading.count_committed(self._consumer, ranges)
            self.read_to.update({tp: to for tp, (_, to) in ranges.items()})
        return self.counted

    def close(self, timeout: float = CLOSE_TIMEOUT) -> None:
        """Close the consumer, waiting ``timeout`` seconds at most: librdkafka's close once hung for good after an
        ``exactly_once`` run (its fetches at offsets past the ranges read, refused as out of range), and the
        harness with it; a consumer still closing then is left to its thread, and the runs go on."""
        if self._consumer is not None:
            closing = threading.Thread(target=self._consumer.close, name="read-committed-close", daemon=True)
            closing.start()
            closing.join(timeout)
            if closing.is_alive():
                print(f"bench: the read_committed reader did not close in {timeout:.0f} s; left", file=sys.stderr)
            self._consumer = None
