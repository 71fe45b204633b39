"""The shape of ``groups --json`` (its JSON Schema is ``schema/groups-output.schema.json``, generated from these
models: ``secure-mirror schema --of groups``) and the table ``groups`` and ``failover`` print."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from secure_mirror.run.groups import decide
from secure_mirror.run.groups.session import Observation

State = Literal["translated", "ahead_of_mirror", "before_map", "not_translatable"]
Action = Literal["commit", "in_sync", "target_ahead", "skipped_active", "none"]


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
    partitions: list[GroupPartition]


class GroupsOutput(BaseModel):
    """``groups --json``: per group and source partition, the translation and the target's committed offset."""

    source_alias: str
    target_alias: str
    offset_map_topic: str
    checkpoints_topic: str
    groups: list[GroupReport]


def _side(found: decide.GroupOffsets | None) -> GroupSide:
    if found is None:
        return GroupSide(state="Unknown", members=0, error="not asked")
    return GroupSide(state=found.state, members=found.members, error=found.error)


def output(
    observation: Observation, plan: decide.Plan, aliases: tuple[str, str], topics: tuple[str, str]
) -> GroupsOutput:
    rows: dict[str, list[decide.Row]] = {}
    for row in plan.rows:
        rows.setdefault(row.group, []).append(row)
    return GroupsOutput(
        source_alias=aliases[0],
        target_alias=aliases[1],
        offset_map_topic=topics[0],
        checkpoints_topic=topics[1],
        groups=[
            GroupReport(
                group=group,
                source=_side(observation.sources[group]),
                target=_side(observation.targets.get(group)),
                partitions=[GroupPartition.model_validate(row.to_dict()) for row in rows.get(group, [])],
            )
            for group in sorted(observation.sources)
        ],
    )


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
