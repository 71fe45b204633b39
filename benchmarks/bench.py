"""secure_mirror against MirrorMaker 2, with Kafka's perf tools as a reference, in one run, on the sandbox.

Every contender mirrors the same source topic (varied JSON values, seeded) into a freshly created target topic
with LogAppendTime, and is timed on the same two clocks: from its process start to the moment the target's end
offsets hold all N records, and its steady rate from the target's own append times (the records appended between
the moments 10% and 90% of N were on the target). MirrorMaker 2 gets as many tasks as the job has task slots. The
order of the contenders is shuffled in every repeat (seeded; the seed is printed). Figures are ratios measured
side by side: absolute numbers on shared machines drift from run to run.

    scripts/bench [--quick] [--records N] [--partitions P] [--repeats R] [--seed S]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

from benchmarks import load, preflight_scale
from secure_mirror import paths
from secure_mirror.kafka import admin_ops
from secure_mirror.profile import load_profile
from secure_mirror.render import render_all
from secure_mirror.sandbox import Sandbox

REPO = Path(__file__).resolve().parent.parent
SOURCE_TOPIC = "bench.data"
TARGET_TOPIC = "src.bench.data"
RESULTS = REPO / "benchmarks" / "results"


def log(text: str) -> None:
    print(f"bench: {text}", file=sys.stderr, flush=True)


class Bench:
    def __init__(self, sb: Sandbox, work: Path, records: int, partitions: int, seed: int):
        self.sb, self.work, self.records, self.partitions, self.seed = sb, work, records, partitions, seed
        # This process is the benchmark's own: its librdkafka calls run as the two admins, whose caches
        # live side by side in one DIR: collection (different realms).
        (work / "cc").mkdir(mode=0o700)
        os.environ.update({"KRB5_CONFIG": str(sb.krb5_conf), "KRB5CCNAME": f"DIR:{work / 'cc'}"})
        self.runs = 0

    # ---- set-up ---------------------------------------------------------------------------------------
    def profile(self, name: str, *, plaintext: bool = False) -> Path:
        data = yaml.safe_load(self.sb.profile_path.read_text())
        data["mirror"]["topics"] = {"include": re.escape(SOURCE_TOPIC)}
        data["mirror"]["checkpoint_location"] = str(self.work / f"checkpoints-{name}")
        # MirrorMaker 2 gets as many tasks as the job has task slots (Connect's default is one).
        data["mirror"]["mm2"] = {"properties": {"tasks.max": task_slots(data["mirror"]["spark"]["master"])}}
        if plaintext:
            for side in ("source", "target"):
                s = self.sb.sides[side]
                data[side] = {
                    "alias": data[side]["alias"],
                    "bootstrap_servers": [f"{s.host}:{s.plaintext_port}"],
                    "security_protocol": "PLAINTEXT",
                }
        path = self.work / f"{name}.yaml"
        path.write_text(yaml.safe_dump(data, sort_keys=False))
        return path

    def render(self, profile: Path) -> Path:
        out = self.work / f"rendered-{profile.stem}"
        render_all(load_profile(profile), out)
        return out

    def grant(self, rendered: Path) -> None:
        for side in ("source", "target"):
            acls = json.loads((rendered / "acls" / f"{side}.acls.json").read_text())
            broad = [
                {
                    "resource_type": rt,
                    "resource_name": "kafka-cluster" if rt == "CLUSTER" else "*",
                    "principal": p,
                    "operation": "ALL",
                }
                for rt in ("TOPIC", "GROUP", "CLUSTER")
                for p in ("User:mirror", "User:ANONYMOUS")
            ]
            admin_ops.create_acls(self.sb.client_conf(side, "admin"), acls + broad)  # MM2 and PLAINTEXT need more

    def load_source(self) -> float:
        admin_ops.create_topics(self.sb.client_conf("source", "admin"), {SOURCE_TOPIC: self.partitions})
        self.source_records = self.records
        return load.produce_load(self.sb.client_conf("source", "admin"), SOURCE_TOPIC, self.records, seed=self.seed)

    def fresh_target(self, topic: str = TARGET_TOPIC, config: dict | None = None) -> None:
        """A new target topic whose records carry the target's append time (the steady rate's clock)."""
        config = {"message.timestamp.type": "LogAppendTime", **(config or {})}
        conf = self.sb.client_conf("target", "admin")
        delete_and_wait(conf, [topic])
        for _ in range(20):
            try:
                admin_ops.create_topics(conf, {topic: self.partitions}, config=config)
                return
            except Exception:  # noqa: BLE001 - the broker may still be deleting the old one
                time.sleep(0.5)
        raise RuntimeError(f"could not re-create {topic} on the target")

    def target_count(self, topic: str = TARGET_TOPIC) -> int:
        return load.end_offsets(self.sb.client_conf("target", "admin"), topic)

    # ---- contenders -----------------------------------------------------------------------------------
    def wait_for_target(self, proc: subprocess.Popen, started: float, log_file: Path, timeout: float) -> dict:
        first, since_ms = None, int(time.time() * 1000) - int((time.monotonic() - started) * 1000) - 1000
        while True:
            count = self.target_count()
            now = time.monotonic()
            if count and first is None:
                first = now
            if count >= self.records:
                return {
                    "seconds": now - started,
                    "startup_seconds": (first or now) - started,
                    "records_per_second": self.records / (now - started),
                    "steady_records_per_second": self.append_rate(since_ms),
                }
            if proc.poll() is not None and proc.returncode != 0:
                raise RuntimeError(f"{log_file.name} exited {proc.returncode}: {log_file.read_text()[-2000:]}")
            if now - started > timeout:
                raise RuntimeError(f"{log_file.name}: target has {count}/{self.records} after {timeout}s")
            time.sleep(0.25)

    def append_rate(self, since_ms: int, topic: str = TARGET_TOPIC) -> float:
        """Records per second between the target append times of the 10% and the 90% marks of N."""
        t10, t90 = load.append_times(
            self.sb.client_conf("target", "admin"), topic, [int(0.1 * self.records), int(0.9 * self.records)], since_ms
        )
        return 0.8 * self.records / max((t90 - t10) / 1000, 1e-3)

    def timed_process(self, name: str, argv: list[str], timeout: float) -> dict:
        self.fresh_target()
        log_file = self.work / f"{name}-{self.runs}.log"
        self.runs += 1
        with open(log_file, "w") as fh:
            started = time.monotonic()
            proc = subprocess.Popen(argv, stdout=fh, stderr=subprocess.STDOUT, cwd=REPO, start_new_session=True)
        try:
            return self.wait_for_target(proc, started, log_file, timeout)
        finally:
            stop(proc)

    def secure_mirror(self, profile: Path, timeout: float) -> dict:
        run_dir = self.work / f"run-{profile.stem}-{self.runs}"
        data = yaml.safe_load(profile.read_text())
        data["mirror"]["checkpoint_location"] = str(run_dir / "checkpoints")  # from scratch every time
        fresh = self.work / f"{profile.stem}-{self.runs}.yaml"
        fresh.write_text(yaml.safe_dump(data, sort_keys=False))
        argv = [
            str(REPO / ".venv/bin/secure-mirror"),
            "run",
            str(fresh),
            "--until-caught-up",
            "--skip-preflight",
            "--run-dir",
            str(run_dir),
        ]
        wall_start = time.time()
        result = self.timed_process(f"secure-mirror-{profile.stem}", argv, timeout)
        return {
            **result,
            **job_phases(run_dir / "metrics.jsonl", wall_start, wall_start + result["seconds"], self.records),
        }

    def mirrormaker2(self, rendered: Path, timeout: float) -> dict:
        self.forget_mirrormaker2()
        return self.timed_process("mirrormaker2", mirrormaker2_argv(rendered), timeout)

    def forget_mirrormaker2(self) -> None:
        """Delete MirrorMaker 2's internal topics on both clusters, so that every repeat starts from scratch (it
        would otherwise resume from the source offsets stored in ``mm2-offsets.<alias>.internal`` and copy
        nothing into the fresh target topic)."""
        for side in ("source", "target"):
            conf = self.sb.client_conf(side, "admin")
            delete_and_wait(
                conf,
                [
                    t
                    for t in admin_ops.list_topics(conf)
                    if t.startswith("mm2-") or t.endswith(".internal") or t == "heartbeats"
                ],
            )

    def perf_tools(self, rendered: Path) -> dict:
        """Kafka's perf tools reading the source and writing the same values to a target topic at the same time, as
        a copy does: a reference for the brokers and this machine, not a bound on a mirror (each tool works alone
        on its side; a mirror's reads and writes pace each other)."""
        krb5 = f"-Djava.security.krb5.conf={rendered / 'krb5.conf'}"
        java = [paths.java_executable(), "-Xmx1g", krb5, "-cp", paths.kafka_classpath()]
        payloads = self.work / "payloads.txt"
        payloads.write_bytes(b"\n".join(load.values(self.seed)))
        self.fresh_target("src.bench.copy")
        self.runs += 1
        consumer = subprocess.Popen(
            java
            + [
                "org.apache.kafka.tools.ConsumerPerformance",
                "--bootstrap-server",
                self.sb.sides["source"].bootstrap,
                "--topic",
                SOURCE_TOPIC,
                "--num-records",
                str(self.records),
                "--group",
                f"secure-mirror-src-tgt-perf-{self.runs}",
                "--timeout",
                "120000",
                "--command-config",
                str(rendered / "source" / "client.properties"),
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        )
        producer = subprocess.Popen(
            java
            + [
                "org.apache.kafka.tools.ProducerPerformance",
                "--topic",
                "src.bench.copy",
                "--num-records",
                str(self.records),
                "--payload-file",
                str(payloads),
                "--throughput",
                "-1",
                "--command-config",
                str(rendered / "target" / "client.properties"),
                "--producer-props",
                f"bootstrap.servers={self.sb.sides['target'].bootstrap}",
                "acks=all",
                "compression.type=lz4",
                "linger.ms=20",
                "batch.size=1000000",
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        )
        read_out, _ = consumer.communicate(timeout=3600)
        write_out, _ = producer.communicate(timeout=3600)
        if consumer.returncode or producer.returncode:
            raise RuntimeError(f"the perf tools failed ({consumer.returncode}, {producer.returncode})")
        read = float(read_out.strip().splitlines()[-1].split(",")[5])  # nMsg.sec
        write = float(re.findall(r"([\d.]+) records/sec", write_out)[-1])
        return {
            "consume_records_per_second": read,
            "produce_records_per_second": write,
            "records_per_second": min(read, write),
        }

    def wait_settled(self, deadline: float, quiet: float = 15.0) -> None:
        """Until the target holds the whole source, or has not grown for ``quiet`` seconds (a mirror that
        resumes from stored offsets, as MirrorMaker 2 does, copies no backlog into a fresh topic)."""
        last, since = -1, time.monotonic()
        while time.monotonic() < deadline:
            count = self.target_count()
            if count >= self.source_records:
                return
            if count != last:
                last, since = count, time.monotonic()
            elif time.monotonic() - since > quiet and count > 0 or time.monotonic() - since > 4 * quiet:
                return
            time.sleep(0.5)

    def latency(self, name: str, argv: list[str], records: int, rate: float) -> dict:
        """p50/p99 of source create time -> target log-append time under a steady produce rate."""
        self.fresh_target()
        log_file = self.work / f"latency-{name}.log"
        with open(log_file, "w") as fh:
            proc = subprocess.Popen(argv, stdout=fh, stderr=subprocess.STDOUT, cwd=REPO, start_new_session=True)
        try:
            deadline = time.monotonic() + 600
            self.wait_settled(deadline)  # the backlog first: start-up and catch-up are not latency
            since_ms, before = int(time.time() * 1000), self.target_count()
            load.produce_load(self.sb.client_conf("source", "admin"), SOURCE_TOPIC, records, rate=rate)
            self.source_records += records
            while self.target_count() < before + records and time.monotonic() < deadline:
                time.sleep(0.5)
            lat = load.latencies(
                self.sb.client_conf("target", "admin"),
                TARGET_TOPIC,
                self.target_count(),
                timeout=120,
                since_ms=since_ms,
            )
        finally:
            stop(proc)
        if not lat:
            raise RuntimeError(f"no latency samples for {name}; see {log_file}")
        return {"samples": len(lat), "p50_ms": percentile(lat, 50), "p99_ms": percentile(lat, 99)}


def delete_and_wait(conf: dict, topics: list[str], limit: float = 120.0) -> None:
    """Delete those of ``topics`` that exist, and wait (at most ``limit`` seconds) until the broker lists none."""
    present = set(topics) & set(admin_ops.list_topics(conf))
    if not present:
        return
    admin_ops.delete_topics(conf, sorted(present))
    deadline = time.monotonic() + limit
    while present & set(admin_ops.list_topics(conf)) and time.monotonic() < deadline:
        time.sleep(0.5)


def job_phases(metrics: Path, wall_start: float, wall_end: float, records: int) -> dict:
    """The job's start-up (process start to its first batch, from the job's metrics file) apart from its
    steady-state throughput (records / time from the first batch's start to the last record on the target)."""
    from datetime import datetime

    lines = [json.loads(line) for line in metrics.read_text().splitlines()] if metrics.exists() else []
    if not lines:
        return {}
    first = datetime.fromisoformat(lines[0]["time"].replace("Z", "+00:00")).timestamp()
    return {
        "job_startup_seconds": first - wall_start,
        "batches": len(lines),
        "job_steady_records_per_second": records / max(wall_end - first, 1e-6),
    }


def task_slots(master: str) -> int:
    """The job's task slots: ``local[N]`` -> N (``local`` -> 1, ``local[*]`` -> the CPUs)."""
    found = re.fullmatch(r"local(?:\[(\d+|\*)\])?", master)
    if not found:
        raise ValueError(f"the benchmark runs the job locally, not on {master}")
    return (os.cpu_count() or 1) if found.group(1) == "*" else int(found.group(1) or 1)


def mirrormaker2_argv(rendered: Path) -> list[str]:
    """MirrorMaker 2 in dedicated mode with the mm2.properties that render wrote."""
    return [
        paths.java_executable(),
        "-Xmx1g",
        f"-Djava.security.krb5.conf={rendered / 'krb5.conf'}",
        "-cp",
        paths.kafka_classpath(),
        "org.apache.kafka.connect.mirror.MirrorMaker",
        str(rendered / "mm2" / "mm2.properties"),
    ]


def stop(proc: subprocess.Popen) -> None:
    """SIGTERM a contender, SIGKILL it if it has not gone within a minute."""
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(60)
        except subprocess.TimeoutExpired:
            proc.kill()


def percentile(values: list[float], pct: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(pct / 100 * (len(ordered) - 1))))]


def summarize(samples: list[dict]) -> dict:
    rates = [s["records_per_second"] for s in samples]
    out = {"median_records_per_second": statistics.median(rates), "min": min(rates), "max": max(rates), "runs": samples}
    if "startup_seconds" in samples[0]:
        out["median_startup_seconds"] = statistics.median(s["startup_seconds"] for s in samples)
        out["median_steady_records_per_second"] = statistics.median(s["steady_records_per_second"] for s in samples)
    if all("job_startup_seconds" in s for s in samples):
        out["median_job_startup_seconds"] = statistics.median(s["job_startup_seconds"] for s in samples)
        out["median_job_steady_records_per_second"] = statistics.median(
            s["job_steady_records_per_second"] for s in samples
        )
    return out


def run(
    records: int,
    partitions: int,
    repeats: int,
    latency_records: int,
    latency_rate: float,
    preflight_topics: int = 1000,
    seed: int = 1,
) -> dict:
    with tempfile.TemporaryDirectory(prefix="secure-mirror-bench-") as tmp:
        work = Path(tmp)
        log("starting the sandbox (with PLAINTEXT listeners beside SASL_SSL)")
        sb = Sandbox.up(work / "sandbox", plaintext=True)
        try:
            bench = Bench(sb, work, records, partitions, seed)
            secure, plain = bench.profile("gssapi"), bench.profile("plaintext", plaintext=True)
            rendered = bench.render(secure)
            bench.render(plain)
            bench.grant(rendered)
            log(f"loading {records} records (varied JSON values, seed {seed}) over {partitions} partitions")
            load_seconds = bench.load_source()
            timeout = max(300.0, records / 2000)
            runs = {
                "perf_tools": lambda: bench.perf_tools(rendered),
                "mirrormaker2": lambda: bench.mirrormaker2(rendered, timeout),
                "secure_mirror": lambda: bench.secure_mirror(secure, timeout),
                "secure_mirror_plaintext": lambda: bench.secure_mirror(plain, timeout),
            }
            contenders: dict[str, list[dict]] = {name: [] for name in runs}
            shuffle, orders = random.Random(seed), []
            for i in range(repeats):
                order = shuffle.sample(list(runs), len(runs))
                orders.append(order)
                for name in order:
                    log(f"repeat {i + 1}/{repeats}: {name}")
                    contenders[name].append(runs[name]())
            summary = {name: summarize(s) for name, s in contenders.items()}
            latency = {}
            if latency_records:
                log(f"latency: {latency_records} records at {latency_rate}/s")
                latency["secure_mirror"] = bench.latency(
                    "secure_mirror",
                    [
                        str(REPO / ".venv/bin/secure-mirror"),
                        "run",
                        str(secure),
                        "--skip-preflight",
                        "--trigger-interval",
                        "0 seconds",
                        "--run-dir",
                        str(work / "run-latency"),
                    ],
                    latency_records,
                    latency_rate,
                )
                latency["mirrormaker2"] = bench.latency(
                    "mirrormaker2", mirrormaker2_argv(rendered), latency_records, latency_rate
                )
            log(f"pre-flight over {preflight_topics} topics")
            preflight = preflight_scale.bench(sb, preflight_topics, work) if preflight_topics else {}
        finally:
            sb.down()
    med = {k: v["median_records_per_second"] for k, v in summary.items()}
    steady = {k: v["median_steady_records_per_second"] for k, v in summary.items() if k != "perf_tools"}
    return {
        "machine": {"platform": platform.platform(), "cpus": os.cpu_count(), "python": platform.python_version()},
        "parameters": {
            "records": records,
            "partitions": partitions,
            "repeats": repeats,
            "seed": seed,
            "values": "varied JSON, about 1 KiB (a third to twice)",
            "mm2_tasks": task_slots("local[2]"),
            "job_task_slots": task_slots("local[2]"),
            "orders": orders,
            "latency_records": latency_records,
            "latency_rate": latency_rate,
        },
        "load_seconds": load_seconds,
        "contenders": summary,
        "latency": latency,
        "preflight": preflight,
        # Process start to all N records on the target, the same clock for every contender.
        "ratios": {
            "secure_mirror_over_mirrormaker2": med["secure_mirror"] / med["mirrormaker2"],
            "secure_mirror_over_perf_tools": med["secure_mirror"] / med["perf_tools"],
            "sasl_ssl_gssapi_over_plaintext": med["secure_mirror"] / med["secure_mirror_plaintext"],
        },
        # Steady rates from the target's append times over the same window (10% to 90% of N) for every mirror.
        "steady_ratios": {
            "secure_mirror_over_mirrormaker2": steady["secure_mirror"] / steady["mirrormaker2"],
            "sasl_ssl_gssapi_over_plaintext": steady["secure_mirror"] / steady["secure_mirror_plaintext"],
        },
    }


def markdown(result: dict, command: str) -> str:
    rows = [
        "| contender | median records/s (start to all N on target) | min | max | first record on target, s "
        "(median) | steady records/s, target append times 10%-90% (median) | job start-up, s (median) | job "
        "records/s from its first batch (median) |",
        "| --- | --- | --- | --- | --- | --- | --- | --- |",
    ]

    def fmt(c: dict, key: str, spec: str) -> str:
        return format(c[key], spec) if key in c else "-"

    for name, c in result["contenders"].items():
        rows.append(
            f"| {name} | {c['median_records_per_second']:.0f} | {c['min']:.0f} | {c['max']:.0f} | "
            f"{fmt(c, 'median_startup_seconds', '.1f')} | {fmt(c, 'median_steady_records_per_second', '.0f')} | "
            f"{fmt(c, 'median_job_startup_seconds', '.1f')} | "
            f"{fmt(c, 'median_job_steady_records_per_second', '.0f')} |"
        )
    ratios = "\n".join(f"- {k}: **{v:.2f}**" for k, v in result["ratios"].items())
    ratios += "\n\nSteady (the target's append times, 10% to 90% of the records, the same window for every mirror):\n"
    ratios += "\n".join(f"- {k}: **{v:.2f}**" for k, v in result.get("steady_ratios", {}).items()) or "- n/a"
    lat = (
        "\n".join(
            f"- {k}: p50 {v['p50_ms']:.0f} ms, p99 {v['p99_ms']:.0f} ms ({v['samples']} samples)"
            for k, v in result["latency"].items()
        )
        or "- not measured"
    )
    pre = result.get("preflight") or {}
    preflight = (
        (
            f"- {pre['topics']} topics: {pre['first_run_seconds']:.1f} s (first run), "
            f"{pre['second_run_seconds']:.1f} s (second run), {pre['with_admin_audit_seconds']:.1f} s with the "
            f"--as-admin ACL audit; {pre['checks']} checks, ok={pre['ok']}"
        )
        if pre
        else "- not measured"
    )
    p = result["parameters"]
    orders = "; ".join(" -> ".join(order) for order in p["orders"])
    return (
        f"# Benchmark\n\nCommand: `{command}`\n\n{p['records']} records ({p['values']}) over "
        f"{p['partitions']} partitions, {p['repeats']} repeat(s), seed {p['seed']}, on "
        f"{result['machine']['cpus']} CPUs; the job has {p['job_task_slots']} task slots and MirrorMaker 2 "
        f"{p['mm2_tasks']} tasks; order of the runs: {orders}. perf_tools is Kafka's consumer and producer perf "
        "tools reading and writing the same values at once: a reference, not a bound.\n\n"
        + "\n".join(rows)
        + f"\n\nRatios (medians):\n{ratios}\n\nLatency (source create -> target append):\n{lat}"
        f"\n\nPre-flight at scale:\n{preflight}\n"
    )


def chart(result: dict, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (a, b) = plt.subplots(1, 2, figsize=(11, 4))
    names = list(result["contenders"])
    a.bar(names, [result["contenders"][n]["median_records_per_second"] for n in names], color="#4477aa")
    a.set_ylabel("records/s (median)")
    a.set_title("Throughput")
    a.tick_params(axis="x", rotation=20)
    lat = result["latency"]
    if lat:
        xs = list(lat)
        b.bar(
            [f"{x}\np50" for x in xs] + [f"{x}\np99" for x in xs],
            [lat[x]["p50_ms"] for x in xs] + [lat[x]["p99_ms"] for x in xs],
            color="#cc6677",
        )
        b.set_ylabel("ms")
    b.set_title("Latency")
    fig.tight_layout()
    fig.savefig(path, dpi=100)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a run under 5 minutes (100k records, 1 repeat)")
    parser.add_argument("--records", type=int)
    parser.add_argument("--partitions", type=int, default=6)
    parser.add_argument("--repeats", type=int)
    parser.add_argument("--preflight-topics", type=int, default=1000, help="0 skips pre-flight at scale")
    parser.add_argument("--out", type=Path, default=RESULTS)
    parser.add_argument(
        "--seed",
        type=int,
        default=int(os.environ.get("SECURE_MIRROR_SEED", "0")) or None,
        help="the data and run-order seed (default: random, printed)",
    )
    args = parser.parse_args(argv)
    records = args.records or (100_000 if args.quick else 2_000_000)
    repeats = args.repeats or (1 if args.quick else 3)
    lat_records, lat_rate = (1000, 200.0) if args.quick else (10_000, 1000.0)
    seed = args.seed or random.SystemRandom().randrange(1, 2**31)
    log(f"seed {seed} (--seed {seed} or SECURE_MIRROR_SEED={seed} repeats the data and the run order)")
    result = run(records, args.partitions, repeats, lat_records, lat_rate, args.preflight_topics, seed)
    given = list(argv if argv is not None else sys.argv[1:])
    command = "scripts/bench " + " ".join(given + ([] if args.seed else ["--seed", str(seed)]))
    result["command"] = command.strip()
    args.out.mkdir(parents=True, exist_ok=True)
    stem = "quick" if args.quick else "full"
    (args.out / f"{stem}.json").write_text(json.dumps(result, indent=2))
    (args.out / f"{stem}.md").write_text(markdown(result, command.strip()))
    chart(result, args.out / f"{stem}.png")
    print(markdown(result, command.strip()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
