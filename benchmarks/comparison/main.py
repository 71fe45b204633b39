"""The comparison's run on one fresh sandbox: the source loaded, every contender once per repeat in a shuffled
order, the latency runs, the long round and pre-flight at scale; and its command, ``scripts/bench`` (the package's
docstring, benchmarks/comparison/__init__.py, says what each figure is)."""

from __future__ import annotations

import argparse
import functools
import random
from collections.abc import Callable
from pathlib import Path

from benchmarks import comparison, preflight_scale
from benchmarks.comparison.latency import LATENCY_FILES, latencies
from benchmarks.comparison.report import chart, markdown, ratios
from benchmarks.harness import cli, contenders, provenance
from benchmarks.harness.bench import SOURCE_TOPIC, Bench, setup_topic
from benchmarks.harness.cli import log
from benchmarks.harness.launch import TASK_SLOTS, task_slots
from benchmarks.harness.results import write_results
from benchmarks.harness.session import kept_on_failure
from benchmarks.harness.summary import summarize
from secure_mirror.sandbox import Sandbox

LONG_TOPIC = "bench.long"
# the figures of a contender's runs whose median its results give, under these names
MEDIANS = {
    "median_startup_seconds": "startup_seconds",
    "median_steady_records_per_second": "steady_records_per_second",
    "median_cpu_seconds_per_million": "cpu_seconds_per_million",
    "median_broker_cpu_seconds_per_million": "broker_cpu_seconds_per_million",
    "median_job_startup_seconds": "job_startup_seconds",
    "median_job_steady_records_per_second": "job_steady_records_per_second",
}


def medians(samples: list[dict]) -> dict:
    """One contender's runs as the comparison's results give them (:func:`summarize`'s medians under their names):
    records/s start to end (median, min, max), each figure of :data:`MEDIANS` that every run has, and the runs."""
    summary = summarize(samples, ("records_per_second", *MEDIANS.values()))
    rates = summary["records_per_second"]
    out = {"median_records_per_second": rates["median"], "min": rates["min"], "max": rates["max"], "runs": samples}
    for name, key in MEDIANS.items():
        if key in summary and all(key in s for s in samples):
            out[name] = summary[key]["median"]
    return out


def rounds(names: dict[str, Callable[[], dict]], repeats: int, shuffle: random.Random, label: str):
    """Every contender once per repeat, in a new shuffled order each time."""
    samples: dict[str, list[dict]] = {name: [] for name in names}
    orders = []
    for i in range(repeats):
        order = shuffle.sample(list(names), len(names))
        orders.append(order)
        for name in order:
            log(f"{label} {i + 1}/{repeats}: {name}")
            samples[name].append(names[name]())
            figures = samples[name][-1]
            log(
                f"{name}: {figures['records_per_second']:.0f} records/s start to end, "
                f"{figures['steady_records_per_second']:.0f} steady, {figures['cpu_seconds_per_million']:.1f} CPU s "
                "per million records"
            )
    return {name: medians(s) for name, s in samples.items()}, orders


def contender_runs(bench: Bench, files: dict[str, Path], timeout: float) -> dict[str, Callable[[], dict]]:
    """Each contender of ``files`` as a call that runs it to the end (:meth:`Bench.contender`)."""
    return {name: functools.partial(bench.contender, name, file, timeout) for name, file in files.items()}


def measure(args: argparse.Namespace, bench: Bench, shuffle: random.Random) -> dict:
    """The runs on one sandbox: every contender's repeats, the latency runs, the long round and pre-flight at scale."""
    named = list(dict.fromkeys([*args.contenders, *(LATENCY_FILES if args.latency_records else [])]))
    files = setup_topic(bench, SOURCE_TOPIC, args.records, named)
    out: dict = {"load_seconds": bench.load_seconds}
    runs = contender_runs(bench, {n: files[n] for n in args.contenders}, max(300.0, args.records / 2000))
    out["summary"], out["orders"] = rounds(runs, args.repeats, shuffle, "repeat")
    out["latency"] = {}
    if args.latency_records:
        out["latency"] = latencies(bench, files, args.latency_records, args.latency_rate, args.continuous)
    out["long_summary"], out["long_orders"] = {}, []
    if args.long_records:
        long_files = setup_topic(bench, LONG_TOPIC, args.long_records, args.contenders)
        long_runs = contender_runs(bench, long_files, max(600.0, args.long_records / 2000))
        out["long_summary"], out["long_orders"] = rounds(long_runs, 1, shuffle, "long round")
    out["preflight"] = {}
    if args.preflight_topics:
        log(f"pre-flight over {args.preflight_topics} topics")
        out["preflight"] = preflight_scale.bench(bench.sb, args.preflight_topics, bench.work)
    return out


def run(args: argparse.Namespace, seed: int) -> dict:
    build = provenance.build()  # the checkout the run starts from: the code it measures
    shuffle = random.Random(seed)
    with kept_on_failure("secure-mirror-bench-") as work:
        log("starting the sandbox")
        sb = Sandbox.up(work / "sandbox")
        try:
            bench = Bench(sb, work, args.records, args.partitions, seed)
            measured = measure(args, bench, shuffle)
        finally:
            sb.down()
    return result_of(args, seed, build, bench.class_archive, measured)


def result_of(args: argparse.Namespace, seed: int, build: dict, class_archive: dict | None, measured: dict) -> dict:
    """The comparison's result: its parameters, every contender's figures and their ratios."""
    summary, long_summary = measured["summary"], measured["long_summary"]
    return {
        "build": build,
        "machine": provenance.machine(),
        "parameters": {
            "records": args.records,
            "long_records": args.long_records,
            "partitions": args.partitions,
            "repeats": args.repeats,
            "seed": seed,
            "values": "varied JSON, about 1 KiB (a third to twice)",
            "mm2_tasks": TASK_SLOTS,
            "copy_limit_threads": TASK_SLOTS,
            "job_task_slots": task_slots("local[2]"),
            "contenders": args.contenders,
            "orders": measured["orders"],
            "long_orders": measured["long_orders"],
            "latency_records": args.latency_records,
            "latency_rate": args.latency_rate,
        },
        "load_seconds": measured["load_seconds"],
        "class_cache": class_archive,
        "contenders": summary,
        "long": long_summary,
        "latency": measured["latency"],
        "preflight": measured["preflight"],
        # Process start to all N records on the target, the same clock for every contender.
        "ratios": ratios(summary, "median_records_per_second"),
        # Steady rates from the target's append times over the same window (10% to 90% of N) for every contender.
        "steady_ratios": ratios(summary, "median_steady_records_per_second"),
        "cpu_ratios": ratios(summary, "median_cpu_seconds_per_million"),
        "long_ratios": ratios(long_summary, "median_records_per_second"),
        "long_steady_ratios": ratios(long_summary, "median_steady_records_per_second"),
        "long_cpu_ratios": ratios(long_summary, "median_cpu_seconds_per_million"),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="scripts/bench", description=(comparison.__doc__ or "").splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a run of a few minutes (100k records, 1 repeat)")
    parser.add_argument("--records", type=int)
    parser.add_argument("--long-records", type=int, help="the long round's size (0: none)")
    parser.add_argument("--partitions", type=int, default=6)
    parser.add_argument("--repeats", type=int)
    parser.add_argument("--latency-records", type=int, help="records of the latency runs (0: none)")
    parser.add_argument("--no-continuous", dest="continuous", action="store_false", help="no low-latency contender")
    parser.add_argument("--preflight-topics", type=int, default=1000, help="0 skips pre-flight at scale")
    parser.add_argument(
        "--contenders", type=contenders.names, default=contenders.DEFAULT, help=", ".join(contenders.CONTENDERS)
    )
    cli.add_out_option(parser)
    cli.add_seed_option(parser)
    args = parser.parse_args(argv)
    args.records = args.records or (100_000 if args.quick else 2_000_000)
    args.repeats = args.repeats or (1 if args.quick else 3)
    if args.long_records is None:
        args.long_records = 0 if args.quick else 10_000_000
    latency_records, args.latency_rate = (1000, 200.0) if args.quick else (10_000, 1000.0)
    args.latency_records = latency_records if args.latency_records is None else args.latency_records
    if args.quick:
        args.preflight_topics = min(args.preflight_topics, 100)
    given = cli.given(argv)
    seed = cli.drawn_seed(args.seed, given)
    result = run(args, seed)
    command = ("scripts/bench " + " ".join(given)).strip()
    result["command"] = command
    stem = "quick" if args.quick else "full"
    report = write_results(args.out, stem, result, markdown(result, command))
    chart(result, args.out / f"{stem}.png")
    print(report)
    return 0
