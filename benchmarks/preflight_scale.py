"""Pre-flight over many topics against the sandbox: prints how long each part takes, and can write the figures.

    .venv/bin/python benchmarks/preflight_scale.py [--sandbox DIR] [--topics 1000 [10000 ...]]
                                                   [--results benchmarks/results/preflight-scale.json] [--label TEXT]

For each count, half of the selected source topics already exist on the target (the other half are still to create)
and the mirror holds exactly the grants render plans. Pre-flight runs twice (the first run includes every cold start:
the worker processes, the Kerberos logins, the JVM of the Java client probe and the compilation of its source, the
source cluster's group coordinator), then once more with the ``--as-admin`` ACL audit; each run's parts are the
report's ``seconds`` (``preflight.runner.Laps``). With --sandbox the running sandbox in DIR is used for every count
(and left running); otherwise each count gets a sandbox of its own in a fresh temporary folder, stopped at the end.
The topics and ACLs it creates are removed afterwards.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shlex
import sys
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
    source = partition_counts(count)
    target = {profile.target_topic(t): p for t, p in list(source.items())[: count // 2]}  # half exist already
    grants = {
        "source": [asdict(b) for b in acl_plans.source_acls(profile).bindings],
        "target": [asdict(b) for b in acl_plans.target_acls(profile).bindings],
    }
    timed(f"create {count} source + {len(target)} target topics", _setup, sb, source, target, grants)
    timed("wait until the broker shows them to the mirror", _visible, sb, set(source))
    parts: dict[str, dict] = {}
    cpu: dict[str, dict] = {}
    try:
        for run in (1, 2):
            report, cpu[f"run_{run}"] = counted(
                sb, timed, f"pre-flight, both sides (run {run})", run_preflight, profile
            )
            parts[f"run_{run}"] = report.seconds
            _show(report, "  ")
        admin = _admin(sb, profile)
        audit, cpu["with_admin_audit"] = counted(
            sb, timed, "pre-flight with --as-admin audit", run_preflight, profile, admin=admin
        )
        parts["with_admin_audit"] = audit.seconds
        _show(audit, "  ")
    finally:
        timed("clean up", _teardown, sb, source, target, grants)
    return {
        "topics": count,
        "partitions": sum(source.values()),
        "ok": report.ok(),
        "ok_with_admin_audit": audit.ok(),
        "checks": len(report.checks),
        "statuses": {c.id: c.status for c in report.checks if c.status != "pass"},
        "first_run_seconds": TIMES["pre-flight, both sides (run 1)"],
        "second_run_seconds": TIMES["pre-flight, both sides (run 2)"],
        "with_admin_audit_seconds": TIMES["pre-flight with --as-admin audit"],
        "parts": parts,
        "cpu_seconds": cpu,
        "setup_seconds": {
            "create_topics_and_acls": TIMES[f"create {count} source + {len(target)} target topics"],
            "until_visible": TIMES["wait until the broker shows them to the mirror"],
            "clean_up": TIMES["clean up"],
        },
    }


def counted(sb: Sandbox, fn, *args, **kwargs):
    """``fn``'s result, and the CPU seconds it cost: pre-flight's own processes (this one, its workers and the Java
    client's JVM, all reaped by then) and each broker of the sandbox (from /proc). On a machine shared with other
    work the wall clock varies with the load; these vary much less."""
    before, load = _cpu(sb), os.getloadavg()[0]
    result = fn(*args, **kwargs)
    after = _cpu(sb)
    spent = {name: round(after[name] - before[name], 2) for name in before} | {"load_average_1min_at_start": load}
    print(f"  CPU seconds: {spent}", flush=True)
    return result, spent


def _cpu(sb: Sandbox) -> dict[str, float]:
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    found = {"preflight": own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime}
    tick = os.sysconf("SC_CLK_TCK")
    for side in SIDES:
        fields = Path(f"/proc/{sb.state['pids'][side]}/stat").read_text().rsplit(")", 1)[1].split()
        found[f"{side}_broker"] = (int(fields[11]) + int(fields[12])) / tick  # utime, stime
    return found


def _show(report, indent: str) -> None:
    selected = next((c for c in report.checks if c.id == "source.topics.selection"), None)
    count = selected.details.get("count") if selected else None
    print(f"{indent}ok={report.ok()} checks={len(report.checks)} selected={count} parts={report.seconds}")
    for check in report.with_status("fail", "warn", "unverified"):
        print(f"{indent}{check.id}: {check.status}: {check.finding[:300]}")


def _admin(sb: Sandbox, profile) -> dict:
    return {
        side: profile.cluster(side).model_copy(
            update={
                "sasl": profile.cluster(side).sasl.model_copy(
                    update={"principal": sb.sides[side].admin_principal, "keytab": sb.keytab(side, "admin")}
                )
            }
        )
        for side in SIDES
    }


def partition_counts(count: int) -> dict[str, int]:
    """The source topics: 1 to 3 partitions each, or 1 each where the brokers could not keep as many files open (a
    broker keeps its active segment of every partition open, and inherits our limit: often 20,000 files)."""
    varied = {f"bench.t{i:05d}": 1 + i % 3 for i in range(count)}
    room = resource.getrlimit(resource.RLIMIT_NOFILE)[0] - 5_000  # the broker's own files and sockets
    return varied if sum(varied.values()) <= room else dict.fromkeys(varied, 1)


def _setup(sb, source, target, grants) -> None:
    sb.admin("source", admin_ops.create_topics, source, timeout=120)
    sb.admin("target", admin_ops.create_topics, target, timeout=120)
    for side, acls in grants.items():
        sb.admin(side, admin_ops.create_acls, acls)


def _visible(sb, names: set[str], limit: float = 300.0) -> None:
    """New topics and ACLs reach the broker's metadata a moment after the controller accepted them (thousands of
    them: a minute or more, while the broker creates their logs)."""
    deadline = time.monotonic() + limit
    while not names <= set(sb.as_mirror("source", admin_ops.list_topics)):
        if time.monotonic() > deadline:
            raise SystemExit("the mirror still does not see the new topics")
        time.sleep(2)


def _teardown(sb, source, target, grants) -> None:
    for side, acls in grants.items():
        sb.admin(side, admin_ops.delete_acls, acls)
    sb.admin("source", admin_ops.delete_topics, list(source), timeout=120)
    sb.admin("target", admin_ops.delete_topics, list(target), timeout=120)


def measure(count: int, sandbox: str | None) -> dict:
    """One count, on the given sandbox or on a fresh one of its own (its start is then among the figures)."""
    load = os.getloadavg()[0]
    with tempfile.TemporaryDirectory(prefix="preflight-bench-") as tmp:
        sb = Sandbox.load(Path(sandbox)) if sandbox else timed("sandbox up", Sandbox.up, Path(tmp) / "sb")
        try:
            figures = bench(sb, count, Path(tmp))
        finally:
            if not sandbox:
                sb.down()
        return {
            **figures,
            "fresh_sandbox": not sandbox,
            "sandbox_up_seconds": None if sandbox else TIMES["sandbox up"],
            "load_average_1min": {"before": load, "after": os.getloadavg()[0]},  # the machine is shared
        }


def _command() -> str:
    """The command line, as run from the repository (with PYTHONPATH when set: another copy of the package)."""
    command = shlex.join([".venv/bin/python", "benchmarks/preflight_scale.py", *sys.argv[1:]])
    path = os.environ.get("PYTHONPATH")
    return f"PYTHONPATH={shlex.quote(path)} {command}" if path else command


def _provenance():
    """benchmarks/harness/provenance.py: this file also runs as a script (the command above), which puts benchmarks/
    on the path rather than the repository's root."""
    root = str(Path(__file__).resolve().parents[1])
    if root not in sys.path:
        sys.path.append(root)
    from benchmarks.harness import provenance

    return provenance


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sandbox", help="a running sandbox's folder")
    parser.add_argument("--topics", type=int, nargs="+", default=[1000])
    parser.add_argument("--results", type=Path, help="write the figures here (JSON), e.g. benchmarks/results/...")
    parser.add_argument("--label", default="", help="what was measured (e.g. which version of the code)")
    args = parser.parse_args()
    provenance = _provenance()
    result = {
        "build": provenance.build(),  # the checkout the run starts from (PYTHONPATH may name another package)
        "command": _command(),
        "label": args.label,
        "machine": provenance.machine(),
        "open_files_limit": resource.getrlimit(resource.RLIMIT_NOFILE)[0],
        "sizes": [],
    }
    for count in args.topics:
        result["sizes"].append(measure(count, args.sandbox))
        if args.results:  # after every count: a later failure keeps the figures so far
            args.results.parent.mkdir(parents=True, exist_ok=True)
            args.results.write_text(json.dumps(result, indent=2) + "\n")


if __name__ == "__main__":
    main()
