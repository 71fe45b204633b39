"""What ``run --json`` prints on stdout: one JSON object per line, its ``kind`` telling which of these models it is
(``RunLine``; JSON Schema: ``schema/run-output.schema.json``, ``secure-mirror schema --of run``).

In order: ``preflight`` (unless --skip-preflight), ``started``, then from the job's driver ``status`` lines (one per
batch or epoch, and idle lines; ``status_lines.StatusLine``), ``waiting`` lines (while it rides through a cluster's bad
minute; ``waiting.WaitingLine``) and ``notice`` lines, ``restart`` lines (--supervise), and
last the ``outcome``. A run refused before pre-flight (bad input, exit 2; a machine not ready, exit 4) prints no
line: its sentence is on stderr, as are the sentences of every failure (the same exit codes as without --json).
"""

from __future__ import annotations

import sys
from typing import Annotated, Literal

from pydantic import BaseModel, Field, RootModel, ValidationError

from secure_mirror.preflight.table import PreflightOutput
from secure_mirror.run.status_lines import NoticeLine, StatusLine, json_line
from secure_mirror.run.waiting import WaitingLine


class PreflightLine(BaseModel):
    kind: Literal["preflight"]
    passed: bool = Field(description="the run may start (with --strict: no warning; unverified only if accepted)")
    accepted_unverified: list[str] = Field(description="ids of unproven permissions --accept-unverified let pass")
    report: PreflightOutput


class StartedLine(BaseModel):
    kind: Literal["started"]
    run_dir: str
    job_log: str = Field(description="the Spark job's log (its stderr)")
    metrics_file: str = Field(description="where the job appends one JSON line per batch, partitions included")


class RestartLine(BaseModel):
    kind: Literal["restart"]
    restart: int = Field(description="1 for the first restart")
    max_restarts: int
    delay_seconds: float
    message: str = Field(description="why the job failed")


class RiddenFigures(BaseModel):
    waits: int = Field(description="waits through a cluster's bad minute that ended with the mirror going on")
    longest_seconds: int = Field(description="the longest of them")
    task_retries: int = Field(description="failed task attempts that Spark ran again (0: none failed)")


class OutcomeLine(BaseModel):
    kind: Literal["outcome"]
    status: Literal["caught-up", "stopped", "failed", "refused", "not-started"] = Field(
        description="caught-up (--until-caught-up), stopped (on request), failed, refused (restarting does not help: "
        "exit 5), not-started (pre-flight did not pass)"
    )
    exit_code: int = Field(description="the command's exit code")
    message: str = Field(description="the sentence also printed on stderr (empty when there is none)")
    ridden: RiddenFigures | None = Field(
        None, description="the waits the job rode through (its last start; absent when the job said nothing)"
    )


class RunLine(RootModel):
    """One line of ``run --json``, told apart by ``kind``."""

    root: Annotated[
        PreflightLine | StartedLine | StatusLine | WaitingLine | NoticeLine | RestartLine | OutcomeLine,
        Field(discriminator="kind"),
    ]


def emit(line: BaseModel) -> None:
    """Print one line of ``run --json``."""
    sys.stdout.write(json_line(line) + "\n")
    sys.stdout.flush()


def is_run_line(text: str) -> bool:
    """Whether ``text`` is one line of ``run --json`` (the job's output also holds sentences)."""
    try:
        RunLine.model_validate_json(text)
    except ValidationError:
        return False
    return True
