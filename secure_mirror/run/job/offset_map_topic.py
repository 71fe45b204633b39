"""The offset map's topic on the target (docs/offset-map.md): the job's driver creates it, when the profile has groups
follow the mirror, before the first batch is written: one partition, ``cleanup.policy=delete``, and a retention
that covers the source topics' (:func:`retention_ms`). An existing topic is left as it is."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

DAY_MS = 86_400_000
FLOOR_MS = 7 * DAY_MS  # Kafka's default log.retention.hours (168)
MARGIN_MS = DAY_MS  # a record leaves the source a while after it was mirrored: lag, and whole log segments
FOR_EVER = -1


@dataclass(frozen=True)
class SourceRetention:
    """A source topic's ``cleanup.policy`` and ``retention.ms``, as its configuration says."""

    cleanup_policy: str
    retention_ms: int

    @property
    def for_ever(self) -> bool:
        """Records stay until compaction replaces them, or for ever."""
        return self.retention_ms < 0 or "delete" not in self.cleanup_policy.replace(" ", "").split(",")


def retention_ms(sources: Mapping[str, SourceRetention | None]) -> int:
    """The map topic's ``retention.ms``: a group's offset can only point at a record the source still holds, and a
    segment is written when its records are mirrored, so the map keeps segments as long as the longest-kept source
    topic keeps records, plus :data:`MARGIN_MS`, at least :data:`FLOOR_MS`. For ever (-1) when a source topic keeps
    records for ever (``retention.ms`` -1, or compacted) or a topic's configuration could not be read (``None``)."""
    known = list(sources.values())
    if not known:
        return FLOOR_MS
    if any(source is None or source.for_ever for source in known):
        return FOR_EVER
    return max(FLOOR_MS, max(source.retention_ms for source in known if source is not None) + MARGIN_MS)


def topic_configs(sources: Mapping[str, SourceRetention | None]) -> dict[str, str]:
    """The configuration the map topic is created with."""
    return {"cleanup.policy": "delete", "retention.ms": str(retention_ms(sources))}


def unread_note(topic: str, sources: Mapping[str, SourceRetention | None]) -> str | None:
    """What to tell the user when some source topics' retention could not be read (the map is then kept for ever)."""
    unread = sorted(name for name, source in sources.items() if source is None)
    if not unread:
        return None
    shown = ", ".join(unread[:3]) + (f" and {len(unread) - 3} more" if len(unread) > 3 else "")
    return (
        f"secure-mirror job: created the offset map topic {topic} with retention.ms=-1 (kept for ever): the retention "
        f"of {shown} could not be read (DESCRIBE_CONFIGS on the source topics); set its retention.ms to cover the "
        "source topics' retention"
    )
