"""The report as a table for people (rich), one row per check."""

from __future__ import annotations

from rich.console import Console
from rich.table import Table

from secure_mirror.preflight.model import FAIL, PASS, SKIPPED, WARN, Report

STYLE = {PASS: "green", WARN: "yellow", FAIL: "bold red", SKIPPED: "dim"}


def render_table(report: Report, console: Console | None = None) -> None:
    console = console or Console()
    table = Table(title="secure-mirror pre-flight", show_lines=False, expand=True)
    table.add_column("check", no_wrap=True)
    table.add_column("status", no_wrap=True)
    table.add_column("finding", ratio=3)
    table.add_column("fix", ratio=2)
    for check in report.checks:
        table.add_row(check.id, f"[{STYLE[check.status]}]{check.status}[/]", check.finding, check.fix or "")
    console.print(table)
    counts = ", ".join(f"{len(report.with_status(s))} {s}" for s in (PASS, WARN, FAIL, SKIPPED))
    console.print(f"{'OK' if report.ok() else 'FAILED'}: {counts}")
    for check in report.with_status(FAIL):
        for command in check.commands:
            console.print(command, markup=False, highlight=False, soft_wrap=True)
