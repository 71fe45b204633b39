"""CPU accounting from /proc: a process tree's user and system CPU seconds, reaped children's included, and the
sandbox brokers' own."""

from __future__ import annotations

import os
from pathlib import Path

from secure_mirror.sandbox import Sandbox

CLOCK_TICKS = os.sysconf("SC_CLK_TCK")


def proc_stat(pid: str) -> list[str] | None:
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return text[text.rindex(")") + 2 :].split()  # fields from the state on (the name may hold blanks)


def process_tree(root: int) -> dict[int, list[str]]:
    """The /proc stat fields (from the state on) of process ``root`` and all its descendants, followed by parent id,
    so a child that starts a session of its own, as the job's launcher does, still counts."""
    stats = {int(pid): fields for pid in os.listdir("/proc") if pid.isdigit() and (fields := proc_stat(pid))}
    children: dict[int, list[int]] = {}
    for pid, fields in stats.items():
        children.setdefault(int(fields[1]), []).append(pid)  # field 4 of stat: the parent id
    tree, todo = {}, [root]
    while todo:
        pid = todo.pop()
        if pid in stats:
            tree[pid] = stats[pid]
        todo += children.get(pid, [])
    return tree


def tree_cpu_seconds(root: int) -> float:
    """User + system CPU seconds of process ``root`` and all its descendants (:func:`process_tree`), reaped
    children's included, from /proc."""
    tree = process_tree(root)
    return sum(int(v) for fields in tree.values() for v in fields[11:15]) / CLOCK_TICKS  # utime, stime, cu-, cs-


def broker_cpu(sb: Sandbox) -> float:
    total = 0
    for side in ("source", "target"):
        fields = proc_stat(str(sb.state["pids"].get(side)))
        if fields:
            total += int(fields[11]) + int(fields[12])
    return total / CLOCK_TICKS
