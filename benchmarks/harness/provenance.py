"""The build a results file was made at: the commit, whether the tree was clean, the date and the machine.

Every results file of the benchmarks (``benchmarks/``, ``scripts/bench``) and of the reliability suite
(``tests/reliability/conftest.py``, ``scripts/reliability``) records :func:`build` as its ``build`` object, read when
the run starts (the code it measured), and its Markdown report says :func:`header` (or :func:`at` beside a date and
machine of its own) under its title::

    {"commit": "6a83130...", "clean": false, "dirty_paths": 3, "date": "2026-11-30T10:00:00+00:00",
     "machine": {"cpus": 2, "memory_gib": 23.4, "platform": "Linux-6.1.0-...", "python": "3.11.2"}}

``clean`` is ``git status --porcelain`` printing nothing (untracked files count as dirty, as it lists them);
``dirty_paths`` is the number of lines it printed. When git cannot say (no git, not a checkout), ``commit``,
``clean`` and ``dirty_paths`` are None, and the report says so. It lives in the benchmarks' harness, and the
reliability suite imports it from here (tests may import benchmarks/, never the other way); it is not part of the
package: a user's mirror has no results file.
"""

from __future__ import annotations

import os
import platform
import subprocess
from datetime import datetime, timezone
from pathlib import Path

REPOSITORY = Path(__file__).resolve().parents[2]


def build(root: Path = REPOSITORY) -> dict:
    """The checkout at ``root`` now: ``{commit, clean, dirty_paths, date, machine}`` (see the module)."""
    commit = _git(root, "rev-parse", "HEAD")
    status = _git(root, "status", "--porcelain") if commit else None
    dirty = None if status is None else [line for line in status.splitlines() if line.strip()]
    return {
        "commit": commit.strip() if commit else None,
        "clean": None if dirty is None else not dirty,
        "dirty_paths": None if dirty is None else len(dirty),
        "date": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "machine": machine(),
    }


def machine() -> dict:
    """This machine: CPUs, memory (GiB, None when /proc/meminfo is not there), platform and Python."""
    return {
        "cpus": os.cpu_count(),
        "memory_gib": memory_gib(),
        "platform": platform.platform(),
        "python": platform.python_version(),
    }


def memory_gib() -> float | None:
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                return round(int(line.split()[1]) / 1024 / 1024, 1)
    except OSError:
        pass
    return None


def at(build: dict) -> str:
    """``at <commit, 12 digits>``, with `` (tree not clean: N paths)`` when it was not; or that git could not say."""
    if not build.get("commit"):
        return "at no known commit (git could not say)"
    n, clean = build.get("dirty_paths"), build.get("clean")
    dirty = "" if clean else f" (tree not clean: {n} path{'' if n == 1 else 's'})"
    return f"at {build['commit'][:12]}{' (tree not known clean)' if clean is None else dirty}"


def described(machine: dict) -> str:
    """``2 CPUs, 23.4 GiB, Linux-..., Python 3.11.2``."""
    memory = f"{machine['memory_gib']} GiB" if machine.get("memory_gib") is not None else "memory not known"
    return f"{machine['cpus']} CPUs, {memory}, {machine['platform']}, Python {machine['python']}"


def header(build: dict) -> str:
    """The report's line under its title: the date, :func:`at` and the machine."""
    return f"{build['date']} {at(build)}, on {described(build['machine'])}."


def stamped(markdown: str, build: dict) -> str:
    """``markdown`` with :func:`header` as its own paragraph after its first line (the title)."""
    title, _, rest = markdown.partition("\n")
    return f"{title}\n\n{header(build)}\n{rest}" if rest.startswith("\n") else f"{title}\n\n{header(build)}\n\n{rest}"


def _git(root: Path, *args: str) -> str | None:
    """What ``git -C root ARGS`` printed, or None when it failed (no git, not a checkout)."""
    try:
        done = subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return done.stdout if done.returncode == 0 else None
