"""The shapes of ``validate --json`` and ``render --json``, as models: the commands print them through these, and
their JSON Schemas are generated from them (``secure-mirror schema --of validate|render``, committed in schema/)."""

from __future__ import annotations

import json

from pydantic import BaseModel

from secure_mirror.profile.warnings import ProfileWarning
from secure_mirror.run.groups.report import GroupsOutput


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


SHAPES: dict[str, type[BaseModel]] = {"validate": ValidateOutput, "render": RenderOutput, "groups": GroupsOutput}


def schema_text(name: str) -> str:
    schema = SHAPES[name].model_json_schema(mode="serialization")
    full = {"$schema": "https://json-schema.org/draft/2020-12/schema", "$id": f"{name}-output.schema.json", **schema}
    return json.dumps(full, indent=2, sort_keys=True) + "\n"


def dump(output: BaseModel) -> str:
    return output.model_dump_json(indent=2)
