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
from benchmarks.cutover.scenario import GROUPS, PRODUCERS, READERS, scenario
from benchmarks.harness import cli, provenance
from benchmarks.harness.bench import Bench
from benchmarks.harness.results import results_main
from benchmarks.harness.session import sandbox_session
from secure_mirror.sandbox.sink_jar import sink_conf

CONTENDERS = ("secure_mirror", "mirrormaker2")


def run(args: argparse.Namespace, command: str) -> dict:
    plan = scenario(random.Random(args.seed), groups=args.groups)
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
            [n for n in args.contenders.split(",") if n],
            lambda name: Contender(b, name, run_id, plan, spark_conf),
            result["contenders"],
            lambda c: c.get("reads", {}).get("total", c),
        )
    result["load_average_1min"]["end"] = os.getloadavg()[0]
    return result


def main(argv: list[str] | None = None) -> int:
    """``--groups N`` (default 50) and ``--contenders a,b`` besides the options every benchmark has; the results of a
    run with another number of groups are ``cutover-<N>-groups.*``."""
    parser = argparse.ArgumentParser(add_help=False)
    parser.add_argument("--groups", type=int, default=GROUPS)
    parser.add_argument("--contenders", default=",".join(CONTENDERS))
    own, rest = parser.parse_known_args(cli.given(argv))
    name = "cutover" if own.groups == GROUPS else f"cutover-{own.groups}-groups"
    extra = [f"--groups {own.groups}"] * (own.groups != GROUPS) + [f"--contenders {own.contenders}"] * (
        own.contenders != ",".join(CONTENDERS)
    )

    def with_own(args: argparse.Namespace, command: str) -> dict:
        args.groups, args.contenders = own.groups, own.contenders
        return run(args, " ".join([command, *extra]))

    return results_main(rest, (cutover.__doc__ or "").splitlines()[0], "--cutover", name, with_own, markdown)
