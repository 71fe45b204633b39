"""The shape of ``groups --json`` (its JSON Schema is ``schema/groups-output.schema.json``, generated from these
models: ``secure-mirror schema --of groups``), the table ``groups`` and ``failover`` print, and the summary ``groups``
prints above it: each group's place in the sync (:func:`sync_state`), counted with the groups' states on the source."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from secure_mirror.run.groups import decide
from secure_mirror.run.groups.session import Observation

State = Literal["translated", "ahead_of_mirror", "before_map", "not_translatable"]
Action = Literal["commit", "in_sync", "target_ahead", "skipped_active", "none"]
SyncState = Literal[
    "following",
    "to_commit",
    "waiting",
    "skipped_active",
    "not_translatable",
    "target_ahead",
    "no_offsets",
    "unanswered",
]
# Each sync state in words, in the summary's order (which one a group is in: :func:`sync_state`).
SYNC_WORDS: dict[str, str] = {
    "following": "following the mirror",
    "to_commit": "to commit (the target behind the translation)",
    "waiting": "waiting for the mirror",
    "skipped_active": "skipped (active members on the target)",
    "not_translatable": "not translatable",
    "target_ahead": "target ahead",
    "no_offsets": "with no offset on a mirrored topic",
    "unanswered": "not answered by a cluster",
}
QUIET = ("following", "no_offsets")  # the sync states that need no attention: every other is listed by the summary


class GroupPartition(BaseModel):
    topic: str = Field(description="the source topic")
    partition: int
    source_offset: int = Field(description="the group's committed offset on the source")
    target_topic: str = Field(description="its name on the target (empty when the mirror does not copy it)")
    target_offset: int | None = Field(description="the translation (null unless state is translated)")
    target_committed: int | None = Field(description="the target group's committed offset now (null: none)")
    state: State = Field(
        description="translated, ahead_of_mirror (translated once mirrored), before_map, not_translatable"
    )
    reason: str = Field(description="why, when not translated")
    action: Action = Field(
        description="what sync or failover does: commit, or why not (target_ahead: never moved backwards)"
    )


class GroupSide(BaseModel):
    state: str = Field(description="Kafka's group state (Stable, Empty, Dead: no such group, ...)")
    members: int = Field(description="active members")
    error: str | None = Field(None, description="why the cluster did not answer for the group")


class GroupReport(BaseModel):
    group: str
    source: GroupSide
    target: GroupSide
    sync: SyncState = Field(
        description="the group's place in the sync: following (every partition translated and committed on the "
        "target), to_commit (translated, the target behind: the next pass or failover commits), waiting (a partition "
        "ahead of the mirror), skipped_active (active members on the target), not_translatable (a partition before "
        "the map or not translatable), target_ahead (the target past the translation: never moved back), "
        "no_offsets (no committed offset on a mirrored topic), unanswered (a cluster did not answer for it)"
    )
    partitions: list[GroupPartition]


class SyncCounts(BaseModel):
    """How many groups are in each sync state (:attr:`GroupReport.sync`)."""

    following: int
    to_commit: int
    waiting: int
    skipped_active: int
    not_translatable: int
    target_ahead: int
    no_offsets: int
    unanswered: int


class Summary(BaseModel):
    groups: int = Field(description="the groups shown, over every page")
    attention: int = Field(description="those whose sync state is neither following nor no_offsets")
    source_states: dict[str, int] = Field(description="Kafka's group state on the source (Stable, Empty ...) -> groups")
    sync_states: SyncCounts


class GroupsOutput(BaseModel):
    """``groups --json``: per group and source partition, the translation and the target's committed offset; the
    summary of every group shown, and one page of them (``--page-size``, ``--after``: groups in name order)."""

    source_alias: str
    target_alias: str
    offset_map_topic: str
    checkpoints_topic: str
    summary: Summary
    page_size: int | None = Field(description="the groups a page holds (null: one page holds them all)")
    pages: int = Field(description="how many pages of page_size hold every group")
    after: str | None = Field(description="this page's groups come after this name (--after; null: from the first)")
    next_after: str | None = Field(description="the --after of the next page (null: this page is the last)")
    groups: list[GroupReport] = Field(description="this page's groups, in name order")


def _side(found: decide.GroupOffsets | None) -> GroupSide:
    if found is None:
        return GroupSide(state="Unknown", members=0, error="not asked")
    return GroupSide(state=found.state, members=found.members, error=found.error)


def sync_state(source: GroupSide, target: GroupSide, partitions: list[GroupPartition]) -> SyncState:
    """A group's place in the sync: a cluster that did not answer, no offset, or its partitions' worst."""
    if source.error or target.error:
        return "unanswered"
    if not partitions:
        return "no_offsets"
    states, actions = {p.state for p in partitions}, {p.action for p in partitions}
    if "skipped_active" in actions:
        return "skipped_active"
    if states & {"before_map", "not_translatable"}:
        return "not_translatable"
    if "target_ahead" in actions:
        return "target_ahead"
    if "ahead_of_mirror" in states:
        return "waiting"
    return "to_commit" if "commit" in actions else "following"


def _report(group: str, observation: Observation, rows: list[decide.Row]) -> GroupReport:
    source, target = _side(observation.sources[group]), _side(observation.targets.get(group))
    partitions = [GroupPartition.model_validate(row.to_dict()) for row in rows]
    return GroupReport(
        group=group, source=source, target=target, sync=sync_state(source, target, partitions), partitions=partitions
    )


def summarise(groups: list[GroupReport]) -> Summary:
    """The groups counted by their state on the source and by their sync state."""
    counts = dict.fromkeys(SYNC_WORDS, 0)
    sources: dict[str, int] = {}
    for group in groups:
        counts[group.sync] += 1
        sources[group.source.state] = sources.get(group.source.state, 0) + 1
    return Summary(
        groups=len(groups),
        attention=sum(n for state, n in counts.items() if state not in QUIET),
        source_states=dict(sorted(sources.items())),
        sync_states=SyncCounts(**counts),
    )


def output(
    observation: Observation, plan: decide.Plan, aliases: tuple[str, str], topics: tuple[str, str]
) -> GroupsOutput:
    """Every group of the observation, on one page, with their summary (:func:`page` cuts pages of it)."""
    rows: dict[str, list[decide.Row]] = {}
    for row in plan.rows:
        rows.setdefault(row.group, []).append(row)
    groups = [_report(group, observation, rows.get(group, [])) for group in sorted(observation.sources)]
    return GroupsOutput(
        source_alias=aliases[0],
        target_alias=aliases[1],
        offset_map_topic=topics[0],
        checkpoints_topic=topics[1],
        summary=summarise(groups),
        page_size=None,
        pages=1 if groups else 0,
        after=None,
        next_after=None,
        groups=groups,
    )


def page(result: GroupsOutput, size: int | None, after: str | None) -> GroupsOutput:
    """The page of ``size`` groups (None: all) whose names sort after ``after`` (None: from the first), of a whole
    ``result`` (:func:`output`); the summary stays the whole's. A cursor, not a page number: a group created or
    deleted between two calls moves no other group to another page."""
    rest = [g for g in result.groups if after is None or g.group > after]
    shown = rest if size is None else rest[:size]
    total = len(result.groups)
    return result.model_copy(
        update={
            "page_size": size,
            "pages": (1 if total else 0) if size is None else -(-total // size),
            "after": after,
            "next_after": shown[-1].group if len(shown) < len(rest) else None,
            "groups": shown,
        }
    )


def summary_text(summary: Summary) -> str:
    """The summary ``groups`` prints above its table: the groups by state on the source, then by sync state."""
    counts = summary.sync_states.model_dump()
    by_source = ", ".join(f"{n} {state}" for state, n in summary.source_states.items()) or "none"
    by_sync = ", ".join(f"{counts[state]} {words}" for state, words in SYNC_WORDS.items() if counts[state]) or "none"
    return "\n".join(
        [
            f"{summary.groups} group{'' if summary.groups == 1 else 's'}",
            f"  by state on the source: {by_source}",
            f"  by sync state: {by_sync}",
        ]
    )


def overview(result: GroupsOutput, everything: bool) -> str:
    """What ``groups`` prints over the groups the profile selects (or a pattern matches): the summary, then the table
    of the groups that need attention (a sync state other than :data:`QUIET`), or of every group with ``everything``."""
    shown = result.groups if everything else [g for g in result.groups if g.sync not in QUIET]
    if everything:
        heading = "Every group:"
    elif shown:
        heading = f"{len(shown)} group{' needs' if len(shown) == 1 else 's need'} attention (--all lists every group):"
    else:
        return summary_text(result.summary) + "\nNo group needs attention (--all lists every group)."
    return "\n".join([summary_text(result.summary), "", heading, table(result.model_copy(update={"groups": shown}))])


HEADER = ("Group", "Topic", "Partition", "Source", "Target topic", "Translated", "Target", "State")


def table(result: GroupsOutput) -> str:
    """One line per group and partition, then each group's members and each reason below."""
    cells = [HEADER]
    notes = []
    for group in result.groups:
        for p in group.partitions:
            cells.append(
                (
                    group.group,
                    p.topic,
                    str(p.partition),
                    str(p.source_offset),
                    p.target_topic or "-",
                    "-" if p.target_offset is None else str(p.target_offset),
                    "-" if p.target_committed is None else str(p.target_committed),
                    p.state.replace("_", " ") + ("" if p.action in ("none", "commit") else f" ({p.action})"),
                )
            )
            if p.reason:
                notes.append(f"{group.group} {p.topic}-{p.partition}: {p.reason}")
        notes += [
            f"{group.group}: the {side} did not answer: {info.error}"
            for side, info in (("source", group.source), ("target", group.target))
            if info.error
        ]
        if not group.partitions and not group.source.error:
            notes.append(f"{group.group}: no committed offset on a mirrored topic of the source")
    widths = [max(len(row[i]) for row in cells) for i in range(len(HEADER))]
    lines = ["  ".join(cell.ljust(width) for cell, width in zip(row, widths)).rstrip() for row in cells]
    return "\n".join(lines + notes)
