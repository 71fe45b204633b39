"""The scale benchmark's sampler (:class:`Sampler`): a thread that reads a running contender every second (its
process tree's CPU, its JVMs' heap and threads, its connections to the brokers) with the probes of
``benchmarks/scale/probes.py``, and stops what it left running after the run."""

from __future__ import annotations

import os
import signal
import threading
import time
from pathlib import Path

from benchmarks.harness.cpu import CLOCK_TICKS, proc_stat, process_tree
from benchmarks.scale.probes import (
    MIB,
    OTHER_THREADS,
    THREAD_GROUPS,
    count_connections,
    jvm_heap,
    process_name,
    socket_inodes,
    tcp_sockets,
    thread_group,
)


class Sampler(threading.Thread):
    """Every ``interval`` seconds while a contender runs: its process tree, the peak used heap of its JVMs (summed at
    each sample, and per JVM), its established connections to each side's broker (peak per side and of both), and
    its CPU seconds so far (kept for a contender whose processes are gone by the time it is read). Remembers every
    process of the tree it saw (pid and start time), so that they can be stopped after the run."""

    def __init__(self, root: int, ports: dict[str, set[int]], interval: float = 1.0):
        super().__init__(daemon=True, name="scale-sampler")
        self.root, self.ports, self.interval = root, ports, interval
        self.seen: dict[int, str] = {}  # pid -> start time (field 22 of stat), to tell a reused pid
        self.jvms: set[int] = set()
        self.peak_heap, self.peak_heap_by_jvm, self.peak_committed = 0, {}, 0
        self.peak_connections = {**{side: 0 for side in ports}, "total": 0}
        self.cpu_seconds, self.samples, self.failures = 0.0, 0, 0
        self.timeline: list[tuple[float, float]] = []  # (time.monotonic(), the tree's CPU seconds so far)
        self.process_cpu: dict[int, tuple[str, float]] = {}  # pid -> (what it runs, its own CPU seconds)
        self.thread_cpu: dict[tuple[int, int], tuple[str, float]] = {}  # (pid, tid) -> (group, CPU seconds)
        self._done = threading.Event()

    def run(self) -> None:
        while not self._done.is_set():
            try:
                self.sample()
                self.samples += 1
            except Exception:  # noqa: BLE001 - a process gone between two reads; the next sample counts
                self.failures += 1
            self._done.wait(self.interval)

    def stop(self) -> None:
        self._done.set()
        self.join(30)

    def sample(self) -> None:
        tree = process_tree(self.root)
        if not tree:
            return
        for pid, fields in tree.items():
            self.seen.setdefault(pid, fields[19])
        self.cpu_seconds = sum(int(v) for fields in tree.values() for v in fields[11:15]) / CLOCK_TICKS
        self.timeline.append((time.monotonic(), self.cpu_seconds))
        for pid, fields in tree.items():
            known = self.process_cpu.get(pid)
            name = known[0] if known else process_name(_argv(pid))
            self.process_cpu[pid] = (name, _own_cpu(fields))
        heap = committed = 0
        for pid in tree:
            if not _is_jvm(pid):
                continue
            self.jvms.add(pid)
            self._threads(pid)
            found = jvm_heap(pid)
            if found:
                heap, committed = heap + found["used"], committed + found["committed"]
                self.peak_heap_by_jvm[pid] = max(self.peak_heap_by_jvm.get(pid, 0), found["used"])
        self.peak_heap, self.peak_committed = max(self.peak_heap, heap), max(self.peak_committed, committed)
        counts = count_connections(tcp_sockets(), socket_inodes(tree), self.ports)
        for side, count in counts.items():
            self.peak_connections[side] = max(self.peak_connections[side], count)
        self.peak_connections["total"] = max(self.peak_connections["total"], sum(counts.values()))

    def _threads(self, pid: int) -> None:
        try:
            tids = os.listdir(f"/proc/{pid}/task")
        except OSError:
            return
        for tid in tids:
            fields = proc_stat(f"{pid}/task/{tid}")
            if fields is None:
                continue
            known = self.thread_cpu.get((pid, int(tid)))
            group = known[0] if known else thread_group(_comm(f"{pid}/task/{tid}"))
            self.thread_cpu[(pid, int(tid))] = (group, _own_cpu(fields))

    def cpu_breakdown(self) -> dict:
        """The CPU seconds of each kind of process (summed over the processes of that name) and of each group of
        the JVMs' threads, as last sampled; a process or thread that ended between two samples keeps its last
        reading, and what the tree spent beyond all of them (reaped children's, between samples) is ``unsampled``."""
        processes: dict[str, float] = {}
        for name, cpu in self.process_cpu.values():
            processes[name] = processes.get(name, 0.0) + cpu
        threads: dict[str, float] = {}
        for group, cpu in self.thread_cpu.values():
            threads[group] = threads.get(group, 0.0) + cpu
        return {
            "processes": {name: round(cpu, 2) for name, cpu in sorted(processes.items(), key=lambda kv: -kv[1])},
            "jvm_threads": {
                group: round(threads.get(group, 0.0), 2) for group in (*(g for g, _ in THREAD_GROUPS), OTHER_THREADS)
            },
            "unsampled": round(max(0.0, self.cpu_seconds - sum(processes.values())), 2),
        }

    def figures(self) -> dict:
        return {
            "cpu_breakdown": self.cpu_breakdown(),
            "peak_heap_used_mib": round(self.peak_heap / MIB, 1),
            "peak_heap_used_mib_per_jvm": sorted(round(v / MIB, 1) for v in self.peak_heap_by_jvm.values()),
            "peak_heap_committed_mib": round(self.peak_committed / MIB, 1),
            "jvms": len(self.jvms),
            "peak_connections": dict(self.peak_connections),
            "samples": self.samples,
            "sample_failures": self.failures,
        }

    def stop_leftovers(self, grace: float = 10.0) -> list[int]:
        """SIGTERM, then SIGKILL, the processes of the tree still alive (the same pid and start time)."""
        alive = [pid for pid, start in self.seen.items() if _started(pid) == start]
        for sig in (signal.SIGTERM, signal.SIGKILL):
            for pid in alive:
                try:
                    os.kill(pid, sig)
                except OSError:
                    pass
            deadline = time.monotonic() + grace
            while time.monotonic() < deadline and (alive := [p for p in alive if _started(p) == self.seen[p]]):
                time.sleep(0.2)
            if not alive:
                break
        return alive


def _started(pid: int) -> str | None:
    fields = proc_stat(str(pid))
    return fields[19] if fields and fields[0] != "Z" else None


def _own_cpu(fields: list[str]) -> float:
    """User + system CPU seconds of a process or thread itself (:func:`proc_stat`'s fields), children not."""
    return (int(fields[11]) + int(fields[12])) / CLOCK_TICKS


def _comm(task: str) -> str:
    """The name of ``/proc/<task>`` (a pid, or ``<pid>/task/<tid>``), or "" when it is gone."""
    try:
        return Path(f"/proc/{task}/comm").read_text().strip()
    except OSError:
        return ""


def _argv(pid: int) -> list[str]:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().decode(errors="replace").split("\0")[:-1]
    except OSError:
        return []


def _is_jvm(pid: int) -> bool:
    return _comm(str(pid)) == "java"
