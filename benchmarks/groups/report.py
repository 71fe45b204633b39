"""The groups benchmark's figures, each contender's median over its runs (:func:`medians`), and its report."""

from __future__ import annotations

import statistics
from collections.abc import Callable

FIGURES: dict[str, Callable[[dict], float | None]] = {
    "caught up (s)": lambda r: r.get("caught_up_seconds"),
    "every group's offsets on the target (s)": lambda r: r["in_place"].get("all_present_seconds"),
    "every plain group's exact (s)": lambda r: r["in_place"].get("all_exact_seconds"),
    "plain groups exact at the limit": lambda r: r["in_place"].get("exact"),
    "source broker CPU s per minute, over the baseline": lambda r: _per_minute(r, "source"),
    "target broker CPU s per minute, over the baseline": lambda r: _per_minute(r, "target"),
    "source broker requests/s, over the baseline": lambda r: _requests(r, "source"),
    "target broker requests/s, over the baseline": lambda r: _requests(r, "target"),
    "source OffsetFetch requests/s, over the baseline": lambda r: _requests(r, "source", "OffsetFetch"),
    "commit on the target, median (s)": lambda r: r["window"]["commit_to_target_seconds"]["median"],
    "commit on the target, max (s)": lambda r: r["window"]["commit_to_target_seconds"]["max"],
    "commits not on the target within the window": lambda r: r["window"]["commit_to_target_seconds"][
        "not_in_place_in_window"
    ],
    "records re-read after failover, all plain groups": lambda r: r["after_stop"]["re_read"],
    "records skipped after failover, all plain groups": lambda r: r["after_stop"]["skipped"],
    "plain groups with no target offset on a partition": lambda r: r["after_stop"]["missing"],
    "error lines in its log": lambda r: r["log"]["error_lines"],
    "sync pass, median (s)": lambda r: (r["log"].get("passes") or {}).get("incremental_median_seconds"),
    "sync pass, max (s)": lambda r: (r["log"].get("passes") or {}).get("incremental_max_seconds"),
    "sync pass after the catch-up, median (s)": lambda r: (r["log"].get("passes") or {}).get(
        "steady_incremental_median_seconds"
    ),
    "full sync pass, median (s)": lambda r: (r["log"].get("passes") or {}).get("full_median_seconds"),
    "groups planned per pass, median": lambda r: (r["log"].get("passes") or {}).get("planned_median"),
}


def _per_minute(run: dict, side: str) -> float:
    window, base = run["window"], run["baseline"]
    over = window["broker_cpu_seconds"][side] / window["seconds"] - base["broker_cpu_seconds"][side] / base["seconds"]
    return over * 60


def _requests(run: dict, side: str, api: str | None = None) -> float:
    """Requests per second the broker served in the window less in the baseline, each over the seconds between its
    two readings."""
    window, base = run["window"], run["baseline"]

    def rate(part: dict) -> float:
        served = part["broker_requests"][side]
        return (served.get(api, 0) if api else sum(served.values())) / part["broker_requests_seconds"]

    return rate(window) - rate(base)


def medians(runs: list[dict]) -> dict[str, float | None]:
    """Each figure's median over the runs that have it (a run that failed has none)."""
    out: dict[str, float | None] = {}
    for name, figure in FIGURES.items():
        values = []
        for run in runs:
            if "error" in run:
                continue
            try:
                value = figure(run)
            except (KeyError, TypeError, ZeroDivisionError):
                value = None
            if value is not None:
                values.append(value)
        out[name] = statistics.median(values) if values else None
    return out


def _cell(value: float | None) -> str:
    if value is None:
        return "-"
    return f"{value:,.0f}" if abs(value) >= 100 or float(value).is_integer() else f"{value:.2f}"


def markdown(result: dict) -> str:
    names = list(result["runs"])
    summary = {name: medians(runs) for name, runs in result["runs"].items()}
    result["summary"] = summary
    shape = result["estate"]
    lines = [
        f"# Consumer groups at scale: {shape['groups']:,} groups",
        "",
        f"`{result['command']}` (seed {result['seed']}) on {result['machine']}",
        "",
        f"The estate: {shape['groups']:,} groups ({shape['active']:,} committing once per sync interval, "
        f"{shape['member']} with a member, {shape['tx']} on a transactional topic, {shape['idle']:,} idle), "
        f"{shape['group_partitions']:,} group partitions over {shape['topics']} topics of "
        f"{shape['partitions_per_topic']} partitions. Medians of {max(len(r) for r in result['runs'].values())} runs.",
        "",
        "| figure | " + " | ".join(names) + " |",
        "|---|" + "---|" * len(names),
    ]
    for figure in FIGURES:
        lines.append(f"| {figure} | " + " | ".join(_cell(summary[n][figure]) for n in names) + " |")
    errors = {n: [r["error"] for r in runs if "error" in r] for n, runs in result["runs"].items()}
    for name, found in errors.items():
        for error in found:
            lines.append(f"\n{name} failed a run: {error}")
    commands = result.get("commands", {})
    if commands:
        lines += ["", "| command over the estate | median seconds | exit codes |", "|---|---|---|"]
        for name, figures in commands.items():
            exits = ",".join(str(r["exit"]) for r in figures["runs"])
            lines.append(f"| {name} | {figures['median_seconds']:.1f} | {exits} |")
    load = result["load_average_1min"]
    lines += ["", f"Load average (1 min): {load['start']:.1f} at the start, {load.get('end', 0):.1f} at the end."]
    return "\n".join(lines) + "\n"
