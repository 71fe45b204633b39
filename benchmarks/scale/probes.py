"""What the scale benchmark (``benchmarks/scale/``) samples from a running contender and reads after it, each
from where the figure lives:

- heap: the used (and committed) heap of each of the contender's JVMs, from the JVM's own performance counters (the
  hsperfdata file ``jstat -gc`` reads: the sum of every generation space's ``used``, of every generation's
  ``capacity``), and ``jcmd <pid> GC.heap_info`` for a JVM without that file; sampled about once a second, so a
  peak between two samples is missed;
- connections: the ESTABLISHED TCP connections of the contender's processes (their socket inodes under
  ``/proc/<pid>/fd``) whose remote port is one of a broker's, from ``/proc/net/tcp`` and ``tcp6``;
- KDC requests: the ``AS_REQ`` and ``TGS_REQ`` lines the sandbox's ``krb5kdc`` appended to its log while the
  contender ran, by client principal;
- the job's micro-batch phases: Spark's ``durationMs`` of each batch, which ``secure-mirror run`` writes into its
  metrics file (``duration-ms``);
- where the CPU went: each process's own user + system CPU (``/proc/<pid>/stat``), named by what it runs (a JVM by
  its main class), and each JVM thread's (``/proc/<pid>/task/<tid>/stat``) grouped by its name into the JIT
  compilers, the garbage collector and the rest; and the tree's CPU at each sample, so that what it spent before
  the first record reached the target can be told from what it spent copying.

The parsers take text or bytes and are tested on literal samples (tests/unit/test_bench_scale.py).
"""

from __future__ import annotations

import json
import os
import pwd
import re
import shutil
import statistics
import struct
import subprocess
from collections import Counter
from pathlib import Path

MIB = 1024 * 1024
HSPERF_MAGIC = b"\xca\xfe\xc0\xc0"
HEAP_SPACE = re.compile(r"^sun\.gc\.generation\.\d+\.space\.\d+\.used$")
HEAP_COMMITTED = re.compile(r"^sun\.gc\.generation\.\d+\.capacity$")
# GC.heap_info's heap lines (G1, Parallel, Serial, ZGC); Metaspace and class space are not heap
HEAP_INFO_LINE = re.compile(
    r"^\s*(?:garbage-first heap|PSYoungGen|ParOldGen|def new generation|tenured generation|ZHeap)\b.*$", re.MULTILINE
)
HEAP_INFO_FIGURE = re.compile(r"\b(used|total|capacity) (\d+)([KMG])")
UNITS = {"K": 1024, "M": MIB, "G": 1024 * MIB}
ESTABLISHED = "01"
KDC_REQUEST = re.compile(r"\b(AS_REQ|TGS_REQ)\b")
KDC_CLIENT = re.compile(r"([^\s,{}()]+@[^\s,]+) for ")
PHASES = ("latestOffset", "queryPlanning", "getBatch", "addBatch", "walCommit", "commitOffsets", "triggerExecution")


# ---- heap --------------------------------------------------------------------------------------------------------
def parse_hsperfdata(data: bytes) -> dict[str, int]:
    """The scalar long counters of a HotSpot performance data file (``/tmp/hsperfdata_<user>/<pid>``): its
    prologue (magic, byte order, ..., the first entry's offset at byte 24, the entry count at 28), then entries each
    with its length, name offset, vector length, type, flags, units, variability and data offset."""
    if data[:4] != HSPERF_MAGIC:
        raise ValueError("not a HotSpot performance data file")
    order = "<" if data[4] == 1 else ">"
    offset, count = struct.unpack_from(order + "ii", data, 24)
    out = {}
    for _ in range(count):
        length, name_at, vector, kind, _flags, _units, _variability, data_at = struct.unpack_from(
            order + "iiibbbbi", data, offset
        )
        if length <= 0:
            break
        start = offset + name_at
        name = data[start : data.index(b"\0", start)].decode("ascii", "replace")
        if vector == 0 and kind == ord("J"):
            out[name] = struct.unpack_from(order + "q", data, offset + data_at)[0]
        offset += length
    return out


def heap_of_counters(counters: dict[str, int]) -> dict[str, int]:
    """Used and committed heap bytes from a JVM's counters (what ``jstat -gc`` sums: eden, survivors, old)."""
    return {
        "used": sum(v for k, v in counters.items() if HEAP_SPACE.match(k)),
        "committed": sum(v for k, v in counters.items() if HEAP_COMMITTED.match(k)),
    }


def parse_heap_info(text: str) -> dict[str, int]:
    """Used and committed heap bytes from ``jcmd <pid> GC.heap_info`` (committed: the heap lines' ``total``, ZGC's
    ``capacity``)."""
    out = {"used": 0, "committed": 0}
    for line in HEAP_INFO_LINE.findall(text):
        for name, number, unit in HEAP_INFO_FIGURE.findall(line):
            out["used" if name == "used" else "committed"] += int(number) * UNITS[unit]
    return out


def jvm_heap(pid: int) -> dict[str, int] | None:
    """The used and committed heap of JVM ``pid`` now: its performance counters, else ``jcmd``; None if neither."""
    perf = Path("/tmp") / f"hsperfdata_{pwd.getpwuid(os.getuid()).pw_name}" / str(pid)
    try:
        return heap_of_counters(parse_hsperfdata(perf.read_bytes()))
    except (OSError, ValueError, struct.error):
        pass
    try:
        out = subprocess.run(["jcmd", str(pid), "GC.heap_info"], capture_output=True, text=True, timeout=20).stdout
    except (OSError, subprocess.TimeoutExpired):
        return None
    found = parse_heap_info(out)
    return found if found["used"] else None


# ---- connections ---------------------------------------------------------------------------------------------------
def parse_proc_net_tcp(text: str, local: bool = False) -> list[tuple[int, str, int]]:
    """(remote port, state, socket inode) of each socket listed in ``/proc/net/tcp`` or ``tcp6``; with ``local``,
    the local port in place of the remote one (what a listening socket is known by)."""
    address = 1 if local else 2
    out = []
    for line in text.splitlines()[1:]:
        fields = line.split()
        if len(fields) < 10:
            continue
        out.append((int(fields[address].rsplit(":", 1)[1], 16), fields[3], int(fields[9])))
    return out


def socket_inodes(pids) -> set[int]:
    """The inodes of the sockets processes ``pids`` hold open."""
    found = set()
    for pid in pids:
        try:
            names = os.listdir(f"/proc/{pid}/fd")
        except OSError:
            continue
        for name in names:
            try:
                target = os.readlink(f"/proc/{pid}/fd/{name}")
            except OSError:
                continue
            if target.startswith("socket:["):
                found.add(int(target[8:-1]))
    return found


def count_connections(sockets: list[tuple[int, str, int]], inodes: set[int], ports: dict[str, set[int]]) -> dict:
    """Per side (``ports``: side -> the ports of its broker), the established connections among ``inodes``."""
    counts = {side: 0 for side in ports}
    for remote_port, state, inode in sockets:
        if state != ESTABLISHED or inode not in inodes:
            continue
        for side, side_ports in ports.items():
            if remote_port in side_ports:
                counts[side] += 1
    return counts


def tcp_sockets(local: bool = False) -> list[tuple[int, str, int]]:
    """This machine's TCP sockets, IPv4 and IPv6, as :func:`parse_proc_net_tcp` gives them."""
    out = []
    for name in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            out += parse_proc_net_tcp(Path(name).read_text(), local)
        except OSError:
            continue
    return out


# ---- the KDC ---------------------------------------------------------------------------------------------------------
def kdc_requests(text: str, clients: set[str]) -> dict[str, int]:
    """Counts of the KDC log's ``AS_REQ`` and ``TGS_REQ`` lines in ``text``: those of the contender (its client
    principal is one of ``clients``), and those of anyone else (the benchmark's admin, the brokers). An AS exchange
    with pre-authentication is two requests (``NEEDED_PREAUTH``, then ``ISSUE``); requests that were refused are
    counted as ``..._refused``."""
    counts: Counter[str] = Counter()
    for line in text.splitlines():
        request = KDC_REQUEST.search(line)
        if not request:
            continue
        client = KDC_CLIENT.search(line, request.end())
        who = "mirror" if client and client.group(1) in clients else "others"
        kind = request.group(1).lower()
        counts[f"{who}_{kind}"] += 1
        if ": ISSUE: " not in line and "NEEDED_PREAUTH" not in line:
            counts[f"{who}_{kind}_refused"] += 1
    keys = [f"{w}_{k}{r}" for w in ("mirror", "others") for k in ("as_req", "tgs_req") for r in ("", "_refused")]
    return {key: counts[key] for key in keys}


# ---- the job's micro-batches ----------------------------------------------------------------------------------------
def batch_phases(lines: list[dict]) -> dict:
    """Per Spark phase (``PHASES``) over the job's batches (its metrics file's lines): median, max and total ms.
    A metrics file without ``duration-ms`` (older job) still gives ``triggerExecution``."""
    per_phase: dict[str, list[int]] = {}
    for line in lines:
        phases = dict(line.get("duration-ms") or {})
        if not phases and line.get("batch-duration-ms") is not None:
            phases = {"triggerExecution": line["batch-duration-ms"]}
        for phase in PHASES:
            if phases.get(phase) is not None:
                per_phase.setdefault(phase, []).append(int(phases[phase]))
    return {
        phase: {"median_ms": statistics.median(v), "max_ms": max(v), "total_ms": sum(v), "batches": len(v)}
        for phase, v in per_phase.items()
    }


def metrics_lines(path: Path) -> list[dict]:
    if not path.exists():
        return []
    out = []
    for line in path.read_text().splitlines():
        try:
            out.append(json.loads(line))
        except ValueError:
            continue  # a line being written when the job was stopped
    return out


def cached_share(files: list[Path]) -> float | None:
    """The share of ``files``' bytes in the page cache now (util-linux's ``fincore``), or None without it: a source
    whose records were evicted is read from the disk (NOTES section 16)."""
    if not files or shutil.which("fincore") is None:
        return None
    done = subprocess.run(
        ["fincore", "--bytes", "--noheadings", "--output", "RES,SIZE", *map(str, files)], capture_output=True, text=True
    )
    rows = [line.split() for line in done.stdout.splitlines() if len(line.split()) == 2]
    size = sum(int(row[1]) for row in rows)
    return sum(int(row[0]) for row in rows) / size if size else None


# ---- where the CPU went ----------------------------------------------------------------------------------------
# A HotSpot thread's name (``/proc/<pid>/task/<tid>/comm``, at most 15 characters) -> its group
THREAD_GROUPS = (
    ("JIT compilers", re.compile(r"^C[12] CompilerThre")),
    ("garbage collector", re.compile(r"^(GC Thread|G1 |VM Thread|VM Periodic)")),
)
OTHER_THREADS = "other threads"
JAVA_OPTIONS_WITH_VALUE = {"-cp", "-classpath", "--class-path", "--module-path", "-p", "--add-opens", "--add-exports"}


def thread_group(name: str) -> str:
    """The group a JVM thread's name puts it in: the JIT compilers, the garbage collector (its workers, the VM
    thread that runs its pauses, the periodic task), or the other threads (the program's own)."""
    for group, pattern in THREAD_GROUPS:
        if pattern.match(name):
            return group
    return OTHER_THREADS


def process_name(argv: list[str]) -> str:
    """What a process runs, from its arguments: a JVM's main class (its last package-less name), else the program's
    file name (``python3``, ``bash``)."""
    if not argv:
        return "?"
    program = Path(argv[0]).name
    if program != "java":
        return program
    rest = iter(argv[1:])
    for arg in rest:
        if arg in JAVA_OPTIONS_WITH_VALUE:
            next(rest, None)
        elif arg == "-jar":
            return "java -jar " + Path(next(rest, "?")).name
        elif arg.endswith(".java"):  # a source file launched as it is
            return "java " + Path(arg).name
        elif not arg.startswith("-"):
            return "java " + arg.rsplit(".", 1)[-1]
    return "java"


def cpu_before(timeline: list[tuple[float, float]], moment: float | None) -> float | None:
    """The CPU seconds at the last sample of ``timeline`` ((time, CPU so far) in time order) taken at or before
    ``moment``; None without a moment or a sample by then."""
    if moment is None:
        return None
    before = [cpu for at, cpu in timeline if at <= moment]
    return before[-1] if before else None
