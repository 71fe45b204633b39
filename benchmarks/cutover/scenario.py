"""The cut-over scenario, pure: the seeded topics, producers, readers and groups; each step's time read from the
cut-over's report; what each group reads on the target judged against what it had consumed on the source; and
MirrorMaker 2's manual procedure, its steps counted."""

from __future__ import annotations

import random
from datetime import datetime

from benchmarks.failover.scenario import counts

TOPICS, GROUPS, PRODUCERS, READERS = 20, 50, 4, 5
GOAL_SECONDS = 60.0


def scenario(rng: random.Random, topics: int = TOPICS, groups: int = GROUPS) -> dict:
    """Topics (partitions, records per partition), each topic's producer, each group's reader and committed offsets
    (topic -> partition -> offset), all seeded. Names are short; a contender prefixes them."""
    records = {f"t{i:02d}": [rng.randint(20, 60) for _ in range(rng.randint(2, 4))] for i in range(topics)}
    names = sorted(records)
    committed = {}
    for g in range(groups):
        chosen = sorted(rng.sample(names, rng.randint(1, 3)))
        committed[f"g{g:02d}"] = {t: [rng.randint(0, n) for n in records[t]] for t in chosen}
    return {
        "records": records,
        "producer": {t: f"p{i % PRODUCERS}" for i, t in enumerate(names)},
        "reader": {g: f"r{i % READERS}" for i, g in enumerate(sorted(committed))},
        "committed": committed,
    }


def seconds_between(started: str, ended: str) -> float:
    return (datetime.fromisoformat(ended) - datetime.fromisoformat(started)).total_seconds()


def step_times(report: dict) -> dict:
    """Each step's seconds from the cut-over's report, the whole command, and from the end of the drain to the end of
    the report step (sync, stop, promote, report)."""
    steps = {s["name"]: s for s in report["steps"]}
    out = {
        name: seconds_between(s["started"], s["ended"]) if s["started"] and s["ended"] else None
        for name, s in steps.items()
    }
    first, last = report["steps"][0], report["steps"][-1]
    drained = steps.get("drain", {}).get("ended")
    return {
        "steps": out,
        "total": seconds_between(first["started"], last["ended"]) if first["started"] and last["ended"] else None,
        "after_drain": seconds_between(drained, last["ended"]) if drained and last["ended"] else None,
    }


def group_reads(
    committed: dict[str, list[int]],
    target_offsets: dict[str, dict[int, int]],
    source: dict[str, list[tuple[int, int, bytes]]],
    target: dict[str, list[tuple[int, int, bytes]]],
    ends: dict[str, dict[int, int]],
) -> dict:
    """One group: per topic (source names) and partition, what a read_committed consumer of the group reads on the
    target from its committed offset (``target_offsets``, by source topic) against what it had not consumed on the
    source (``committed``): re-read, skipped (failover's :func:`counts`). A partition without a target offset, or with
    one past the end, is listed: ``auto.offset.reset=error`` would fail there."""
    out = {"re_read": 0, "skipped": 0, "unconsumed": 0, "read": 0, "without_target_offset": [], "out_of_range": []}
    for topic, positions in committed.items():
        for p, position in enumerate(positions):
            at = target_offsets.get(topic, {}).get(p)
            if at is None:
                out["without_target_offset"].append(f"{topic}-{p}")
                continue
            if not 0 <= at <= ends[topic][p]:
                out["out_of_range"].append(f"{topic}-{p}")
                continue
            mine = [r for r in source[topic] if r[0] == p]
            read = [r for r in target[topic] if r[0] == p and r[1] >= at]
            for key, value in counts(mine, read, position).items():
                out[key] += value
    return out


def summed(per_group: dict[str, dict]) -> dict:
    """The groups' counts added up, and the groups that re-read, skipped or could not start."""
    rows = per_group.values()
    return {
        "groups": len(per_group),
        "re_read": sum(r["re_read"] for r in rows),
        "skipped": sum(r["skipped"] for r in rows),
        "unconsumed": sum(r["unconsumed"] for r in rows),
        "groups_re_reading": sorted(g for g, r in per_group.items() if r["re_read"]),
        "groups_skipping": sorted(g for g, r in per_group.items() if r["skipped"]),
        "partitions_without_target_offset": sum(len(r["without_target_offset"]) for r in rows),
        "partitions_out_of_range": sum(len(r["out_of_range"]) for r in rows),
    }


def manual_steps(producers: int, readers: int) -> list[dict]:
    """MirrorMaker 2's manual cut-over as an operator runs it (Kafka's documentation, KIP-382), commands counted."""
    return [
        {
            "step": "stop the producers: remove their WRITE grants on the source (kafka-acls --remove)",
            "by_hand": producers,
        },
        {"step": "wait until the target holds every record (compare end offsets, repeated)", "by_hand": 1},
        {
            "step": "wait for checkpoints and group offset sync (kafka-consumer-groups --describe, repeated)",
            "by_hand": 1,
        },
        {"step": "stop MirrorMaker 2", "by_hand": 1},
        {"step": "grant the producers on the target (kafka-acls --add --producer)", "by_hand": producers},
        {"step": "grant the consumers on the target (kafka-acls --add --consumer)", "by_hand": readers},
    ]


def last_change(history: list[tuple[float, dict]], since: float) -> float:
    """The time of the last reading in ``history`` ((time, offsets)) that differs from the one before, at least
    ``since``: when the synced offsets settled."""
    settled = since
    for (_, before), (at, now) in zip(history, history[1:], strict=False):
        if now != before:
            settled = max(settled, at)
    return settled
