"""The comparison's figures side by side (:func:`ratios`), its Markdown report and its chart, from its result only."""

from __future__ import annotations

from pathlib import Path


def ratios(summary: dict, key: str) -> dict:
    """The job's figures over MirrorMaker 2's and the copy limit's, and exactly_once over at_least_once and over
    MirrorMaker 2 with exactly-once."""
    have = {name: c[key] for name, c in summary.items() if key in c}
    pairs = [
        ("secure_mirror", "mirrormaker2"),
        ("secure_mirror", "copy_limit"),
        ("mirrormaker2", "copy_limit"),
        ("secure_mirror_exactly_once", "secure_mirror"),
        ("secure_mirror_exactly_once", "mirrormaker2"),
        ("secure_mirror_exactly_once", "mirrormaker2_exactly_once"),
        ("mirrormaker2_exactly_once", "mirrormaker2"),
    ]
    return {f"{a}_over_{b}": have[a] / have[b] for a, b in pairs if a in have and b in have and have[b]}


def table(summary: dict) -> list[str]:
    rows = [
        "| contender | records/s start to end (median) | min | max | first record on target, s | steady records/s, "
        "target append times 10%-90% | CPU s per million records (its processes) | brokers' CPU s per million "
        "records | job start-up, s |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ]

    def fmt(c: dict, key: str, spec: str) -> str:
        return format(c[key], spec) if key in c else "-"

    for name, c in summary.items():
        rows.append(
            f"| {name} | {c['median_records_per_second']:.0f} | {c['min']:.0f} | {c['max']:.0f} | "
            f"{fmt(c, 'median_startup_seconds', '.1f')} | {fmt(c, 'median_steady_records_per_second', '.0f')} | "
            f"{fmt(c, 'median_cpu_seconds_per_million', '.1f')} | "
            f"{fmt(c, 'median_broker_cpu_seconds_per_million', '.1f')} | "
            f"{fmt(c, 'median_job_startup_seconds', '.1f')} |"
        )
    return rows


def ratio_lines(values: dict) -> str:
    return "\n".join(f"- {k}: **{v:.2f}**" for k, v in values.items()) or "- n/a"


def markdown(result: dict, command: str) -> str:
    lat = "\n".join(
        f"- {k}: p50 {v['p50_ms']:.0f} ms, p99 {v['p99_ms']:.0f} ms ({v['samples']} samples)"
        if "p50_ms" in v
        else f"- {k}: no figure ({v.get('error', 'failed')})"
        for k, v in result["latency"].items()
    )
    pre = result.get("preflight") or {}
    preflight = (
        (
            f"- {pre['topics']} topics: {pre['first_run_seconds']:.1f} s (first run), "
            f"{pre['second_run_seconds']:.1f} s (second run), {pre['with_admin_audit_seconds']:.1f} s with the "
            f"--as-admin ACL audit; {pre['checks']} checks, ok={pre['ok']}"
        )
        if pre
        else "- not measured"
    )
    p = result["parameters"]
    orders = "; ".join(" -> ".join(order) for order in p["orders"])
    text = (
        f"# Benchmark\n\nCommand: `{command}`\n\n{p['records']} records ({p['values']}) over "
        f"{p['partitions']} partitions, {p['repeats']} repeat(s), seed {p['seed']}, on "
        f"{result['machine']['cpus']} CPUs; the job has {p['job_task_slots']} task slots, MirrorMaker 2 "
        f"{p['mm2_tasks']} tasks, the copy limit {p['copy_limit_threads']} consumer-producer loops (the job's "
        f"security, acks and compression, tuned as benchmarks/CopyLimit.java says); order of the runs: {orders}. "
        "Every figure is a median over the repeats. CPU is the contender's own processes (from /proc: the process "
        "started and its descendants); the brokers' CPU is theirs while it ran. For a contender writing in "
        "transactions (exactly_once, MirrorMaker 2 with exactly-once), 'on the target' means what a read_committed "
        "reader sees.\n\n"
        + "\n".join(table(result["contenders"]))
        + f"\n\nRatios, start to end:\n{ratio_lines(result['ratios'])}\n\nRatios, steady (the same window of the "
        f"target's append times):\n{ratio_lines(result['steady_ratios'])}\n\nRatios, CPU seconds per million "
        f"records (lower is better):\n{ratio_lines(result['cpu_ratios'])}\n"
    )
    if result.get("long"):
        long_order = " -> ".join(p["long_orders"][0])
        text += (
            f"\n## Long round: {p['long_records']} records, each contender once (order: {long_order})\n\n"
            + "\n".join(table(result["long"]))
            + f"\n\nRatios, start to end:\n{ratio_lines(result['long_ratios'])}\n\nRatios, steady:\n"
            f"{ratio_lines(result['long_steady_ratios'])}\n\nRatios, CPU per record:\n"
            f"{ratio_lines(result['long_cpu_ratios'])}\n"
        )
    text += (
        f"\n## Latency (source create time -> target append time, {p['latency_records']} records at "
        f"{p['latency_rate']:.0f}/s after the backlog)\n\n{lat or '- not measured'}\n\n## Pre-flight at scale\n\n"
        f"{preflight}\n"
    )
    return text


def chart(result: dict, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (a, c, b) = plt.subplots(1, 3, figsize=(15, 4))
    names = list(result["contenders"])
    a.bar(names, [result["contenders"][n].get("median_steady_records_per_second", 0) for n in names], color="#4477aa")
    a.set_ylabel("records/s (median, steady)")
    a.set_title("Steady throughput")
    a.tick_params(axis="x", rotation=20)
    c.bar(names, [result["contenders"][n].get("median_cpu_seconds_per_million", 0) for n in names], color="#228833")
    c.set_ylabel("CPU s per million records")
    c.set_title("CPU per record (own processes)")
    c.tick_params(axis="x", rotation=20)
    lat = {k: v for k, v in result["latency"].items() if "p50_ms" in v}
    if lat:
        xs = list(lat)
        b.bar(
            [f"{x}\np50" for x in xs] + [f"{x}\np99" for x in xs],
            [lat[x]["p50_ms"] for x in xs] + [lat[x]["p99_ms"] for x in xs],
            color="#cc6677",
        )
        b.set_ylabel("ms")
        b.set_yscale("log")
        b.tick_params(axis="x", rotation=60, labelsize=7)
    b.set_title("Latency")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
