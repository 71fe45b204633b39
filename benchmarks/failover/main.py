"""The failover benchmark's run (``scripts/bench --failover``; benchmarks/failover/__init__.py says what it
measures): the seeded scenario, and each contender in a seeded order on one sandbox."""

from __future__ import annotations

import argparse
import os
import random
import uuid

from benchmarks import failover
from benchmarks.failover.contender import Contender
from benchmarks.failover.report import markdown
from benchmarks.failover.scenario import PARTITIONS, final_points, layout
from benchmarks.harness import provenance
from benchmarks.harness.bench import Bench
from benchmarks.harness.results import results_main
from benchmarks.harness.session import sandbox_session
from secure_mirror.sandbox.sink_jar import sink_conf

CONTENDERS = ("secure_mirror", "secure_mirror_exactly_once", "mirrormaker2")


def run(args: argparse.Namespace, command: str) -> dict:
    rng = random.Random(args.seed)
    pieces = layout(rng)
    points = final_points(pieces, rng)
    order = rng.sample(CONTENDERS, len(CONTENDERS))
    result: dict = {
        "command": command,
        "seed": args.seed,
        "machine": provenance.machine(),
        "load_average_1min": {"start": os.getloadavg()[0]},
        "scenario": {"partitions": PARTITIONS, "layout": pieces, "final_points": points, "order": order},
        "contenders": {},
    }
    run_id = uuid.uuid4().hex[:6]
    with sandbox_session(args.sandbox, "secure-mirror-failover-") as session:
        b = Bench(session.sb, session.work, 0, PARTITIONS, args.seed)
        spark_conf = sink_conf(session.work)  # this checkout's sink, compiled when setup's jar is older
        session.each(
            "failover",
            order,
            lambda name: Contender(b, name, run_id, (pieces, points), spark_conf),
            result["contenders"],
            lambda c: c.get("failover", c),
        )
    result["load_average_1min"]["end"] = os.getloadavg()[0]
    return result


def main(argv: list[str] | None = None) -> int:
    return results_main(argv, (failover.__doc__ or "").splitlines()[0], "--failover", "failover", run, markdown)
