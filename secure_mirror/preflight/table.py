"""The report as a table for people (rich), one row per check."""

from __future__ import annotations

from rich.console import Console
from rich.table import Table

from secure_mirror.preflight.model import FAIL, PASS, SKIPPED, STATUSES, UNVERIFIED, WARN, Report

STYLE = {PASS: "green", WARN: "yellow", FAIL: "bold red", UNVERIFIED: "bold magenta", SKIPPED: "dim"}


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
