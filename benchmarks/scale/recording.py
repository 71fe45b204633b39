"""``--jfr``: Java Flight Recordings of a run's JVMs and of both brokers (:class:`Recording`)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from benchmarks.harness import cli
from benchmarks.harness.launch import jfr_options

log = cli.prefixed("scale")


class Recording:
    """``--jfr``: Java Flight Recordings (``settings=profile``: CPU samples every 10-20 ms, and where threads waited
    10 ms or more) of one run into ``folder``: of each JVM the contender starts (``JAVA_TOOL_OPTIONS`` in its
    environment, :func:`jfr_options`; a file per JVM, written when it exits, as the harness stops it) and of
    both brokers (started with ``jcmd`` before the wait for quiet brokers, dumped when the target holds everything;
    their samples are put at safepoints, as a running JVM cannot be given ``DebugNonSafepoints``). For finding why a
    run was slow; the recordings cost the run some CPU, so their runs' figures are not for comparison with runs
    without."""

    NAME = "secure-mirror-scale"

    def __init__(self, folder: Path, brokers: dict[str, int]):
        self.folder, self.brokers = folder, brokers
        folder.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        folder.parent.chmod(0o700)  # a recording holds the JVM's environment and system properties: the user's only
        folder.mkdir(mode=0o700, exist_ok=True)
        for pid in brokers.values():
            jcmd(pid, "JFR.stop", f"name={self.NAME}", quiet=True)  # one a failed run left running
            jcmd(pid, "JFR.start", f"name={self.NAME}", "settings=profile")

    def environment(self) -> dict[str, str]:
        options = jfr_options(self.folder)
        return {
            **os.environ,
            "JAVA_TOOL_OPTIONS": " ".join(filter(None, [os.environ.get("JAVA_TOOL_OPTIONS"), *options])),
        }

    def dump_brokers(self) -> None:
        for side, pid in self.brokers.items():
            jcmd(pid, "JFR.dump", f"name={self.NAME}", f"filename={self.folder / f'broker-{side}.jfr'}")
            jcmd(pid, "JFR.stop", f"name={self.NAME}")


def jcmd(pid: int, *command: str, quiet: bool = False) -> None:
    """Run a diagnostic command in JVM ``pid``; a failure is logged (unless ``quiet``), never raised."""
    done = subprocess.run(["jcmd", str(pid), *command], capture_output=True, text=True, timeout=60)
    if done.returncode and not quiet:
        log(f"jcmd {pid} {' '.join(command)} failed: {(done.stdout + done.stderr).strip()[:300]}")
