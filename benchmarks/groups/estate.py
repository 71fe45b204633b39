"""The estate, pure: N consumer groups over the estate's topics, shaped like a shared cluster's (seeded): most idle,
some committing all the time, a few with members on the source and a few reading a transactional topic; each
group's committed offsets at the start, and the offsets an active group commits next."""

from __future__ import annotations

import random
from dataclasses import dataclass, field

TOPICS, PARTITIONS, RECORDS = 20, 10, 400  # the estate's topics, their partitions, the records of each partition
TX_TOPIC, TX_PARTITIONS = "estate.tx", 6  # written in transactions, committed and aborted
MEMBER_GROUPS, TX_GROUPS = 5, 5


def topic_name(i: int) -> str:
    return f"estate.t{i:02d}"


@dataclass(frozen=True)
class Group:
    name: str
    kind: str  # idle, active, member, tx
    topic: str
    partitions: int
    start: dict[int, int] = field(default_factory=dict)  # partition -> offset committed before the contender starts


@dataclass(frozen=True)
class Estate:
    groups: tuple[Group, ...]
    seed: int

    def of(self, kind: str) -> list[Group]:
        return [g for g in self.groups if g.kind == kind]

    @property
    def names(self) -> list[str]:
        return [g.name for g in self.groups]

    def shape(self) -> dict:
        kinds = ("idle", "active", "member", "tx")
        return {
            "groups": len(self.groups),
            **{kind: len(self.of(kind)) for kind in kinds},
            "topics": TOPICS,
            "partitions_per_topic": PARTITIONS,
            "records_per_partition": RECORDS,
            "group_partitions": sum(g.partitions for g in self.groups),
        }


def estate(n: int, active: int, seed: int) -> Estate:
    """``n`` groups in all: ``active`` committing, MEMBER_GROUPS with members, TX_GROUPS on the transactional
    topic, the rest idle; each on one topic, at a seeded offset of each partition in the first half of the records
    (an active group moves forward from there)."""
    rng = random.Random(seed)
    idle = n - active - MEMBER_GROUPS - TX_GROUPS
    if idle < 0:
        raise ValueError(
            f"{n} groups cannot hold {active} active, {MEMBER_GROUPS} with members and {TX_GROUPS} on {TX_TOPIC}"
        )
    kinds = ["active"] * active + ["idle"] * idle
    rng.shuffle(kinds)
    groups = []
    for i, kind in enumerate(kinds):
        topic = topic_name(rng.randrange(TOPICS))
        groups.append(Group(f"estate-{kind}-{i:05d}", kind, topic, PARTITIONS, _start(rng, PARTITIONS, RECORDS // 2)))
    groups += [Group(f"estate-member-{i}", "member", topic_name(i), PARTITIONS) for i in range(MEMBER_GROUPS)]
    groups += [
        Group(f"estate-tx-{i}", "tx", TX_TOPIC, TX_PARTITIONS, _start(rng, TX_PARTITIONS, 20)) for i in range(TX_GROUPS)
    ]
    return Estate(tuple(groups), seed)


def _start(rng: random.Random, partitions: int, upto: int) -> dict[int, int]:
    return {p: rng.randint(1, upto) for p in range(partitions)}


def next_offsets(group: Group, step: int) -> dict[int, int]:
    """What an active group commits at its ``step``-th commit: each partition one record further (never past the
    records there, so every commit lies within what the mirror copied)."""
    return {p: min(RECORDS, at + step) for p, at in group.start.items()}


def exact(group: Group, source: dict[int, int], target: dict[int, int]) -> dict:
    """A group's target offsets judged against its source offsets, on a fresh target topic of an estate topic where
    every record keeps its offset (records written plainly, copied once): records a consumer of the group would read
    again on the target (``re_read``), skip (``skipped``), partitions with no target offset (``missing``)."""
    re_read = skipped = missing = 0
    for p, at in source.items():
        if p not in target:
            missing += 1
        elif target[p] < at:
            re_read += at - target[p]
        else:
            skipped += target[p] - at
    return {"re_read": re_read, "skipped": skipped, "missing": missing}
