"""The Markdown report of ``scripts/bench --wan``: per link, the round trip measured, each contender's medians, the
latency percentiles; then each contender's steady rate against its own at the first link, and the ratios the issue's
targets name (exactly_once to at_least_once, the job to MirrorMaker 2)."""

from __future__ import annotations

from benchmarks.harness.contenders import LABELS


def _median(summary: dict, figure: str) -> float | None:
    found = summary.get(figure)
    return found["median"] if found else None


def _number(value: float | None, digits: int = 0) -> str:
    return "-" if value is None else f"{value:,.{digits}f}"


def _round_trip(measured: dict) -> str:
    shown = [
        f"{server} {answer['ms']:.1f} ms" if "ms" in answer else f"{server}: {answer['error']}"
        for server, answer in measured.items()
    ]
    return ", ".join(shown)


def _cap(link: dict) -> str:
    if link.get("cap") == "shared":
        return f"{link['mbit']:g} Mbit/s shared by every connection through the proxy (tc HTB on lo)"
    return f"{link['mbit']:g} Mbit/s on each connection (Toxiproxy's bandwidth toxic: {link.get('cap_note')})"


def link_table(link: dict) -> list[str]:
    lines = [
        f"### {link['link']['text']} (round trip measured: {_round_trip(link['measured_round_trip'])})",
        "",
        *([f"The cap: {_cap(link['link'])}.", ""] if link["link"].get("mbit") else []),
        "| contender | steady records/s | start to end records/s | first record s | CPU s per million | runs "
        "(failed) |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    for name, summary in link["summary"].items():
        lines.append(
            f"| {LABELS.get(name, name)} | {_number(_median(summary, 'steady_records_per_second'))} "
            f"| {_number(_median(summary, 'records_per_second'))} | {_number(_median(summary, 'startup_seconds'), 1)} "
            f"| {_number(_median(summary, 'cpu_seconds_per_million'), 1)} "
            f"| {summary['runs']} ({summary['errors']}) |"
        )
    if link["link"].get("cap") == "shared":
        lines += ["", "| contender | steady Mbit/s on the link (median) | of the cap |", "| --- | --- | --- |"]
        for name, summary in link["summary"].items():
            mbit = _median(summary, "steady_link_mbit")
            share = f"{mbit / link['link']['mbit']:.2f}x" if mbit else "-"
            lines.append(f"| {LABELS.get(name, name)} | {_number(mbit)} | {share} |")
    latency = link.get("latency") or {}
    if "error" in latency:
        lines += ["", f"Latency: not measured ({latency['error']})."]
    elif latency:
        lines += [
            "",
            "| latency, create to append (medians of the runs) | p50 ms | p99 ms | samples | p99 of each run, ms |",
            "| --- | --- | --- | --- | --- |",
        ]
        for name, figures in latency.items():
            each = ", ".join(_number(v) for v in figures.get("p99_each_ms", [])) or figures.get("error", "-")[:120]
            lines.append(
                f"| {LABELS.get(name, name)} | {_number(figures.get('p50_ms'))} | {_number(figures.get('p99_ms'))} "
                f"| {figures.get('samples', '-')} | {each} |"
            )
    return lines + [""]


def ratios(result: dict) -> list[str]:
    """Each contender's steady rate at each link over its own at the first; exactly_once over at_least_once; the job
    over MirrorMaker 2 as rendered."""
    links = result["links"]
    if not links:
        return []
    first = links[0]
    lines = [
        f"### Steady records/s against each contender's own at {first['link']['text']} ms",
        "",
        "| contender | " + " | ".join(link["link"]["text"] for link in links) + " |",
        "| --- |" + " --- |" * len(links),
    ]
    for name in first["summary"]:
        base = _median(first["summary"][name], "steady_records_per_second")
        cells = []
        for link in links:
            value = _median(link["summary"].get(name, {}), "steady_records_per_second")
            cells.append("-" if value is None or not base else f"{value / base:.2f}x")
        lines.append(f"| {LABELS.get(name, name)} | " + " | ".join(cells) + " |")
    lines += [
        "",
        "| link | exactly_once / at_least_once | at_least_once / MirrorMaker 2 | at_least_once / copy limit |",
    ]
    lines.append("| --- | --- | --- | --- |")
    for link in links:
        s = {name: _median(summary, "steady_records_per_second") for name, summary in link["summary"].items()}
        lines.append(
            f"| {link['link']['text']} | {_ratio(s.get('secure_mirror_exactly_once'), s.get('secure_mirror'))} "
            f"| {_ratio(s.get('secure_mirror'), s.get('mirrormaker2'))} | {_ratio(s.get('secure_mirror'), s.get('copy_limit'))} |"
        )
    return lines + [""]


def _ratio(top: float | None, bottom: float | None) -> str:
    return "-" if not top or not bottom else f"{top / bottom:.2f}x"


def markdown(result: dict) -> str:
    p = result["parameters"]
    lines = [
        "# The mirror across a link (scripts/bench --wan)",
        "",
        f"`{result['command']}`",
        "",
        f"Proxy: {result['proxy']}. {p['records']:,} records over {p['partitions']} partitions ({p['values']}), "
        f"{p['tasks']} tasks for every contender, {p['repeats']} repeat(s) per link (medians), seed {p['seed']}; "
        f"{p.get('warm_ups', 0)} unmeasured copy-limit run(s) before the first link's; "
        f"latency at {p['latency_rate']:,.0f} records/s over {p['latency_records']:,} records. The loads and the "
        "target are direct; only the mirror's connections to the source cross the link. The proxy ends TCP on "
        "loopback: Kafka's request windows see the round trip, TCP's receive windows do not.",
        "",
    ]
    for link in result["links"]:
        lines += link_table(link)
    lines += ratios(result)
    return "\n".join(lines)
