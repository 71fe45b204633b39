"""The cut-over's report (issue 41, step 7) for an auditor to keep: every step with its start, end, attempts and
result; the counts per partition on both clusters; each group's offsets on both sides; every ACL binding added or
removed, on which cluster, by which identity. One JSON document and the same in Markdown, both from the record
(``state.Record``) and its notes, nothing else; every value in the Markdown goes through the ``md`` encoder."""

from __future__ import annotations

from secure_mirror.cutover.state import Record
from secure_mirror.render.encoders import json_text, md


def document(record: Record) -> dict:
    """The report as plain data: the command, the steps, and what the steps noted (``counts``, ``groups``, ``acls``)."""
    notes = record.notes
    return {
        "command": record.command,
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
        "counts": notes.get("counts", []),  # [{topic, partition, source, target}]
        "groups": notes.get("groups", []),  # [{group, topic, partition, source_offset, target_offset}]
        "acls": notes.get("acls", []),  # [{cluster, change: added|removed, by, binding: {...}}]
    }


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
