"""The scale benchmark's Markdown, generated from its json only (``benchmarks/scale/main.py`` writes both), and the
figures summarized over a contender's repeats (:data:`FIGURES`, ``benchmarks/harness/summary.py``)."""

from __future__ import annotations

import statistics

from benchmarks.harness import read_ahead
from benchmarks.harness.contenders import LABELS

# the figures summarized over the repeats, in the main table's order: key -> (column, format)
FIGURES = {
    "seconds": ("seconds", ".1f"),
    "records_per_second": ("records/s start to end", ",.0f"),
    "steady_records_per_second": ("steady records/s", ",.0f"),
    "first_record_seconds": ("first record, s", ".1f"),
    "cpu_seconds_per_million": ("CPU s per million records", ".1f"),
    "broker_cpu_seconds_per_million": ("brokers' CPU s per million records", ".1f"),
    "peak_heap_used_mib": ("peak heap used, MiB", ",.0f"),
}
PLANNING = ("latestOffset", "queryPlanning", "getBatch", "addBatch", "triggerExecution")

EXPLAINED = """\
How each figure is measured (benchmarks/scale/, benchmarks/scale/probes.py):
- repeats: every contender runs once per repeat, the order shuffled anew for each (the orders are listed); the
  first table gives each figure's median over the runs that finished, with the minimum and maximum in brackets
  (over all runs when none finished); the tables after it give each run;
- finished: the target held all N records (for a contender writing in transactions, exactly_once and MirrorMaker 2
  with exactly-once: a read_committed reader of the target saw all N, counted record by record up to the last
  stable offsets, benchmarks/harness/committed.py) within the time limit; otherwise the run is over the records it got there
  (those a read_committed reader saw, or the sum of the target's end offsets) and says why it stopped;
- records/s start to end: those records over the time from the contender's process start; steady: 80% of them over
  the target's own append times between the 10% and the 90% record (LogAppendTime topics; every record's
  append time read back, read_committed);
- first record: process start to the first record on the target (end offsets asked every 0.5 s);
- CPU s per million records: user + system CPU of the contender's process tree (/proc), and of the two brokers while
  it ran (the harness's own polling of the target included, the same for every contender);
- peak heap: the largest sum of the used heap of the contender's JVMs at one sample (their HotSpot counters, what
  `jstat -gc` reads, about every second: a peak between two samples is missed), and the largest committed heap;
- connections: the peak count of ESTABLISHED TCP connections from the contender's processes to each broker's ports
  (their socket inodes in /proc/<pid>/fd matched in /proc/net/tcp), sampled with the heap;
- KDC: the AS_REQ and TGS_REQ lines the sandbox's KDC logged while the contender ran, of the mirror's principals (an AS
  login with pre-authentication is two AS_REQ lines); others': the harness's admin and the brokers, in the same time;
- the job's micro-batches: Spark's `durationMs` per batch (its metrics file's `duration-ms`), median and max over the
  batches that carried records, and the time from the process start to the first batch's start;
- where the CPU went (results files from 2026-11-29 on): the contender's CPU at the last sample (about every
  second) before its first record reached the target, and per million records after it; each JVM thread's CPU by
  its name (`/proc/<pid>/task/<tid>/stat`): the JIT compilers (`C1`/`C2 CompilerThread`), the garbage collector
  (`GC Thread#`, `G1 ...`, the `VM Thread` that runs its pauses) and the other threads; each process's own CPU by
  what it runs (a JVM by its main class); a thread or process that ended between two samples keeps its last
  reading, and what the tree spent beyond the sampled processes is `unsampled`;
- waited for quiet brokers: before each run the brokers have removed the files of the topics deleted before it
  (the last run's targets; the harness sets `log.segment.delete.delay.ms` to 1 s), the page cache is written out
  (`sync`), and the run starts once the two brokers together used under a tenth of a CPU in each of 3 seconds in a
  row (at most 120 s for each wait): what the load or the run before left the brokers to do is not on this run's
  clock;
- load average: the machine's 1-minute load average when the contender started (other work on a shared machine
  moves every figure).
"""


# issue 43's targets, each a ratio of two contenders' medians: (what, figure, contender, against, bound, at least?)
TARGETS = (
    (
        "exactly_once steady over at_least_once's",
        "steady_records_per_second",
        "secure_mirror_exactly_once",
        "secure_mirror",
        0.9,
        True,
    ),
    (
        "exactly_once steady over MirrorMaker 2's with exactly-once",
        "steady_records_per_second",
        "secure_mirror_exactly_once",
        "mirrormaker2_exactly_once",
        1.0,
        True,
    ),
    (
        "at_least_once steady over the copy limit's",
        "steady_records_per_second",
        "secure_mirror",
        "copy_limit",
        0.95,
        True,
    ),
    (
        "the job's CPU per record over MirrorMaker 2's (at_least_once)",
        "cpu_seconds_per_million",
        "secure_mirror",
        "mirrormaker2",
        0.8,
        False,
    ),
    (
        "the job's CPU per record over MirrorMaker 2's (both with exactly-once)",
        "cpu_seconds_per_million",
        "secure_mirror_exactly_once",
        "mirrormaker2_exactly_once",
        0.8,
        False,
    ),
    (
        "the brokers' CPU per record over MirrorMaker 2's (at_least_once)",
        "broker_cpu_seconds_per_million",
        "secure_mirror",
        "mirrormaker2",
        1.0,
        False,
    ),
    (
        "the job's first record over MirrorMaker 2's (at_least_once)",
        "first_record_seconds",
        "secure_mirror",
        "mirrormaker2",
        1.0,
        False,
    ),
    (
        "the job's peak used heap over MirrorMaker 2's (at_least_once)",
        "peak_heap_used_mib",
        "secure_mirror",
        "mirrormaker2",
        1.0,
        False,
    ),
)


def against_targets(summary: dict) -> list[dict]:
    """Each of :data:`TARGETS` whose two contenders have the figure: the ratio of their medians, its bound, and
    whether it is met (at least the bound, or at most it)."""
    out = []
    for what, key, name, other, bound, at_least in TARGETS:
        mine, theirs = (summary.get(n, {}).get(key) for n in (name, other))
        if mine is None or theirs is None or not theirs["median"]:
            continue
        ratio = mine["median"] / theirs["median"]
        out.append(
            {
                "what": what,
                "ratio": ratio,
                "bound": bound,
                "at_least": at_least,
                "met": ratio >= bound if at_least else ratio <= bound,
            }
        )
    return out


def _target_lines(size: dict) -> list[str]:
    rows = against_targets(size.get("summary", {}))
    if not rows:
        return []
    return [
        "",
        "| issue 43's target (ratio of the medians) | ratio | target | met |",
        "| --- | --- | --- | --- |",
        *(
            f"| {r['what']} | {r['ratio']:.2f}x | {'at least' if r['at_least'] else 'at most'} {r['bound']:.2f}x | "
            f"{'yes' if r['met'] else 'no'} |"
            for r in rows
        ),
    ]


def _num(value, spec: str = ",.0f") -> str:
    return "-" if value is None else format(value, spec)


def _spread_cell(figure: dict | None, spec: str) -> str:
    if figure is None:
        return "-"
    if figure["n"] == 1:
        return _num(figure["median"], spec)
    return f"{_num(figure['median'], spec)} ({_num(figure['min'], spec)} to {_num(figure['max'], spec)})"


def _summary_row(name: str, c: dict, runs: list[dict]) -> str:
    done = f"{c['finished']}/{c['runs']}"
    why = [r.get("why") or r.get("error", "")[:200] for r in runs if not r.get("finished")]
    if why:
        done += ": " + "; ".join(dict.fromkeys(why))
    cells = [_spread_cell(c.get(key), spec) for key, (_, spec) in FIGURES.items()]
    return f"| {LABELS.get(name, name)} | {done} | " + " | ".join(cells) + " |"


def _main_row(label: str, c: dict) -> str:
    if "error" in c:
        return f"| {label} | error: {c['error'][:200]} |" + " |" * 7
    done = "yes" if c["finished"] else f"no: {c['why']}"
    return (
        f"| {label} | {done} | {c['records']:,} | {_num(c['seconds'], '.1f')} | {_num(c['records_per_second'])} | "
        f"{_num(c.get('steady_records_per_second'))} | {_num(c.get('first_record_seconds'), '.1f')} | "
        f"{_num(c.get('cpu_seconds_per_million'), '.1f')} | {_num(c.get('broker_cpu_seconds_per_million'), '.1f')} |"
    )


def _resource_row(label: str, c: dict) -> str | None:
    if "error" in c:
        return None
    kdc, conns = c["kdc"], c["peak_connections"]
    per_jvm = ", ".join(_num(v, ",.0f") for v in c["peak_heap_used_mib_per_jvm"]) or "-"
    return (
        f"| {label} | {c['jvms']} | {_num(c['peak_heap_used_mib'])} ({per_jvm}) | "
        f"{_num(c['peak_heap_committed_mib'])} | {conns.get('source', 0)} | {conns.get('target', 0)} | "
        f"{kdc['mirror_as_req']} | {kdc['mirror_tgs_req']} | {kdc['others_as_req']} / {kdc['others_tgs_req']} | "
        f"{c['samples']} | {_num(c.get('settle_seconds'), '.1f')} | {_num(c.get('load_average_at_start'), '.1f')} |"
    )


def _planning_row(label: str, c: dict) -> str | None:
    if "error" in c or "batches" not in c:
        return None
    phases = c.get("batch_phases") or {}
    cells = [f"{_num(phases[p]['median_ms'])} / {_num(phases[p]['max_ms'])}" if p in phases else "-" for p in PLANNING]
    return f"| {label} | {c['batches']} | {_num(c.get('job_startup_seconds'), '.1f')} | " + " | ".join(cells) + " |"


def _cpu_row(label: str, c: dict) -> str | None:
    """Where a run's CPU went (``cpu_breakdown``, results from before it have none), in seconds."""
    cpu = c.get("cpu_breakdown")
    if "error" in c or not cpu:
        return None
    threads = cpu["jvm_threads"]
    processes = ", ".join(f"{name} {seconds:.1f}" for name, seconds in cpu["processes"].items() if seconds >= 0.05)
    return (
        f"| {label} | {_num(c.get('cpu_seconds'), '.1f')} | {_num(c.get('cpu_seconds_to_first_record'), '.1f')} | "
        f"{_num(c.get('cpu_seconds_per_million_after_first_record'), '.1f')} | "
        f"{threads['JIT compilers']:.1f} | {threads['garbage collector']:.1f} | {threads['other threads']:.1f} | "
        f"{processes or '-'} | {cpu['unsampled']:.1f} |"
    )


def _each_run(size: dict) -> list[tuple[str, dict]]:
    """(label, figures) of every run of a size, contender by contender, a run's number after its label when the
    contender ran more than once."""
    return [
        (LABELS.get(name, name) + (f", run {i}" if len(runs) > 1 else ""), figures)
        for name, runs in size["runs"].items()
        for i, figures in enumerate(runs, 1)
    ]


def first_after_load(size: dict) -> str:
    """A sentence on the first measured run after the size's load (and its warm-up runs, if any): its steady rate
    against the median of the same contender's other repeats (the brokers' first copy of a size ran slower in
    earlier files)."""
    warm = size.get("warm_up") or []
    before = (
        f"after {len(warm)} unmeasured copy-limit run(s) (steady "
        + ", ".join(
            f"{w['steady_records_per_second']:,.0f}" if w.get("steady_records_per_second") else "-" for w in warm
        )
        + " records/s)"
        if warm
        else "with no warm-up run"
    )
    if not size["orders"]:
        return ""
    name = size["orders"][0][0]
    steady = [run.get("steady_records_per_second") for run in size["runs"].get(name, [])]
    rest = [s for s in steady[1:] if s]
    if not steady or steady[0] is None or not rest:
        return f"The first measured run, {before}: {name}.\n"
    others = statistics.median(rest)
    return (
        f"The first measured run, {before}: {name}, {steady[0]:,.0f} steady records/s, {steady[0] / others:.2f}x the "
        f"median of its other repeats ({others:,.0f}).\n"
    )


def size_section(size: dict) -> list[str]:
    runs = _each_run(size)
    orders = "; ".join(" -> ".join(order) for order in size["orders"])
    lines = [
        f"\n## {size['partitions']:,} partitions over {size['topics']} topic(s), {size['records']:,} records\n",
        f"Loaded in {size['load_seconds']:.1f} s; order of the runs, repeat by repeat: {orders}.\n",
        first_after_load(size),
        "| contender | finished | " + " | ".join(column for column, _ in FIGURES.values()) + " |",
        "| --- | --- | " + " | ".join("---" for _ in FIGURES) + " |",
        *(_summary_row(name, size["summary"][name], size["runs"][name]) for name in size["runs"]),
        *_target_lines(size),
        "",
        "| run | finished | records on target | seconds | records/s start to end | steady records/s | "
        "first record, s | CPU s per million records | brokers' CPU s per million records |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- |",
        *(_main_row(label, c) for label, c in runs),
        "",
        "| run | JVMs | peak heap used, MiB (per JVM) | peak heap committed, MiB | peak connections to the source broker | "
        "to the target broker | KDC AS_REQ (mirror) | KDC TGS_REQ (mirror) | KDC AS / TGS (others) | samples | "
        "waited for quiet brokers, s | load average at its start |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    lines += [row for label, c in runs if (row := _resource_row(label, c))]
    cpu = [row for label, c in runs if (row := _cpu_row(label, c))]
    if cpu:
        lines += [
            "",
            "| run | CPU s | CPU s to the first record | CPU s per million records after it | JVMs' JIT compilers, s | "
            "JVMs' garbage collector, s | JVMs' other threads, s | by process, s | unsampled, s |",
            "| --- | --- | --- | --- | --- | --- | --- | --- | --- |",
            *cpu,
        ]
    planning = [row for label, c in runs if (row := _planning_row(label, c))]
    if planning:
        lines += [
            "",
            "| the job's run | batches | process start to first batch, s | "
            + " | ".join(f"{p} ms, median / max" for p in PLANNING)
            + " |",
            "| --- | --- | --- | " + " | ".join("---" for _ in PLANNING) + " |",
            *planning,
        ]
    return lines


def class_cache_sentence(cache: dict | None) -> str:
    """What the job's driver JVM started with: the class-data archive ``secure-mirror run`` writes and maps
    (secure_mirror/run/class_cache.py), or none (results from before it)."""
    if not cache:
        return "The job's driver JVM started without a class-data archive (no record of one in these results).\n"
    if cache.get("written_by") == "the caller":
        return f"The job's class-data cache was the caller's: `SECURE_MIRROR_CLASS_CACHE={cache['folder']}`.\n"
    return (
        f"The job's driver JVM mapped the class-data archive `secure-mirror run` keeps (secure_mirror/run/"
        f"class_cache.py), {cache.get('archive_bytes', 0) / 1e6:.0f} MB, written by {cache['written_by']} "
        f"({cache.get('warm_up_seconds', 0):.0f} s, exit code {cache.get('warm_up_exit_code')}). MirrorMaker 2 and the "
        "copy limit start as shipped.\n"
    )


def markdown(result: dict) -> str:
    p = result["parameters"]
    machine = result["machine"]
    head = [
        "# Scale: partitions and topics\n",
        f"Command: `{result['command']}` (seed {result['seed']})\n",
        f"{p['records']:,} records per size ({p['values']}); on {machine['cpus']} CPUs ({machine['platform']}). Equal "
        f"parallelism {p['tasks']}: the job on `local[{p['tasks']}]` (with the mirror source `mirror.spark.tasks: "
        f"{p['tasks']}`), MirrorMaker 2 with `tasks.max={p['tasks']}`, the copy limit with {p['tasks']} loops. Time "
        f"limit {p['timeout_seconds']:.0f} s per contender and size; {p.get('repeats', 1)} repeat(s). SASL_SSL + "
        f"GSSAPI on both sides. The brokers' logs on {machine.get('sandbox_file_system', 'a file system not recorded')}"
        f", {read_ahead.sentence(machine.get('sandbox_disk'))} (NOTES section 16)."
        f"{' Flight Recordings on: not for comparison.' if p.get('flight_recordings') else ''}\n",
        class_cache_sentence(result.get("class_cache")),
        EXPLAINED,
    ]
    body = [line for size in result["sizes"] for line in size_section(size)]
    return "\n".join(head + body) + "\n"
