"""The scale benchmark's Markdown, generated from its json only (``benchmarks/scale.py`` writes both)."""

from __future__ import annotations

LABELS = {
    "copy_limit": "copy limit",
    "mirrormaker2": "MirrorMaker 2",
    "secure_mirror": "secure_mirror (mirror source), at_least_once",
    "secure_mirror_exactly_once": "secure_mirror (mirror source), exactly_once",
    "secure_mirror_kafka_source": "secure_mirror (spark kafka source), at_least_once",
    "secure_mirror_exactly_once_kafka_source": "secure_mirror (spark kafka source), exactly_once",
}
PLANNING = ("latestOffset", "queryPlanning", "getBatch", "addBatch", "triggerExecution")

EXPLAINED = """\
How each figure is measured (benchmarks/scale.py, benchmarks/scale_probes.py):
- finished: the target held all N records (exactly_once: the positions its sink commits with them cover N and the
  target's last stable offsets reached its end offsets, i.e. every commit's markers are written, which is when a
  read_committed reader sees them all) within the time limit; otherwise the row is over the records it got there
  (the committed ones for exactly_once, else the sum of the target's end offsets) and says why it stopped;
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
- load average: the machine's 1-minute load average when the contender started (other work on a shared machine
  moves every figure).
"""


def _num(value, spec: str = ",.0f") -> str:
    return "-" if value is None else format(value, spec)


def _main_row(name: str, c: dict) -> str:
    label = LABELS.get(name, name)
    if "error" in c:
        return f"| {label} | error: {c['error'][:200]} |" + " |" * 7
    done = "yes" if c["finished"] else f"no: {c['why']}"
    return (
        f"| {label} | {done} | {c['records']:,} | {_num(c['seconds'], '.1f')} | {_num(c['records_per_second'])} | "
        f"{_num(c.get('steady_records_per_second'))} | {_num(c.get('first_record_seconds'), '.1f')} | "
        f"{_num(c.get('cpu_seconds_per_million'), '.1f')} | {_num(c.get('broker_cpu_seconds_per_million'), '.1f')} |"
    )


def _resource_row(name: str, c: dict) -> str | None:
    if "error" in c:
        return None
    kdc, conns = c["kdc"], c["peak_connections"]
    per_jvm = ", ".join(_num(v, ",.0f") for v in c["peak_heap_used_mib_per_jvm"]) or "-"
    return (
        f"| {LABELS.get(name, name)} | {c['jvms']} | {_num(c['peak_heap_used_mib'])} ({per_jvm}) | "
        f"{_num(c['peak_heap_committed_mib'])} | {conns.get('source', 0)} | {conns.get('target', 0)} | "
        f"{kdc['mirror_as_req']} | {kdc['mirror_tgs_req']} | {kdc['others_as_req']} / {kdc['others_tgs_req']} | "
        f"{c['samples']} | {_num(c.get('load_average_at_start'), '.1f')} |"
    )


def _planning_row(name: str, c: dict) -> str | None:
    if "error" in c or "batches" not in c:
        return None
    phases = c.get("batch_phases") or {}
    cells = [f"{_num(phases[p]['median_ms'])} / {_num(phases[p]['max_ms'])}" if p in phases else "-" for p in PLANNING]
    return (
        f"| {LABELS.get(name, name)} | {c['batches']} | {_num(c.get('job_startup_seconds'), '.1f')} | "
        + " | ".join(cells)
        + " |"
    )


def size_section(size: dict) -> list[str]:
    contenders = size["contenders"]
    lines = [
        f"\n## {size['partitions']:,} partitions over {size['topics']} topic(s), {size['records']:,} records\n",
        f"Loaded in {size['load_seconds']:.1f} s; order of the runs: {' -> '.join(size['order'])}.\n",
        "| contender | finished | records on target | seconds | records/s start to end | steady records/s | "
        "first record, s | CPU s per million records | brokers' CPU s per million records |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    lines += [_main_row(name, c) for name, c in contenders.items()]
    lines += [
        "",
        "| contender | JVMs | peak heap used, MiB (per JVM) | peak heap committed, MiB | peak connections to the source broker | "
        "to the target broker | KDC AS_REQ (mirror) | KDC TGS_REQ (mirror) | KDC AS / TGS (others) | samples | "
        "load average at its start |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    lines += [row for name, c in contenders.items() if (row := _resource_row(name, c))]
    planning = [row for name, c in contenders.items() if (row := _planning_row(name, c))]
    if planning:
        lines += [
            "",
            "| the job | batches | process start to first batch, s | "
            + " | ".join(f"{p} ms, median / max" for p in PLANNING)
            + " |",
            "| --- | --- | --- | " + " | ".join("---" for _ in PLANNING) + " |",
            *planning,
        ]
    return lines


def markdown(result: dict) -> str:
    p = result["parameters"]
    machine = result["machine"]
    head = [
        "# Scale: partitions and topics\n",
        f"Command: `{result['command']}` (seed {result['seed']})\n",
        f"{p['records']:,} records per size ({p['values']}); on {machine['cpus']} CPUs ({machine['platform']}). Equal "
        f"parallelism {p['tasks']}: the job on `local[{p['tasks']}]` (with the mirror source `mirror.spark.tasks: "
        f"{p['tasks']}`), MirrorMaker 2 with `tasks.max={p['tasks']}`, the copy limit with {p['tasks']} loops. Time "
        f"limit {p['timeout_seconds']:.0f} s per contender and size. SASL_SSL + GSSAPI on both sides.\n",
        EXPLAINED,
    ]
    body = [line for size in result["sizes"] for line in size_section(size)]
    return "\n".join(head + body) + "\n"
