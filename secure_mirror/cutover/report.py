"""The cut-over's report (issue 41, step 7) for an auditor to keep: every step with its start, end, attempts and
result; the counts per partition on both clusters; each group's offsets on both sides; every ACL binding added or
removed, on which cluster, by which identity. One JSON document and the same in Markdown, both from the record
(``record.Record``) and its notes, nothing else; every value in the Markdown goes through the ``md`` encoder. Both
are written beside the record, each whole (``folders.write_durably``)."""

from __future__ import annotations

from dataclasses import asdict
from pathlib import Path

from pydantic import BaseModel, Field

from secure_mirror import folders
from secure_mirror.cutover.record import Record
from secure_mirror.render.encoders import json_text, md


# ---- the shape of the report and of ``cutover --json`` (schema/cutover-output.schema.json) --------------------------
class CommandOut(BaseModel):
    profile_sha256: str = Field(description="the SHA-256 of the profile file the cut-over ran with")
    direction: str = Field(description="cutover, or failback (the way back)")
    groups: list[str]


class StepOut(BaseModel):
    name: str = Field(description="check, fence, drain, sync, stop, promote (cutover) or restore (failback), report")
    status: str = Field(description="done, failed, started (it was running when the command ended) or not begun")
    started: str | None = Field(description="UTC, ISO 8601")
    ended: str | None
    attempts: int = Field(description="how many times the step was begun (a re-run after a crash begins it again)")
    message: str = Field(description="why it stopped, with the fix")
    result: dict = Field(description="what the step found (open: each step its own)")


class CountOut(BaseModel):
    topic: str
    partition: int
    source: int | None = Field(description="records of the mirrored range on the source (verify's count)")
    target: int | None


class GroupOffsetOut(BaseModel):
    group: str
    topic: str
    partition: int
    source_offset: int | None
    target_offset: int | None = Field(description="the translation committed on the target")


class BindingOut(BaseModel):
    principal: str
    host: str
    operation: str
    permission: str
    resource_type: str
    resource_name: str
    pattern_type: str


class AclChangeOut(BaseModel):
    cluster: str = Field(description="source or target")
    change: str = Field(description="added or removed")
    by: str = Field(description="the admin identity's principal that made the change")
    binding: BindingOut


class CutoverReport(BaseModel):
    """The cut-over's report: ``DIR/cutover-report.json`` and ``cutover --json``."""

    command: CommandOut
    complete: bool
    steps: list[StepOut]
    counts: list[CountOut]
    groups: list[GroupOffsetOut]
    acls: list[AclChangeOut]


def document(record: Record) -> dict:
    """The report as plain data: the command, the steps, and what the steps noted (``counts``, ``groups``, ``acls``),
    in the shape of :class:`CutoverReport`."""
    return CutoverReport.model_validate(_plain(record)).model_dump()


def _plain(record: Record) -> dict:
    notes = record.notes
    return {
        "command": record.command.to_dict(),
        "complete": record.complete,
        "steps": [
            {
                "name": step.name,
                "status": step.status or "not begun",
                "started": step.started,
                "ended": step.ended,
                "attempts": step.attempts,
                "message": step.message,
                "result": step.result,
            }
            for step in record.steps
        ],
        "counts": [asdict(count) for count in notes.counts],
        "groups": [asdict(group) for group in notes.groups],
        "acls": [change.to_dict() for change in notes.acls],
    }


JSON_FILE, MARKDOWN_FILE = "cutover-report.json", "cutover-report.md"


def write(record: Record, folder: Path) -> dict:
    """Both documents into ``folder`` (mode 0600); the files written."""
    for name, text in ((JSON_FILE, json_report(record)), (MARKDOWN_FILE, markdown_report(record))):
        folders.write_durably(folder / name, text, 0o600)
    return {"files": [str(folder / JSON_FILE), str(folder / MARKDOWN_FILE)]}


def json_report(record: Record) -> str:
    return json_text(document(record))


def markdown_report(record: Record) -> str:
    """The same report as Markdown tables."""
    data = document(record)
    command = data["command"]
    lines = [
        f"# Cut-over report ({md(command['direction'])})",
        "",
        f"Groups: {md(', '.join(command['groups']) or 'none')}. Profile SHA-256: `{md(command['profile_sha256'])}`. "
        f"{'Complete.' if data['complete'] else 'Not complete.'}",
        "",
        "| step | status | started | ended | attempts | message |",
        "| --- | --- | --- | --- | --- | --- |",
        *(
            f"| {md(s['name'])} | {md(s['status'])} | {md(s['started'] or '')} | {md(s['ended'] or '')} | "
            f"{s['attempts']} | {md(s['message'])} |"
            for s in data["steps"]
        ),
        "",
        "## Records per partition",
        "",
        "| topic | partition | source | target |",
        "| --- | --- | --- | --- |",
        *(f"| {md(c['topic'])} | {c['partition']} | {c['source']} | {c['target']} |" for c in data["counts"]),
        "",
        "## Group offsets",
        "",
        "| group | topic | partition | source | target |",
        "| --- | --- | --- | --- | --- |",
        *(
            f"| {md(g['group'])} | {md(g['topic'])} | {g['partition']} | {g['source_offset']} | {g['target_offset']} |"
            for g in data["groups"]
        ),
        "",
        "## ACL changes",
        "",
        "| cluster | change | by | principal | operation | permission | resource | pattern | host |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- |",
        *(
            f"| {md(a['cluster'])} | {md(a['change'])} | {md(a['by'])} | {md(a['binding']['principal'])} | "
            f"{md(a['binding']['operation'])} | {md(a['binding']['permission'])} | "
            f"{md(a['binding']['resource_type'])} {md(a['binding']['resource_name'])} | "
            f"{md(a['binding']['pattern_type'])} | {md(a['binding']['host'])} |"
            for a in data["acls"]
        ),
    ]
    return "\n".join(lines) + "\n"
