"""Exact translation of a consumer group's committed source offset into the target offset it resumes at, from the
sink's offset map (docs/failover.md has the rule and why it re-reads and skips nothing in exactly_once).

A committed offset ``O`` means "the group consumed every record before ``O`` and none from ``O`` on". For one kept
source partition and its segments (:class:`~secure_mirror.run.groups.offset_map.Segment`):

- ``O`` inside segments: ``t + (O - s)``; several (at_least_once copies after a restart): the smallest, the earliest
  target copy, so a group never skips a record;
- ``O`` in a gap (compaction, aborted records, markers), or at the map's end: the ``target_end`` of the segment ending
  last at or before ``O`` (the smallest, if several copies end there). Only what a read_committed reader never sees
  lies between it and the next segment's ``t`` in exactly_once, so the consumer reads the same as from that ``t``;
  and should the map miss a segment there, the consumer reads those records again rather than skip them;
- ``O`` beyond everything mapped (and beyond the mirror's position): ahead of the mirror (translated once mirrored);
- ``O`` before the first segment: before the map (records copied before the map existed: not translated).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from secure_mirror.run.groups.offset_map import Segment

TRANSLATED = "translated"
AHEAD = "ahead_of_mirror"
BEFORE = "before_map"
NOT_TRANSLATABLE = "not_translatable"
STATES = (TRANSLATED, AHEAD, BEFORE, NOT_TRANSLATABLE)
# How each state reads in a sentence or a table.
WORDS = {
    TRANSLATED: "translated",
    AHEAD: "ahead of the mirror",
    BEFORE: "before the map",
    NOT_TRANSLATABLE: "not translatable",
}


@dataclass(frozen=True)
class Translation:
    state: str  # one of STATES
    target_offset: int | None = None  # set when state is TRANSLATED
    reason: str = ""  # why, when not translated

    @property
    def translated(self) -> bool:
        return self.state == TRANSLATED


def translate(offset: int, segments: Sequence[Segment], mirrored_to: int | None = None) -> Translation:
    """The target offset for the committed source ``offset`` of one partition whose map is ``segments`` (any order).

    ``mirrored_to``: the mirror's committed source position of the partition (its checkpoint), read before the map,
    when known: an ``offset`` past the map's end but not past it stepped only over records a read_committed reader
    never sees (markers and aborted records after the last mirrored record), and translates like the map's end."""
    if not segments:
        return Translation(AHEAD, reason="nothing of this partition is in the offset map yet")
    inside = [seg.target + (offset - seg.source) for seg in segments if seg.source <= offset < seg.source_end]
    if inside:
        return Translation(TRANSLATED, min(inside))
    before = [seg for seg in segments if seg.source_end <= offset]
    if not before:
        first = min(seg.source for seg in segments)
        return Translation(
            BEFORE, reason=f"the offset map starts at source offset {first}: records before it were copied before it"
        )
    last_end = max(seg.source_end for seg in segments)
    if offset > last_end and (mirrored_to is None or offset > mirrored_to):
        return Translation(AHEAD, reason=f"the mirror has copied this partition up to source offset {last_end}")
    previous_end = max(seg.source_end for seg in before)
    return Translation(TRANSLATED, min(seg.target_end for seg in before if seg.source_end == previous_end))


def inverted(segments: Iterable[Segment]) -> dict[tuple[str, int], list[Segment]]:
    """The way back's map from the forward's: each forward segment (source ``s``, target ``t``, ``n`` records, from
    a topic to its target name) read the other way, keyed by the target topic and partition. Where the way back keeps
    names and skips what the forward copied (provenance), these are the segments of every record that came from the
    source before the way back started: the groups that moved to the target translate back through them exactly, and
    through the way back's own segments past them (docs/cutover.md, failback)."""
    out: dict[tuple[str, int], list[Segment]] = {}
    for seg in segments:
        back = Segment(seg.target_topic or seg.topic, seg.partition, seg.target, seg.source, seg.count, seg.topic)
        out.setdefault((back.topic, back.partition), []).append(back)
    return out


def not_translatable(reason: str) -> Translation:
    return Translation(NOT_TRANSLATABLE, reason=reason)


def compact(segments: Iterable[Segment]) -> list[Segment]:
    """The segments in (source, target) order, each one that continues another on both sides merged into it (the same
    records at the same offsets: :func:`translate` answers alike) and exact repeats dropped."""
    merged: dict[tuple, Segment] = {}  # (topic, partition, target topic, source_end, target_end) -> segment
    for seg in sorted(set(segments)):
        where = (seg.topic, seg.partition, seg.target_topic)
        before = merged.pop((*where, seg.source, seg.target), None)
        if before is not None:
            seg = Segment(
                seg.topic, seg.partition, before.source, before.target, before.count + seg.count, seg.target_topic
            )
        key = (*where, seg.source_end, seg.target_end)
        if key not in merged or seg.source < merged[key].source:  # two ending alike on both sides: the longer covers
            merged[key] = seg
    return sorted(merged.values())
