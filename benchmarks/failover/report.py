"""The failover benchmark's Markdown, from its result only."""

from __future__ import annotations


def seconds(figure: dict | None) -> str:
    return "-" if figure is None else f"{figure['min']:.1f} / {figure['median']:.1f} / {figure['max']:.1f}"


def not_moved(commit: dict) -> str:
    """The partitions whose target offset did not move within the window (``p<n>``, with the window's length)."""
    never = commit["never_translated"]
    return f"{', '.join(f'p{p}' for p in never)} ({commit['window_seconds']:.0f} s)" if never else "-"


def markdown(result: dict) -> str:
    s = result["scenario"]
    load = result["load_average_1min"]
    lines = [
        "# Failover: re-reads and group sync latency, secure_mirror against MirrorMaker 2 (issue 28)",
        "",
        f"Command: `{result['command']}` (seed {result['seed']}), on {result['machine']['cpus']} CPUs, load average "
        f"(1 min) {load['start']:.2f} at the start, {load.get('end', 0):.2f} at the end; contenders in the order "
        f"{', '.join(s['order'])}.",
        "",
        f"{s['partitions']} partitions, each written alike: "
        + ", ".join(f"{end} {size}" for end, size in s["layout"])
        + "; the group's final points: "
        + ", ".join(f"p{p} {kind} ({at})" for p, (kind, at) in s["final_points"].items())
        + ". Sync latency: seconds from the group's commit on the source to its offset on the target taking the value "
        "it ends the window with (translated), and to it being the exact translation for good (exact: "
        "from there a read_committed reader reads exactly what the group had not consumed), min / median / max over "
        "the partitions whose source offset moved and whose exact translation changed (a group moved within an "
        "aborted transaction keeps its target offset: not timed). The first commit is half of the final one.",
        "",
        "| contender | intervals | re-read | skipped | of unconsumed | partitions without target offset | first "
        "commit: translated, s | first: exact, s | first: not moved in the window | final commit: translated, s | "
        "final: exact, s | final: not moved in the window |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for name, c in result["contenders"].items():
        if "error" in c:
            lines.append(f"| {name} | - | error: {c['error'][:200]} | | | | | | | | | |")
            continue
        f, a, z = c["failover"], c["first_commit"], c["final_commit"]
        intervals = ", ".join(f"{k} {v}" for k, v in c["intervals"].items())
        lines.append(
            f"| {name} | {intervals} | {f['re_read']} | {f['skipped']} | {f['unconsumed']} | "
            f"{f['without_target_offset'] or '-'} | {seconds(a['translated'])} | {seconds(a['exact'])} | "
            f"{not_moved(a)} | {seconds(z['translated'])} | {seconds(z['exact'])} | {not_moved(z)} |"
        )
    lines += ["", "Per partition (kind, source offset, target offset, re-read, skipped):", ""]
    for name, c in result["contenders"].items():
        if "error" in c:
            continue
        rows = c["failover"]["partitions"].values()
        cells = [
            f"{r['kind']} {r['source_offset']} -> {r['target_offset']}: {r.get('re_read', '-')}/{r.get('skipped', '-')}"
            for r in rows
        ]
        lines.append(f"- {name}: " + "; ".join(cells))
    return "\n".join(lines) + "\n"
