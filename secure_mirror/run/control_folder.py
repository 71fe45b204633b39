"""The control folder where ``secure-mirror run`` (the launcher) and the mirror job meet: the job writes its pid
and, at the end, its result; the launcher asks for a stop by creating the stop file. Its file names are defined
here only, for both sides (the launcher passes the folder to the job as ``--control-dir``)."""

from __future__ import annotations

import json
from pathlib import Path

PID_FILE = "job.pid"
STOP_FILE = "stop"
RESULT_FILE = "result.json"
OPTION = "--control-dir"  # the job's command-line option naming the folder


class ControlFolder:
    def __init__(self, path: Path | str):
        self.path = Path(path)

    def reset(self) -> None:
        """Before an attempt: nothing left from the previous one."""
        for name in (RESULT_FILE, PID_FILE, STOP_FILE):
            (self.path / name).unlink(missing_ok=True)

    # ---- written by the job, read by the launcher ----------------------------------------------------------
    def write_pid(self, pid: int) -> None:
        (self.path / PID_FILE).write_text(str(pid))

    def job_started(self) -> bool:
        """True once the job has begun writing its pid (the file exists, perhaps not yet complete)."""
        return (self.path / PID_FILE).exists()

    def pid(self) -> int | None:
        """The job's pid, once it has written it (None before, or when the file is not a number)."""
        try:
            return int((self.path / PID_FILE).read_text())
        except (FileNotFoundError, ValueError):
            return None

    def write_result(self, result: dict) -> None:
        (self.path / RESULT_FILE).write_text(json.dumps(result) + "\n")

    def result(self) -> dict | None:
        path = self.path / RESULT_FILE
        return json.loads(path.read_text(encoding="utf-8")) if path.exists() else None

    # ---- written by the launcher, read by the job ----------------------------------------------------------
    def request_stop(self) -> None:
        (self.path / STOP_FILE).touch()

    def stop_requested(self) -> bool:
        return (self.path / STOP_FILE).exists()
