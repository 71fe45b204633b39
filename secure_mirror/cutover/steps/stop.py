"""stop: the mirror's job asked to end as ``secure-mirror run`` does on Ctrl-C (its stop file, then SIGTERM), and
waited for; its checkpoint is kept."""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

from secure_mirror.cutover.context import Context, Preview, Reading, Step, StepFailed
from secure_mirror.kafka.processes import pid_alive
from secure_mirror.run.control_folder import ControlFolder


def job_alive(run_dir: Path) -> bool:
    """Whether the mirror's job runs from ``run_dir``: its pid written, no result yet, the process there."""
    control = ControlFolder(run_dir)
    pid = control.pid()
    return pid is not None and control.result() is None and pid_alive(pid)


def run(ctx: Context) -> dict:
    control = ControlFolder(ctx.run_dir)
    pid = control.pid()
    if job_alive(ctx.run_dir) and pid is not None:
        control.request_stop()
        try:
            os.kill(pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
    deadline = time.monotonic() + ctx.timeout
    while job_alive(ctx.run_dir):
        if time.monotonic() > deadline:
            raise StepFailed(
                f"the mirror's job (pid {pid}) did not stop within {ctx.timeout:.0f} s; stop it, then "
                "run this command again"
            )
        time.sleep(0.5)
    result = control.result() or {}
    return {"exit_code": result.get("exit_code"), "status": result.get("status", "not running")}


def preview(ctx: Context, _reading: Reading) -> Preview:
    return Preview([f"would stop the job running from {ctx.run_dir}"])


STEP = Step("stop", run, preview)
