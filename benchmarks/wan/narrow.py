"""A narrow link (``python -m benchmarks.wan.narrow --wan 50:10 --link-mbit 20``): the job with its default windows
against the job told the link (``mirror.link_mbit``, docs/wan.md), in both guarantees, one after another on one
sandbox whose source sits behind Toxiproxy at that link; each run's first record, start-to-end and steady rates. The
sandbox's cap is per connection, so ``--link-mbit`` is the cap times the connections (the job's tasks)."""

from __future__ import annotations

import argparse
from pathlib import Path

import yaml

from benchmarks.harness import admin, cli, provenance
from benchmarks.harness.bench import SOURCE_TOPIC, Bench, setup_topic
from benchmarks.harness.results import write_results
from benchmarks.harness.session import kept_on_failure
from benchmarks.wan.main import links, measured_round_trip
from secure_mirror.sandbox import Sandbox

RUNS = [  # (label, contender, link declared)
    ("at_least_once, default windows", "secure_mirror", False),
    ("at_least_once, mirror.link_mbit", "secure_mirror", True),
    ("exactly_once, default windows", "secure_mirror_exactly_once", False),
    ("exactly_once, mirror.link_mbit", "secure_mirror_exactly_once", True),
]
FIGURES = ("startup_seconds", "records_per_second", "steady_records_per_second")
log = cli.prefixed("narrow")


def declared(profile: Path, mbit: float) -> Path:
    data = yaml.safe_load(profile.read_text())
    data["mirror"]["link_mbit"] = mbit
    path = profile.with_name(f"{profile.stem}-link.yaml")
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path


def run(args: argparse.Namespace, command: str) -> dict:
    result = {"build": provenance.build(), "command": command, "link": args.wan[0].text, "runs": {}}
    with kept_on_failure("secure-mirror-narrow-") as work:
        sb = Sandbox.up(work / "sandbox", wan_link=args.wan[0])
        try:
            bench = Bench(sb, work, args.records, args.partitions, args.seed)
            files = setup_topic(bench, SOURCE_TOPIC, args.records, sorted({c for _, c, _ in RUNS}))
            result["measured_round_trip"] = measured_round_trip(sb)
            for label, name, link in RUNS:
                log(label)
                profile = declared(files[name], args.link_mbit) if link else files[name]
                try:
                    result["runs"][label] = bench.contender(name, profile, args.timeout)
                except Exception as exc:  # noqa: BLE001 - recorded; the other runs go on
                    result["runs"][label] = {"error": f"{type(exc).__name__}: {str(exc)[:600]}"}
                log(f"{label}: {result['runs'][label]}")
        finally:
            admin.drop_kept()
            sb.down()
    return result


def markdown(result: dict) -> str:
    lines = [
        "# The job across a narrow link (python -m benchmarks.wan.narrow)",
        "",
        f"`{result['command']}`; round trip measured: {result.get('measured_round_trip')}",
        "",
        "| run | first record s | start to end records/s | steady records/s |",
        "| --- | --- | --- | --- |",
    ]
    for label, figures in result["runs"].items():
        cells = [f"{figures[f]:,.1f}" if isinstance(figures.get(f), float) else "-" for f in FIGURES]
        lines.append(
            f"| {label} | " + " | ".join(cells) + (f" ({figures['error']})" if "error" in figures else "") + " |"
        )
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.wan.narrow", description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--wan", type=links, default=links("50:10"), help="the link, RTT_MS:MBIT (50:10)")
    parser.add_argument("--link-mbit", type=float, default=20.0, help="mirror.link_mbit of the told runs")
    parser.add_argument("--records", type=int, default=100_000)
    parser.add_argument("--partitions", type=int, default=6)
    parser.add_argument("--timeout", type=float, default=600.0)
    cli.add_out_option(parser)
    cli.add_seed_option(parser)
    args = parser.parse_args(argv)
    cli.stop_on_sigterm()
    given = cli.given(argv)
    args.seed = cli.drawn_seed(args.seed, given)
    result = run(args, " ".join(["python -m benchmarks.wan.narrow", *given]))
    print(write_results(args.out, "wan-narrow", result, markdown(result)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
