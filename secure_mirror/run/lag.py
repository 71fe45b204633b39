"""Per topic-partition lag of the mirror: the source's end offset against the offset the checkpoint committed.

The table is the one Kafka's consumer offset checker prints (Group Topic Partition Offset LogEnd Lag). It reads
only the checkpoint folder and the source cluster, so it works while the job runs and after it stopped. With
heartbeats on, :func:`lag_heartbeat` also reads the flow's newest heartbeat on the target and flags it when it is
older than ``mirror.heartbeats.stale_after_seconds``, traffic or not (docs/heartbeats.md).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

from secure_mirror.identities import Caller
from secure_mirror.profile.models import Profile
from secure_mirror.run import checkpoint
from secure_mirror.run.clients import end_offsets, given_or_own
from secure_mirror.run.heartbeat_reader import flow_heartbeat
from secure_mirror.run.heartbeats import HeartbeatState


@dataclass(frozen=True)
class LagRow:
    group: str
    topic: str
    partition: int
    offset: int | None  # committed by the mirror; None: not mirrored yet
    log_end: int | None  # None: the source no longer shows the topic (deleted, or not describable by the mirror)
    lag: int | None  # None when log_end is unknown: not 0, which would read as "caught up"
    unread: str | None = None  # why the source's end offset could not be read (no leader, a leader down)

    def to_dict(self) -> dict:
        return asdict(self)


def lag_rows(
    profile: Profile,
    ends: dict[tuple[str, int], tuple[int, int]],
    committed: dict[tuple[str, int], int],
    unread: dict[tuple[str, int], str] | None = None,
) -> list[LagRow]:
    """Rows from the source's (low, high) watermarks, the partitions whose end offsets could not be read (``unread``:
    why) and the committed offsets (pure; tested on its own)."""
    group = profile.group_prefix
    unread = unread or {}
    rows = []
    for topic, partition in sorted(set(ends) | set(committed) | set(unread)):
        offset = committed.get((topic, partition))
        if (topic, partition) not in ends:
            rows.append(LagRow(group, topic, partition, offset, None, None, unread.get((topic, partition))))
            continue
        low, high = ends[(topic, partition)]
        behind = high - (
            offset if offset is not None else (low if profile.mirror.starting_offsets == "earliest" else high)
        )
        rows.append(LagRow(group, topic, partition, offset, high, max(0, behind)))
    return rows


def lag(profile: Profile, *, identities: Caller | None = None) -> list[LagRow]:
    """The lag table of ``profile``'s mirror (source end offsets read with the source identity: ``identities``', left
    open, or a set of its own)."""
    committed = checkpoint.mirrored_to(profile)
    with given_or_own(profile, identities) as clients:
        marks = clients.call(
            "source", end_offsets, sorted({t for t, _ in committed}), profile.selection().java_pattern()
        )
    return lag_rows(profile, marks.ends, committed, marks.unread)


def lag_heartbeat(profile: Profile, *, identities: Caller | None = None) -> HeartbeatState | None:
    """The flow's newest heartbeat on the target, judged (None when the profile turns heartbeats off); read with
    ``identities``, left open, or a set of its own."""
    if not profile.mirror.heartbeats.enabled:
        return None
    with given_or_own(profile, identities) as clients:
        return flow_heartbeat(profile, clients)


def format_table(rows: list[LagRow]) -> str:
    header = ("Group", "Topic", "Partition", "Offset", "LogEnd", "Lag")
    cells = [header] + [
        (
            r.group,
            r.topic,
            str(r.partition),
            "-" if r.offset is None else str(r.offset),
            "?" if r.log_end is None else str(r.log_end),
            "?" if r.lag is None else str(r.lag),
        )
        for r in rows
    ]
    widths = [max(len(row[i]) for row in cells) for i in range(len(header))]
    lines = [
        "  ".join(
            cell.ljust(width) if i < 2 else cell.rjust(width) for i, (cell, width) in enumerate(zip(row, widths))
        ).rstrip()
        for row in cells
    ]
    known = [r.lag for r in rows if r.lag is not None]
    footer = [f"total lag: {sum(known)} records over {len(known)} partitions"]
    if unread := [r for r in rows if r.unread is not None]:
        named = "; ".join(f"{r.topic}[{r.partition}]: {r.unread}" for r in unread[:10])
        more = f" and {len(unread) - 10} more" if len(unread) > 10 else ""
        footer.append(f"unread: {len(unread)} partition(s) whose lag is unknown, not 0: {named}{more}")
    if unknown := sorted({r.topic for r in rows if r.lag is None and r.unread is None}):
        footer.append(
            f"unknown: {', '.join(unknown)} no longer shown by the source (deleted, or the mirror identity "
            "may no longer DESCRIBE it); the job stops on a deleted topic (exit 5)"
        )
    return "\n".join(lines + footer)
