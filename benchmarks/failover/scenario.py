"""The failover scenario, pure: each partition's layout of committed, aborted and plain transactions (seeded), the
records written, the group's final points, and what a group reads on the target judged against what it consumed on
the source (:func:`exact_range`, :func:`counts`)."""

from __future__ import annotations

import random
import statistics

PARTITIONS = 6
KINDS = ("end", "half", "before_abort", "in_abort", "seeded", "none")  # the final point of each partition
MM2_INTERVALS = {"emit.checkpoints.interval.seconds": 60, "sync.group.offsets.interval.seconds": 60}


def layout(rng: random.Random) -> list[tuple[str, int]]:
    """Transactions in order, (end, size): committed and aborted ones alternating, plain records once, seeded sizes."""
    ends = ["commit", "abort", "commit", "abort", "none", "commit", "abort", "commit"]
    return [(end, rng.randint(5, 15)) for end in ends]


def transactions(pieces: list[tuple[str, int]], tag: str) -> list[dict]:
    """What ``load.produce_transactions`` writes: each piece's records in every partition, values ``tag|p|piece|i``."""
    return [
        {
            "records": [
                {"key": f"{p}".encode(), "value": f"{tag}|{p}|{n}|{i}".encode(), "partition": p}
                for i in range(size)
                for p in range(PARTITIONS)
            ],
            "end": end,
        }
        for n, (end, size) in enumerate(pieces)
    ]


def piece_offsets(pieces: list[tuple[str, int]]) -> list[tuple[str, int, int]]:
    """(end, first offset, offset after its records) of each piece in a partition; a transaction's marker follows."""
    out, at = [], 0
    for end, size in pieces:
        out.append((end, at, at + size))
        at += size + (end != "none")
    return out


def final_points(pieces: list[tuple[str, int]], rng: random.Random) -> dict[int, tuple[str, int]]:
    """Per partition, the kind of its final committed point (shuffled, seeded) and the offset."""
    spans = piece_offsets(pieces)
    end = spans[-1][2] + (spans[-1][0] != "none")
    aborted = [(first, after) for kind, first, after in spans if kind == "abort"]
    visible = [o for kind, first, after in spans if kind != "abort" for o in range(first, after)]
    at = {
        "end": end,
        "half": visible[len(visible) // 2],
        "before_abort": aborted[-1][0] - 1,  # the commit marker of the transaction before the last aborted one
        "in_abort": (aborted[0][0] + aborted[0][1]) // 2,
        "seeded": rng.randint(1, end - 1),
        "none": 0,
    }
    kinds = rng.sample(KINDS, len(KINDS))
    return {p: (kind, at[kind]) for p, kind in enumerate(kinds[:PARTITIONS])}


def exact_range(records: list[tuple[int, int]], position: int, target_end: int) -> tuple[int, int]:
    """The target offsets from which a read_committed reader of one partition reads exactly the records not consumed
    at source ``position``: ``records`` are (source offset, target offset) of every copy on the target. Empty
    (lower > upper) when copies of consumed and unconsumed records interleave (at_least_once rewrites)."""
    consumed = [t for s, t in records if s < position]
    unconsumed = [t for s, t in records if s >= position]
    return (max(consumed) + 1 if consumed else 0), (min(unconsumed) if unconsumed else target_end)


def counts(source: list[tuple[int, int, bytes]], read: list[tuple[int, int, bytes]], position: int) -> dict:
    """One partition: records read again (consumed on the source) and skipped (neither consumed nor read)."""
    consumed = {v for _, o, v in source if o < position}
    unread = {v for _, o, v in source if o >= position}
    values = [v for _, _, v in read]
    return {
        "re_read": sum(1 for v in values if v in consumed),
        "skipped": len(unread - set(values)),
        "unconsumed": len(unread),
        "read": len(values),
    }


def spread(values: list[float]) -> dict | None:
    return (
        {"min": min(values), "median": statistics.median(values), "max": max(values), "partitions": len(values)}
        if values
        else None
    )
