"""The shapes of every command's ``--json``, as models: the commands print through them, and their JSON Schemas are
generated from them (``secure-mirror schema --of NAME``, committed as schema/NAME-output.schema.json). Shapes used
below the commands live with their producer: ``groups`` (run/groups/report.py), ``preflight`` (preflight/table.py),
``run``'s lines (run/json_lines.py), ``cutover``'s report (cutover/report.py)."""

from __future__ import annotations

import json
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from secure_mirror.cutover.report import CutoverReport
from secure_mirror.preflight.table import PreflightOutput
from secure_mirror.profile.warnings import ProfileWarning
from secure_mirror.render.consumer_acls import ConsumerAclsOutput
from secure_mirror.run.doctor import Item
from secure_mirror.run.groups.report import GroupsOutput
from secure_mirror.run.heartbeats import HeartbeatState
from secure_mirror.run.json_lines import RunLine
from secure_mirror.run.lag import LagRow
from secure_mirror.verify.compare import VerifyResult


class SideSummary(BaseModel):
    alias: str
    security_protocol: str
    mechanism: str | None
    principal: str | None  # as the brokers' authorizer sees it (None when it can only be read from a certificate)


class ValidateOutput(BaseModel):
    """``validate --json``: ok with the summary and warnings, or not ok with every problem (exit 2)."""

    ok: bool
    problems: list[str]
    warnings: list[ProfileWarning]
    source: SideSummary | None = None
    target: SideSummary | None = None
    subscribe_pattern: str | None = None
    rename: str | None = None


class RenderedEntry(BaseModel):
    path: str
    purpose: str
    secret: bool
    mode: str


class RenderOutput(BaseModel):
    """``render --json``: where the files went, each with its purpose and mode, and the warnings."""

    out: str
    files: list[RenderedEntry]
    warnings: list[ProfileWarning]


class Heartbeat(BaseModel):
    """The flow's newest heartbeat on the target, judged (docs/heartbeats.md)."""

    model_config = ConfigDict(populate_by_name=True)

    topic: str
    source: str = Field(description="the source cluster's alias")
    target: str = Field(description="the target cluster's alias")
    newest_ms: int | None = Field(alias="newest-ms", description="its timestamp (null: none of this flow found)")
    age_ms: int | None = Field(alias="age-ms")
    stale_after_seconds: int = Field(alias="stale-after-seconds")
    stale: bool = Field(description="older than stale-after-seconds, or none found")
    problem: str | None = Field(description="why the heartbeats topic could not be read (null: it was read)")


def heartbeat(state: HeartbeatState | None) -> Heartbeat | None:
    return None if state is None else Heartbeat.model_validate(state.to_dict())


class LagPartition(BaseModel):
    group: str = Field(description="the mirror's group prefix")
    topic: str
    partition: int
    offset: int | None = Field(description="the offset the mirror's checkpoint committed (null: not mirrored yet)")
    log_end: int | None = Field(description="the source's end offset (null: the source no longer shows the topic)")
    lag: int | None = Field(description="log_end - offset (null when log_end is unknown: never 0)")
    unread: str | None = Field(
        default=None, description="why the source's end offset could not be read (no leader, its leader down)"
    )


class LagOutput(BaseModel):
    """``lag --json``: per topic-partition, the source's end offset against the checkpoint; and the heartbeat."""

    partitions: list[LagPartition]
    heartbeat: Heartbeat | None = Field(description="null when mirror.heartbeats is off")


def lag_output(rows: list[LagRow], beat: HeartbeatState | None) -> LagOutput:
    return LagOutput(partitions=[LagPartition.model_validate(row.to_dict()) for row in rows], heartbeat=heartbeat(beat))


class Example(BaseModel):
    kind: Literal["missing", "extra", "duplicated"]
    times: int
    topic: str
    partition: int
    offset: int
    key: str | None = Field(description="as text (0x... when not UTF-8), cut at 60 characters")
    value: str | None
    headers: list[tuple[str, str | None]]


class Comparison(BaseModel):
    topic: str
    partition: int | None = Field(description="null: the whole topic (the mirror did not keep partitions)")
    target_topic: str
    source_records: int
    target_records: int
    source_digest: str
    target_digest: str
    missing: int
    extra: int
    duplicated: int
    listed: bool = Field(description="false: more differences than the sketch can list (counts only)")
    examples: list[Example]
    ok: bool


class Pending(BaseModel):
    topic: str
    partition: int
    records: int


class PartitionCount(BaseModel):
    topic: str
    target_topic: str
    finding: str
    fix: str


class Unread(BaseModel):
    topic: str
    partition: int | None = Field(description="null: the whole topic (the mirror did not keep partitions)")
    target_topic: str
    side: Literal["source", "target"] = Field(description="the side whose partition could not be read")
    why: str = Field(description="no leader, or its leader did not answer")


class VerifyOutput(BaseModel):
    """``verify --json``: source against target over the mirrored range (exit 0 when ok, else 1)."""

    ok: bool
    checkpoint_batch: int
    source_records: int
    target_records: int
    comparisons: list[Comparison]
    not_mirrored: list[Pending] = Field(description="source partitions the checkpoint does not know yet")
    partition_counts: list[PartitionCount] = Field(
        description="target topics whose partition count is not the source's where partitions are kept, with the fix"
    )
    unread: list[Unread] = Field(
        default_factory=list, description="what could not be read and so was not compared (ok is then false)"
    )
    heartbeat: Heartbeat | None = Field(description="null when mirror.heartbeats is off")


def verify_output(result: VerifyResult) -> VerifyOutput:
    return VerifyOutput.model_validate({**result.to_dict(), "heartbeat": heartbeat(result.heartbeat)})


class DoctorItem(BaseModel):
    name: str
    ok: bool
    found: str
    fix: str
    required: bool = Field(description="false: a note; the machine is ready without it")


class DoctorOutput(BaseModel):
    """``doctor --json``: what this machine has and lacks (exit 4 when a required item is missing)."""

    ready: bool
    items: list[DoctorItem]


def doctor_output(items: list[Item], ready: bool) -> DoctorOutput:
    return DoctorOutput(ready=ready, items=[DoctorItem.model_validate(item.to_dict()) for item in items])


SHAPES: dict[str, type[BaseModel]] = {
    "validate": ValidateOutput,
    "render": RenderOutput,
    "groups": GroupsOutput,
    "lag": LagOutput,
    "verify": VerifyOutput,
    "doctor": DoctorOutput,
    "preflight": PreflightOutput,
    "acls": ConsumerAclsOutput,
    "run": RunLine,
    "cutover": CutoverReport,
    "failback": CutoverReport,
}


def schema_text(name: str) -> str:
    schema = SHAPES[name].model_json_schema(mode="serialization")
    full = {"$schema": "https://json-schema.org/draft/2020-12/schema", "$id": f"{name}-output.schema.json", **schema}
    return json.dumps(full, indent=2, sort_keys=True) + "\n"


def dump(output: BaseModel) -> str:
    return output.model_dump_json(indent=2, by_alias=True)
