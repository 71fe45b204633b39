"""The comparison's latency runs: source create time -> target append time at a steady input rate, MirrorMaker 2
against the job's micro-batches, its exactly_once transactions and its low-latency continuous mode."""

from __future__ import annotations

import subprocess
import time
from collections.abc import Callable
from pathlib import Path

from benchmarks.harness import load, reading
from benchmarks.harness.bench import Bench
from benchmarks.harness.cli import log
from benchmarks.harness.launch import REPO, exactly_once_prefix, mirrormaker2_argv, stop

LATENCY_FILES = ["mirrormaker2", "secure_mirror", "secure_mirror_exactly_once"]  # the latency runs' contenders


def percentile(values: list[float], pct: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(pct / 100 * (len(ordered) - 1))))]


def wait_settled(bench: Bench, deadline: float, count: Callable[[], int]) -> None:
    """Until the target holds the whole source (every contender copies the backlog from the beginning)."""
    while count() < bench.source_records and time.monotonic() < deadline:
        time.sleep(0.5)


def latency(bench: Bench, name: str, argv: list[str], records: int, rate: float, prefix: str | None = None) -> dict:
    """p50/p99 of source create time -> target log-append time under a steady produce rate. With exactly_once
    (``prefix``) a record counts once its transaction committed (the latency reader is read_committed)."""
    bench.fresh_target()
    if prefix:
        bench.forget_groups(prefix)
    reader = bench.reader(bool(prefix))
    count = lambda: bench.on_target(reader, bench.source_records)  # noqa: E731
    log_file = bench.work / f"latency-{name}.log"
    with open(log_file, "w") as fh:
        proc = subprocess.Popen(argv, stdout=fh, stderr=subprocess.STDOUT, cwd=REPO, start_new_session=True)
    try:
        deadline = time.monotonic() + 600
        wait_settled(bench, deadline, count)  # the backlog first: start-up and catch-up are not latency
        since_ms = int(time.time() * 1000)
        load.produce_load(bench.sb.client_conf("source", "admin"), bench.topic, records, rate=rate)
        bench.source_records += records
        wait_settled(bench, deadline, count)  # the backlog and the new ones
        lat = reading.latencies(
            bench.sb.client_conf("target", "admin"),
            bench.target_topic,
            count(),
            timeout=120,
            since_ms=since_ms,
        )
    finally:
        stop(proc)
        if reader:
            reader.close()
    if not lat:
        raise RuntimeError(f"no latency samples for {name}; {log_file} ends: {log_file.read_text()[-1500:]}")
    return {"samples": len(lat), "p50_ms": percentile(lat, 50), "p99_ms": percentile(lat, 99)}


def low_latency(data: dict) -> None:
    """The job's low-latency mode (docs/continuous.md): Spark's continuous trigger on the mirror's source (one
    never-ending task per task slot, as many as the micro-batches' tasks), 500 ms epochs, and a producer that sends
    at once (linger 0)."""
    data["mirror"].setdefault("spark", {}).update({"trigger": "continuous", "continuous_interval_ms": 500})
    linger_zero(data)


def linger_zero(data: dict) -> None:
    data["mirror"].setdefault("delivery", {})["linger_ms"] = 0


def latencies(bench: Bench, files: dict[str, Path], records: int, rate: float, with_continuous: bool) -> dict:
    log(f"latency: {records} records at {rate}/s")
    out = {}
    work = bench.work
    alo, eos_profile = files["secure_mirror"], files["secure_mirror_exactly_once"]
    micro = bench.job_argv(alo, work / "run-latency", "--trigger-interval", "0 seconds")
    out["secure_mirror"] = latency(bench, "secure_mirror", micro, records, rate)
    eos = bench.job_argv(eos_profile, work / "run-latency-eos", "--trigger-interval", "0 seconds")
    out["secure_mirror_exactly_once"] = latency(
        bench, "secure_mirror_exactly_once", eos, records, rate, exactly_once_prefix(eos_profile)
    )
    bench.forget_mirrormaker2()  # from the beginning, as the job: it copies the backlog before the timed records
    out["mirrormaker2"] = latency(bench, "mirrormaker2", mirrormaker2_argv(files["mirrormaker2"]), records, rate)
    if with_continuous:
        low = bench.job_argv(alo, work / "run-latency-continuous", edit=low_latency)
        try:
            out["secure_mirror_continuous"] = latency(bench, "secure_mirror_continuous", low, records, rate)
        except Exception as exc:  # noqa: BLE001 - reported, not fatal: the other figures still stand
            out["secure_mirror_continuous"] = {"error": str(exc)[:500]}
        # MirrorMaker 2 with the low-latency mode's producer setting too (linger 0), so the two compare like for like
        try:
            rendered = bench.render(bench.profile("gssapi-linger0", edit=linger_zero))
            bench.forget_mirrormaker2()
            out["mirrormaker2_linger_0"] = latency(
                bench, "mirrormaker2_linger_0", mirrormaker2_argv(rendered), records, rate
            )
        except Exception as exc:  # noqa: BLE001 - reported, not fatal: the other figures still stand
            out["mirrormaker2_linger_0"] = {"error": str(exc)[:500]}
    return out
