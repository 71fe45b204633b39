"""The scale benchmark's run (``scripts/bench --scale``; the package's docstring, benchmarks/scale/__init__.py, says
what it measures): every size on one sandbox, each contender ``--repeats`` times in a shuffled order, the results
written after every repeat."""

from __future__ import annotations

import argparse
import json
import random
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path

from benchmarks import scale as package
from benchmarks.harness import admin, cli, contenders, provenance, read_ahead
from benchmarks.harness.launch import TASK_SLOTS
from benchmarks.harness.results import write_results
from benchmarks.harness.summary import summarize
from benchmarks.scale.report import FIGURES, markdown
from benchmarks.scale.runs import WARM_UP, Scale, log
from secure_mirror.sandbox import Sandbox


def run_size(scale: Scale, partitions: int, topics: int, shuffle: random.Random, done: Callable[[dict], None]) -> dict:
    """Every contender ``--repeats`` times over one size's source (loaded once), in a new shuffled order each
    repeat; ``done`` gets the size's result after each repeat (what is measured so far is written)."""
    files = scale.set_up(partitions, topics)
    names, repeats = scale.args.contenders, scale.args.repeats
    out: dict = {"partitions": partitions, "topics": topics, "records": scale.records, "orders": []}
    out["load_seconds"], out["runs"] = scale.load_seconds, {name: [] for name in names}
    try:
        out["warm_up"] = [warm_up(scale, files) for _ in range(scale.args.warm_ups)]
        for repeat in range(repeats):
            order = shuffle.sample(names, len(names))
            out["orders"].append(order)
            for name in order:
                log(f"{partitions} partitions over {topics} topic(s), repeat {repeat + 1}/{repeats}: {name}")
                figures = attempt(scale, name, files)
                out["runs"][name].append(figures)
                log(f"{name}: {json.dumps({k: v for k, v in figures.items() if not isinstance(v, dict)})[:600]}")
            out["summary"] = {name: summarize(runs, FIGURES) for name, runs in out["runs"].items()}
            done(out)
    finally:
        scale.tear_down()
    return out


def warm_up(scale: Scale, files: dict[str, Path]) -> dict:
    """One unmeasured run of the copy limit after a size's load: the first contender after a load ran at 0.66x to
    0.79x its own other repeats in four of the six sizes measured before this warm-up (the brokers' first copy of the
    size; ``report.first_after_load`` says it for every results file). Its figures are kept, apart."""
    log(f"warm-up: one unmeasured {WARM_UP} run")
    return {k: v for k, v in attempt(scale, WARM_UP, files).items() if not isinstance(v, dict)}


def attempt(scale: Scale, name: str, files: dict[str, Path]) -> dict:
    """One run of contender ``name``: its figures, or the error that stopped it (recorded; the other runs go on)."""
    try:
        return scale.contender(name, files)
    except Exception as exc:  # noqa: BLE001 - recorded; the other contenders still run
        return {"error": f"{type(exc).__name__}: {str(exc)[:500]}"}


def run(args: argparse.Namespace, command: str) -> dict:
    result = {
        "build": provenance.build(),  # the checkout the run starts from: the code it measures
        "command": command,
        "seed": args.seed,
        "machine": provenance.machine(),
        "parameters": {
            "records": args.records,
            "partitions_list": args.partitions_list,
            "topics_list": args.topics_list,
            "tasks": args.tasks,
            "timeout_seconds": args.timeout,
            "contenders": args.contenders,
            "repeats": args.repeats,
            "warm_ups": args.warm_ups,
            "flight_recordings": bool(args.jfr),
            "values": "varied JSON, about 1 KiB (a third to twice)",
            "sample_interval_seconds": 1.0,
        },
        "sizes": [],
    }
    work = Path(tempfile.mkdtemp(prefix="secure-mirror-scale-"))
    mounts = Path("/proc/mounts").read_text()
    result["machine"]["sandbox_file_system"] = file_system(mounts, work)
    keep = True
    try:
        with read_ahead.set_for(work, args.read_ahead_kb, mounts) as disk:
            result["machine"]["sandbox_disk"] = disk
            log(f"the sandbox's disk: {json.dumps(disk)}")
            keep = run_sizes(args, result, work)
    finally:
        if keep:
            log(f"the contenders' logs are kept in {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)
    return result


def run_sizes(args: argparse.Namespace, result: dict, work: Path) -> bool:
    """Every size on one sandbox, into ``result``; whether a run did not finish (its logs are kept)."""
    shuffle = random.Random(args.seed)
    log("starting the sandbox")
    sb = Sandbox.up(work / "sandbox")
    try:
        scale = Scale(sb, work, args, args.seed)
        for partitions in args.partitions_list:
            for topics in args.topics_list:
                measured = result["sizes"][:]

                def so_far(size: dict, measured: list = measured) -> None:  # should a later run fail
                    write({**result, "class_cache": scale.bench.class_archive, "sizes": [*measured, size]}, args.out)

                result["sizes"].append(run_size(scale, partitions, topics, shuffle, so_far))
                result["class_cache"] = scale.bench.class_archive
    finally:
        admin.drop_kept()  # the kept admin clients go before the brokers they talk to
        sb.down()
    return any(not r.get("finished") for s in result["sizes"] for runs in s["runs"].values() for r in runs)


def file_system(mounts: str, folder: Path) -> str:
    """The type of the file system (``ext4``, ``tmpfs``, ...) that holds ``folder``, from ``/proc/mounts``'s text:
    the brokers' logs are there (the sandbox's folder is in the work folder, under ``TMPDIR``), and what a fresh
    partition's first index entry costs depends on it (NOTES section 8)."""
    return read_ahead.mount_of(mounts, folder)[1]


def write(result: dict, out: Path) -> str:
    """``<out>/scale.{json,md}``; the report."""
    return write_results(out, "scale", result, markdown(result))


def numbers(text: str) -> list[int]:
    return [int(part) for part in text.split(",") if part.strip()]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="scripts/bench --scale", description=(package.__doc__ or "").splitlines()[0])
    parser.add_argument("--partitions-list", type=numbers, default=[1000, 5000], help="partition counts (1000,5000)")
    parser.add_argument("--topics-list", type=numbers, default=[1, 200], help="topic counts they are spread over")
    parser.add_argument("--records", type=int, default=300_000, help="records per size")
    parser.add_argument("--tasks", type=int, default=TASK_SLOTS, help="the job's tasks, MirrorMaker 2's too")
    parser.add_argument(
        "--contenders", type=contenders.names, default=contenders.DEFAULT, help=", ".join(contenders.CONTENDERS)
    )
    parser.add_argument("--repeats", type=int, default=1, help="runs of every contender per size, each in a new order")
    parser.add_argument("--timeout", type=float, default=600.0, help="seconds a contender may take per size")
    parser.add_argument(
        "--warm-ups", type=int, default=1, help="unmeasured copy-limit runs after each size's load (0: none)"
    )
    cli.add_out_option(parser)
    cli.add_read_ahead_option(parser)
    parser.add_argument(
        "--jfr", type=Path, help="a folder for Flight Recordings of every run's JVMs and the brokers (diagnosis)"
    )
    cli.add_seed_option(parser)
    args = parser.parse_args(argv)
    if args.jfr and any(c in str(args.jfr) for c in " ,="):
        parser.error("--jfr: a folder whose path has no space, comma or '=' (it goes into a JVM option)")
    cli.stop_on_sigterm()
    given = cli.given(argv)
    args.seed = cli.drawn_seed(args.seed, given)
    result = run(args, " ".join(["scripts/bench", "--scale", *given]))
    print(write(result, args.out))
    return 0
