"""The report for people (a table, rich) and for programs (``PreflightOutput``, the shape of ``preflight --json``
and of ``run --json``'s pre-flight line; its JSON Schema is ``schema/preflight-output.schema.json``)."""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from pydantic import BaseModel, Field
from rich.console import Console
from rich.table import Table

from secure_mirror.kafka.acl import Acl
from secure_mirror.preflight.model import FAIL, PASS, SKIPPED, STATUSES, UNVERIFIED, WARN, Report, Status

STYLE = {PASS: "green", WARN: "yellow", FAIL: "bold red", UNVERIFIED: "bold magenta", SKIPPED: "dim"}


class CheckOutput(BaseModel):
    id: str = Field(description="<side>.<area>.<what>, stable (e.g. source.acl.topic-read)")
    status: Status = Field(description="pass, warn (works, weakens the run), fail, unverified (could not ask), skipped")
    finding: str
    fix: str = Field(description="what would fix it (empty when nothing needs fixing)")
    acls: list[Acl] = Field(description="the ACLs that would fix it, as render's acls/*.acls.json entries")
    commands: list[str] = Field(description="the same ACLs as kafka-acls command lines")
    details: dict[str, Any]
    proven_by: str = Field(description="unverified: the id of the check whose pass proves it (the admin audit)")


class PreflightOutput(BaseModel):
    """``preflight --json``: every check, the counts per status and the verdict (exit 0 when ok, else 1)."""

    ok: bool = Field(description="no failure and nothing unproven (without --strict / --accept-unverified)")
    unproven: list[str] = Field(description="ids of unverified checks the admin audit did not prove")
    counts: dict[Status, int]
    checks: list[CheckOutput]
    missing_acls: dict[str, list[Acl]] = Field(description="per side, every ACL the failing checks ask for, once")
    seconds: dict[str, float] = Field(description="how long each part took")


def report_output(report: Report) -> PreflightOutput:
    sides = sorted({check.side for check in report.checks})
    return PreflightOutput(
        ok=report.ok(),
        unproven=[check.id for check in report.unproven()],
        counts={status: len(report.with_status(status)) for status in STATUSES},
        checks=[CheckOutput.model_validate(asdict(check)) for check in report.checks],
        missing_acls={side: report.missing_acls(side) for side in sides},
        seconds=report.seconds,
    )


def render_table(report: Report, console: Console | None = None) -> None:
    """A table on a terminal; elsewhere (CI, logs, ``| tee``) one plain line per check, which does not wrap."""
    console = console or Console()
    if console.is_terminal:
        _table(report, console)
    else:
        for check in report.checks:
            fix = f" -- fix: {check.fix}" if check.fix and check.status != PASS else ""
            console.print(
                f"{check.status:10} {check.id}: {check.finding}{fix}", markup=False, highlight=False, soft_wrap=True
            )
    _summary(report, console)


def _table(report: Report, console: Console) -> None:
    table = Table(title="secure-mirror pre-flight", show_lines=False, expand=True)
    table.add_column("check", no_wrap=True)
    table.add_column("status", no_wrap=True)
    table.add_column("finding", ratio=3)
    table.add_column("fix", ratio=2)
    for check in report.checks:
        table.add_row(check.id, f"[{STYLE[check.status]}]{check.status}[/]", check.finding, check.fix or "")
    console.print(table)


def _summary(report: Report, console: Console) -> None:
    counts = ", ".join(f"{len(report.with_status(s))} {s}" for s in STATUSES)
    unproven = report.unproven()
    verdict = "OK" if report.ok() else ("UNVERIFIED" if unproven and report.ok(accept_unverified=True) else "FAILED")
    console.print(f"{verdict}: {counts}")
    for check in unproven:
        console.print(f"not proven: {check.id}: {check.fix}", markup=False, highlight=False, soft_wrap=True)
    for check in report.with_status(FAIL):
        for command in check.commands:
            console.print(command, markup=False, highlight=False, soft_wrap=True)
