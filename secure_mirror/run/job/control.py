"""Where ``secure-mirror run`` and the job meet (``--control-dir``, ``run/control_folder.py``)."""

from __future__ import annotations

import os
import sys

from secure_mirror.errors import EXIT_FAILED
from secure_mirror.run.control_folder import ControlFolder


class Control:
    """Where ``secure-mirror run`` and the job meet (``--control-dir``): pid, stop request, final result."""

    def __init__(self, folder: str | None):
        self.folder = ControlFolder(folder) if folder else None
        self.signal: int | None = None

    def started(self) -> None:
        if self.folder:
            self.folder.write_pid(os.getpid())

    def stop_requested(self) -> bool:
        return self.signal is not None or bool(self.folder and self.folder.stop_requested())

    def result(self, code: int, status: str, message: str, ridden: dict | None = None) -> int:
        """Write the job's result (``ridden``: the waits it rode through, run/job/ride.py) and say its sentence."""
        if self.folder:
            retryable = code == EXIT_FAILED
            result = {"exit_code": code, "status": status, "message": message, "retryable": retryable}
            self.folder.write_result({**result, **({"ridden": ridden} if ridden else {})})
        if message:
            print(f"secure-mirror job: {message}", file=sys.stderr)
        return code
