"""The groups benchmark's run (``scripts/bench --groups``; benchmarks/groups/__init__.py says what it measures)."""

from __future__ import annotations

import argparse
import os
import random
import statistics
import subprocess
import time
import uuid

from benchmarks import groups as package
from benchmarks.failover.scenario import transactions
from benchmarks.groups.contender import Contender
from benchmarks.groups.estate import PARTITIONS, RECORDS, TOPICS, TX_PARTITIONS, TX_TOPIC, Estate, estate, topic_name
from benchmarks.groups.report import markdown
from benchmarks.harness import admin, cli, load, provenance
from benchmarks.harness.bench import Bench
from benchmarks.harness.launch import REPO
from benchmarks.harness.results import write_results
from benchmarks.harness.session import sandbox_session
from secure_mirror.kafka import admin_ops

CONTENDERS = ("secure_mirror", "mirrormaker2")
log = cli.prefixed("groups")


def arguments(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="scripts/bench --groups", description=(package.__doc__ or "").splitlines()[0])
    parser.add_argument("--groups-count", type=int, default=10_000, help="groups in the estate (default 10000)")
    parser.add_argument("--active", type=int, default=1_000, help="of them committing (default 1000)")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--window", type=float, default=40.0, help="seconds of the committing window (default 40)")
    parser.add_argument("--sync-interval", type=int, default=5, help="both contenders' group sync interval (s)")
    parser.add_argument("--in-place-limit", type=float, default=300.0, help="seconds to wait for every group")
    parser.add_argument("--contenders", default=",".join(CONTENDERS))
    cli.add_seed_option(parser)
    cli.add_sandbox_option(parser)
    cli.add_out_option(parser)
    return parser.parse_args(argv)


def load_estate(b: Bench, the_estate: Estate) -> None:
    """The estate's topics and records on the source, once (a sandbox that has them keeps them)."""
    conf = b.sb.client_conf("source", "admin")
    have = admin_ops.list_topics(conf)
    wanted = {topic_name(i): PARTITIONS for i in range(TOPICS)}
    missing = {t: n for t, n in wanted.items() if t not in have}
    if missing:
        admin_ops.create_topics(conf, missing)
        for topic in missing:
            records = [
                {"key": b"%d" % i, "value": b"%s|%d" % (topic.encode(), i), "partition": i % PARTITIONS}
                for i in range(RECORDS * PARTITIONS)
            ]
            admin_ops.produce(conf, topic, records)
    if TX_TOPIC not in have:
        admin_ops.create_topics(conf, {TX_TOPIC: TX_PARTITIONS})
        pieces = [("commit", 4), ("abort", 3), ("commit", 4), ("none", 2), ("commit", 5)]
        written = [
            {**tx, "records": [r for r in tx["records"] if r["partition"] < TX_PARTITIONS]}
            for tx in transactions(pieces, TX_TOPIC)
        ]
        load.produce_transactions(conf, TX_TOPIC, written, "estate-tx-writer")


def timed(argv: list[str], repeats: int) -> dict:
    """A command's wall seconds, each of ``repeats`` runs, with its exit code and the last lines it printed."""
    runs: list[dict] = []
    for _ in range(repeats):
        t0 = time.monotonic()
        done = subprocess.run(argv, capture_output=True, text=True, cwd=REPO, timeout=900)
        runs.append(
            {
                "seconds": time.monotonic() - t0,
                "exit": done.returncode,
                "tail": (done.stdout + done.stderr).strip().splitlines()[-3:],
            }
        )
    return {"median_seconds": statistics.median(float(r["seconds"]) for r in runs), "runs": runs}


def commands(b: Bench, c: Contender, repeats: int) -> dict:
    """Pre-flight and ``groups`` over the estate, with the secure_mirror contender's profile."""
    path = c.profile()
    cli_path = str(REPO / ".venv/bin/secure-mirror")
    return {
        "preflight": timed([cli_path, "preflight", str(path)], repeats),
        "groups": timed([cli_path, "groups", str(path), "--json"], 1),
    }


def run(args: argparse.Namespace, command: str) -> dict:
    rng = random.Random(args.seed)
    the_estate = estate(args.groups_count, args.active, args.seed)
    names = [n for n in args.contenders.split(",") if n]
    orders = [rng.sample(names, len(names)) for _ in range(args.repeats)]
    result: dict = {
        "command": command,
        "seed": args.seed,
        "machine": provenance.machine(),
        "load_average_1min": {"start": os.getloadavg()[0]},
        "estate": the_estate.shape(),
        "orders": orders,
        "runs": {name: [] for name in names},
    }
    with sandbox_session(args.sandbox, "secure-mirror-groups-") as session:
        b = Bench(session.sb, session.work, 0, PARTITIONS, args.seed)
        t0 = time.monotonic()
        load_estate(b, the_estate)
        c = Contender(b, "secure_mirror", uuid.uuid4().hex[:6], the_estate, args)
        c.prepare()
        c.reset_groups()
        result["load_seconds"] = time.monotonic() - t0
        for i, order in enumerate(orders):
            for name in order:
                log(f"repeat {i + 1}/{args.repeats}: {name}")
                results: dict = {}
                session.each(
                    "groups",
                    [name],
                    lambda n: Contender(b, n, uuid.uuid4().hex[:6], the_estate, args),
                    results := {},
                    lambda r: {k: r.get(k) for k in ("in_place", "window", "after_stop", "error")},
                )
                result["runs"][name].append(results[name])
        c.reset_groups()
        result["commands"] = commands(b, c, args.repeats)
        admin.drop_kept()
    result["load_average_1min"]["end"] = os.getloadavg()[0]
    return result


def main(argv: list[str] | None = None) -> int:
    args = arguments(argv)
    cli.stop_on_sigterm()
    given = cli.given(argv)
    args.seed = cli.drawn_seed(args.seed, given)
    build = provenance.build()
    result = {"build": build, **run(args, " ".join(["scripts/bench --groups", *given]))}
    print(write_results(args.out, f"groups-{args.groups_count}", result, markdown(result)))
    return 0
