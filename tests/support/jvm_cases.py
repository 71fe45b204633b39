"""A Java program of tests/support judging batches of cases in one JVM kept for a test module: each batch is written
to its stdin as tab-separated lines ended by ``end``, and its answers are read back, one line per case, with a
deadline and the program's stderr in the failure message (StandardAuthorizerCases.java, RangerPolicyCases.java)."""

from __future__ import annotations

import os
import select
import subprocess
import time
from collections.abc import Sequence
from pathlib import Path

from secure_mirror import paths

TIMEOUT = 120.0  # seconds for one batch, the JVM's start and compiling the program included


class JvmCases:
    """``program`` (a single-file Java source) run with ``classpath``; ``what`` names it in failure messages."""

    def __init__(self, program: Path, classpath: str, log_path: Path, what: str, answers: set[str]):
        self.log_path, self.what, self.answers = log_path, what, answers
        command = [paths.java_executable(), "-cp", classpath, str(program)]
        with open(log_path, "wb") as log:
            self.process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=log)
        self.pending = b""

    def ask(self, lines: Sequence[Sequence[str]], count: int) -> list[str]:
        """Hand over one batch (``end`` added) and return its ``count`` answers."""
        assert not any(("\t" in f or "\n" in f) for line in lines for f in line)
        batch = "".join("\t".join(line) + "\n" for line in lines) + "end\n"
        assert self.process.stdin is not None
        try:
            self.process.stdin.write(batch.encode())
            self.process.stdin.flush()
        except BrokenPipeError:
            raise AssertionError(self.failed(f"the JVM ended with {self.process.wait()}")) from None
        answers = self._lines(count)
        assert set(answers) <= self.answers, self.failed(f"answers {sorted(set(answers))[:5]}")
        return answers

    def _lines(self, count: int) -> list[str]:
        assert self.process.stdout is not None
        deadline = time.monotonic() + TIMEOUT
        while self.pending.count(b"\n") < count:
            ready, _, _ = select.select([self.process.stdout], [], [], max(deadline - time.monotonic(), 0))
            assert ready, self.failed(f"no answer within {TIMEOUT:.0f} s")
            chunk = os.read(self.process.stdout.fileno(), 1 << 16)
            assert chunk, self.failed(f"the JVM ended with {self.process.wait()}")
            self.pending += chunk
        *answers, self.pending = self.pending.split(b"\n", count)
        return [answer.decode() for answer in answers]

    def failed(self, what: str) -> str:
        return f"{self.what} gave {what}; its stderr:\n{self.log_path.read_text()[-4000:]}"

    def close(self) -> None:
        assert self.process.stdin is not None
        self.process.stdin.close()
        assert self.process.wait(timeout=30) == 0, self.failed("no clean end")
