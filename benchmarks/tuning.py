"""Tuning runs for the mirror job: the same backlog mirrored with one setting changed at a time, side by side.

    scripts/bench --tuning [--records N] [--rounds R] [--sandbox DIR]

Each variant is the sandbox profile (SASL_SSL + GSSAPI both sides) with one change; every round runs every variant
once, in turn, so drift on a shared machine spreads over all of them. Results: ``benchmarks/results/tuning.{json,md}``;
what they taught is in ``benchmarks/NOTES.md``.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
from pathlib import Path

import yaml

from benchmarks.harness import cli, provenance, reading
from benchmarks.harness.bench import SOURCE_TOPIC, Bench
from benchmarks.harness.cli import log
from benchmarks.harness.results import write_results
from secure_mirror.sandbox import Sandbox


def _delivery(**values):
    return lambda data: data["mirror"].setdefault("delivery", {}).update(values)


def _source_client(**values):
    return lambda data: data["source"].setdefault("client_options", {}).update(values)


def _spark(**values):
    return lambda data: data["mirror"].setdefault("spark", {}).update(values)


VARIANTS = {
    "defaults": lambda data: None,
    "kafka-default-batching (linger 0 ms, batch 16 KiB)": _delivery(linger_ms=0, batch_size=16384),
    "compression none": _delivery(compression="none"),
    "compression zstd": _delivery(compression="zstd"),
    "fetch 8 MiB per partition": _source_client(**{"max.partition.fetch.bytes": 8 * 1024 * 1024}),
    "maxOffsetsPerTrigger 100000": _spark(max_offsets_per_trigger=100_000),
}


def run(sb: Sandbox, work: Path, records: int, rounds: int, names: list[str]) -> dict:
    bench = Bench(sb, work, records, 6, seed=1)
    secure = bench.profile("gssapi")
    bench.grant(bench.render(secure))
    have = reading.end_offsets(sb.client_conf("source", "admin"), SOURCE_TOPIC)
    if have not in (0, records):
        raise SystemExit(f"{SOURCE_TOPIC} on this sandbox holds {have} records, not {records}; use a fresh sandbox")
    if have == 0:
        log(f"loading {records} records")
        bench.load_source()
    bench.source_records = records
    profiles = {}
    for index, name in enumerate(names):
        data = yaml.safe_load(secure.read_text())
        VARIANTS[name](data)
        profiles[name] = work / f"variant{index}.yaml"
        profiles[name].write_text(yaml.safe_dump(data, sort_keys=False))
    samples: dict[str, list[dict]] = {name: [] for name in names}
    for round_ in range(rounds):
        for name in names:
            log(f"round {round_ + 1}/{rounds}: {name}")
            samples[name].append(bench.secure_mirror(profiles[name], max(300.0, records / 1000)))
    return {
        name: {
            "median_records_per_second": statistics.median(s["records_per_second"] for s in runs),
            "median_job_steady_records_per_second": statistics.median(
                s.get("job_steady_records_per_second", 0) for s in runs
            ),
            "runs": runs,
        }
        for name, runs in samples.items()
    }


def markdown(result: dict) -> str:
    rows = [
        "| variant | median records/s (start to all N) | median job records/s from its first batch |",
        "| --- | --- | --- |",
    ]
    for name, v in result["variants"].items():
        rows.append(
            f"| {name} | {v['median_records_per_second']:.0f} | {v['median_job_steady_records_per_second']:.0f} |"
        )
    p = result["parameters"]
    return (
        f"# Tuning runs\n\nCommand: `{result['command']}`\n\n{p['records']} records of 1 KiB over 6 partitions, "
        f"{p['rounds']} round(s), on {result['machine']['cpus']} CPUs; SASL_SSL + GSSAPI on both sides.\n\n"
        + "\n".join(rows)
        + "\n"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=500_000)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--sandbox", help="a running sandbox's folder (left running); default: a fresh one")
    parser.add_argument("--variant", action="append", choices=list(VARIANTS), help="only these (repeatable)")
    cli.add_out_option(parser)
    args = parser.parse_args(argv)
    names = args.variant or list(VARIANTS)
    build = provenance.build()  # the checkout the run starts from: the code it measures
    with tempfile.TemporaryDirectory(prefix="secure-mirror-tuning-") as tmp:
        work = Path(tmp)
        sb = Sandbox.load(Path(args.sandbox)) if args.sandbox else Sandbox.up(work / "sandbox")
        try:
            variants = run(sb, work, args.records, args.rounds, names)
        finally:
            if not args.sandbox:
                sb.down()
    command = "scripts/bench --tuning " + " ".join(argv if argv is not None else sys.argv[1:])
    result = {
        "build": build,
        "command": command.strip(),
        "machine": provenance.machine(),
        "parameters": {"records": args.records, "rounds": args.rounds},
        "variants": variants,
    }
    print(write_results(args.out, "tuning", result, markdown(result)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
