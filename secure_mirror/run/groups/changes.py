"""Which groups a sync pass plans, and what it remembers between passes (pure).

A pass must ask the source for every selected group's committed offsets: nothing else says that a group's offsets
moved (a group committing without members, as Flink's source does, stays ``Empty``). But with thousands of groups,
most of them idle, the rest of a pass follows what changed: only a group that is new, whose source offsets moved,
whose target state changed (members came or went), or that was not settled when last planned (a partition ahead of
the mirror or not translatable yet, members on the target, a refused read or write) has its target offsets asked,
its offsets translated and its changes written. Every ``FULL_EVERY``-th pass plans every group, so what happened on
the target alone (a group deleted, offsets reset by hand) is seen within that many passes.

A translated offset inside the map stays what it was as the map grows (the earliest target copy: later copies lie
after it), so a settled group whose source offsets did not move has nothing new to say. One at or past the map's end
does not: it is the target end of the last segment, and once the mirror copies the record at that offset, it becomes
that record's copy (past the sink's transaction marker in exactly_once: the same record for a read_committed
consumer, but another offset). So a group is also planned when the map of a partition it was translated at the end
of has grown (:func:`map_ends`: one comparison per such partition, no request); a group at the end of a partition
that stays quiet is not."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from secure_mirror.run.groups.decide import COMMIT, IN_SYNC, TARGET_AHEAD, GroupOffsets, Plan, Row
from secure_mirror.run.groups.offset_map import Segment
from secure_mirror.run.groups.translate import BEFORE, TRANSLATED

TopicPartition = tuple[str, int]
FULL_EVERY = 12  # a full pass every 12 (each minute at the default interval of 5 s)
# Kafka's group states with members (the classic protocol's, and KIP-848's): a group in one is not committed to
ACTIVE_STATES = frozenset({"Stable", "PreparingRebalance", "CompletingRebalance", "Assigning", "Reconciling"})


@dataclass
class Memory:
    """What the passes so far found, per group: the source offsets it was last planned with, its rows and why it
    was skipped then, whether it was settled, and the target's state of each group at the last pass."""

    offsets: dict[str, Mapping[TopicPartition, tuple[int, str]]] = field(default_factory=dict)
    rows: dict[str, list[Row]] = field(default_factory=dict)
    skipped: dict[str, str] = field(default_factory=dict)
    unsettled: set[str] = field(default_factory=set)
    target_states: dict[str, str] = field(default_factory=dict)
    passes: int = 0
    # group -> the partitions it was translated at the end of the map, each with the map's (source) end then
    at_end: dict[str, dict[TopicPartition, int]] = field(default_factory=dict)

    @property
    def full_pass_due(self) -> bool:
        return self.passes % FULL_EVERY == 0


def map_ends(maps: Mapping[TopicPartition, Sequence[Segment]]) -> dict[TopicPartition, int]:
    """Each mapped source partition's end: the source offset after its last segment."""
    return {tp: max(seg.source_end for seg in segments) for tp, segments in maps.items() if segments}


def to_plan(
    memory: Memory,
    sources: Mapping[str, GroupOffsets],
    target_states: Mapping[str, str],
    full: bool,
    ends: Mapping[TopicPartition, int] | None = None,
) -> list[str]:
    """The groups this pass plans: all that answered on a full pass; otherwise those new to the memory, whose source
    offsets moved, whose target state changed, that were not settled, or that were translated at the end of a
    partition's map that has grown since (``ends``: :func:`map_ends` now). A group the source did not answer for is
    not planned (its error is said; nothing is known to move)."""
    ends = ends or {}
    return sorted(
        group
        for group, source in sources.items()
        if source.error is None
        and (
            full
            or group not in memory.offsets
            or memory.offsets[group] != source.offsets
            or group in memory.unsettled
            or memory.target_states.get(group) != target_states.get(group)
            or any(ends.get(tp) != end for tp, end in memory.at_end.get(group, {}).items())
        )
    )


def settled(rows: Sequence[Row], skipped: bool, failed: bool, target: GroupOffsets | None) -> bool:
    """Whether a planned group has nothing left to do until its source offsets move: the target answered, nothing
    was skipped or failed, and every partition is translated and in place (committed now, in sync, or the target
    ahead) or before the map (which never grows backwards)."""
    if skipped or failed or (target is not None and target.error is not None):
        return False
    return all(
        (row.state == TRANSLATED and row.action in (COMMIT, IN_SYNC, TARGET_AHEAD)) or row.state == BEFORE
        for row in rows
    )


def remember(
    memory: Memory,
    sources: Mapping[str, GroupOffsets],
    targets: Mapping[str, GroupOffsets],
    target_states: Mapping[str, str],
    plan: Plan,
    failed: Mapping[str, str],
    ends: Mapping[TopicPartition, int] | None = None,
) -> None:
    """One pass's findings into ``memory``: the planned groups' (``targets``' keys) offsets, rows, settlement and the
    partitions translated at the end of the map (``ends``: :func:`map_ends` of the map the pass translated with);
    groups no longer selected (or gone from the source) forgotten; the target's states kept for the next pass."""
    rows: dict[str, list[Row]] = {}
    for row in plan.rows:
        rows.setdefault(row.group, []).append(row)
    for group in targets:
        source = sources[group]
        memory.offsets[group] = source.offsets
        memory.rows[group] = rows.get(group, [])
        memory.skipped.pop(group, None)
        if group in plan.skipped:
            memory.skipped[group] = plan.skipped[group]
        ok = settled(memory.rows[group], group in plan.skipped, group in failed, targets[group])
        (memory.unsettled.discard if ok else memory.unsettled.add)(group)
        memory.at_end.pop(group, None)
        if at_end := _at_end(memory.rows[group], ends or {}):
            memory.at_end[group] = at_end
    for gone in [g for g in memory.offsets if g not in sources]:
        for kept in (memory.offsets, memory.rows, memory.skipped, memory.at_end):
            kept.pop(gone, None)
        memory.unsettled.discard(gone)
    memory.target_states = dict(target_states)
    memory.passes += 1


def _at_end(rows: Sequence[Row], ends: Mapping[TopicPartition, int]) -> dict[TopicPartition, int]:
    """The partitions of ``rows`` translated at (or past) the end of their map, each with that end."""
    out = {}
    for row in rows:
        tp = (row.topic, row.partition)
        if row.state == TRANSLATED and tp in ends and row.source_offset >= ends[tp]:
            out[tp] = ends[tp]
    return out


def whole(memory: Memory) -> Plan:
    """Every remembered group's rows and skips as one plan (what the summary of a pass counts)."""
    return Plan(rows=[row for group in sorted(memory.rows) for row in memory.rows[group]], skipped=dict(memory.skipped))
