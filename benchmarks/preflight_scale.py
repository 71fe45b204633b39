"""Pre-flight over 1,000 topics against the sandbox: prints how long each part takes.

    .venv/bin/python benchmarks/preflight_scale.py [--sandbox DIR] [--topics 1000]

With --sandbox the running sandbox in DIR is used (and left running); otherwise one is started in a fresh
temporary folder and stopped at the end. The topics and ACLs it creates are removed afterwards.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from dataclasses import asdict
from pathlib import Path

import yaml

from secure_mirror.kafka import admin_ops
from secure_mirror.preflight import run_preflight
from secure_mirror.profile import SIDES, load_profile
from secure_mirror.render import acls as acl_plans
from secure_mirror.sandbox import Sandbox

TIMES: dict[str, float] = {}  # label -> seconds of the last timed() call with that label


def timed(label: str, fn, *args, **kwargs):
    started = time.monotonic()
    result = fn(*args, **kwargs)
    TIMES[label] = time.monotonic() - started
    print(f"{label:<48} {TIMES[label]:7.2f} s", flush=True)
    return result


def bench(sb: Sandbox, count: int, folder: Path) -> dict:
    """Pre-flight over ``count`` topics; the figures (seconds) for the benchmark's results file."""
    data = yaml.safe_load(sb.profile_path.read_text())
    data["source"]["alias"], data["target"]["alias"] = "bsrc", "btgt"
    data["mirror"]["topics"]["include"] = "bench\\..*"
    (folder / "profile.yaml").write_text(yaml.safe_dump(data))
    profile = load_profile(folder / "profile.yaml")
    source = {f"bench.t{i:04d}": 1 + i % 3 for i in range(count)}
    target = {profile.target_topic(t): p for t, p in list(source.items())[: count // 2]}  # half exist already
    grants = {
        "source": [asdict(b) for b in acl_plans.source_acls(profile).bindings],
        "target": [asdict(b) for b in acl_plans.target_acls(profile).bindings],
    }
    timed(f"create {count} source + {len(target)} target topics", _setup, sb, source, target, grants)
    timed("wait until the broker shows them to the mirror", _visible, sb, set(source))
    try:
        for run in (1, 2):
            report = timed(f"pre-flight, both sides (run {run})", run_preflight, profile)
            print(
                f"  ok={report.ok()} checks={len(report.checks)} "
                f"selected={report.get('source.topics.selection').details['count']}"
            )
            for check in report.with_status("fail", "warn"):
                print(f"  {check.id}: {check.status}: {check.finding}")
        admin = {
            side: profile.cluster(side).model_copy(
                update={
                    "sasl": profile.cluster(side).sasl.model_copy(
                        update={"principal": sb.sides[side].admin_principal, "keytab": sb.keytab(side, "admin")}
                    )
                }
            )
            for side in SIDES
        }
        audit = timed("pre-flight with --as-admin audit", run_preflight, profile, admin=admin)
        print(f"  ok={audit.ok()} checks={len(audit.checks)}")
    finally:
        timed("clean up", _teardown, sb, source, target, grants)
    return {
        "topics": count,
        "ok": report.ok(),
        "checks": len(report.checks),
        "first_run_seconds": TIMES["pre-flight, both sides (run 1)"],
        "second_run_seconds": TIMES["pre-flight, both sides (run 2)"],
        "with_admin_audit_seconds": TIMES["pre-flight with --as-admin audit"],
    }


def _setup(sb, source, target, grants) -> None:
    sb.admin("source", admin_ops.create_topics, source, timeout=120)
    sb.admin("target", admin_ops.create_topics, target, timeout=120)
    for side, acls in grants.items():
        sb.admin(side, admin_ops.create_acls, acls)


def _visible(sb, names: set[str], limit: float = 120.0) -> None:
    """New topics and ACLs reach the broker's metadata a moment after the controller accepted them."""
    deadline = time.monotonic() + limit
    while not names <= set(sb.as_mirror("source", admin_ops.list_topics)):
        if time.monotonic() > deadline:
            raise SystemExit("the mirror still does not see the new topics")
        time.sleep(1)


def _teardown(sb, source, target, grants) -> None:
    for side, acls in grants.items():
        sb.admin(side, admin_ops.delete_acls, acls)
    sb.admin("source", admin_ops.delete_topics, list(source), timeout=120)
    sb.admin("target", admin_ops.delete_topics, list(target), timeout=120)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sandbox", help="a running sandbox's folder")
    parser.add_argument("--topics", type=int, default=1000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="preflight-bench-") as tmp:
        sb = Sandbox.load(Path(args.sandbox)) if args.sandbox else timed("sandbox up", Sandbox.up, Path(tmp) / "sb")
        try:
            bench(sb, args.topics, Path(tmp))
        finally:
            if not args.sandbox:
                sb.down()


if __name__ == "__main__":
    main()
