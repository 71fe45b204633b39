"""The cut-over benchmark's run (``scripts/bench --cutover``; benchmarks/cutover/__init__.py says what it measures):
the seeded scenario, and each contender in turn on one sandbox."""

from __future__ import annotations

import argparse
import os
import random
import uuid

from benchmarks import cutover
from benchmarks.cutover.contender import Contender
from benchmarks.cutover.report import markdown
from benchmarks.cutover.scenario import PRODUCERS, READERS, scenario
from benchmarks.harness import provenance
from benchmarks.harness.bench import Bench
from benchmarks.harness.results import results_main
from benchmarks.harness.session import sandbox_session
from secure_mirror.sandbox.sink_jar import sink_conf

CONTENDERS = ("secure_mirror", "mirrormaker2")


def run(args: argparse.Namespace, command: str) -> dict:
    plan = scenario(random.Random(args.seed))
    result: dict = {
        "command": command,
        "seed": args.seed,
        "runs": 1,
        "machine": provenance.machine(),
        "load_average_1min": {"start": os.getloadavg()[0]},
        "scenario": {
            "topics": len(plan["records"]),
            "partitions": sum(len(p) for p in plan["records"].values()),
            "records": sum(sum(p) for p in plan["records"].values()),
            "groups": len(plan["committed"]),
            "group_partitions": sum(len(p) for g in plan["committed"].values() for p in g.values()),
            "producers": PRODUCERS,
            "readers": READERS,
            "plan": plan,
        },
        "contenders": {},
    }
    run_id = uuid.uuid4().hex[:5]
    with sandbox_session(args.sandbox, "secure-mirror-cutover-") as session:
        b = Bench(session.sb, session.work, 0, 1, args.seed)
        spark_conf = sink_conf(session.work)
        session.each(
            "cutover",
            CONTENDERS,
            lambda name: Contender(b, name, run_id, plan, spark_conf),
            result["contenders"],
            lambda c: c.get("reads", {}).get("total", c),
        )
    result["load_average_1min"]["end"] = os.getloadavg()[0]
    return result


def main(argv: list[str] | None = None) -> int:
    return results_main(argv, (cutover.__doc__ or "").splitlines()[0], "--cutover", "cutover", run, markdown)
