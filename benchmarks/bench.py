"""secure_mirror against MirrorMaker 2 and a plain copy, in one run, on the sandbox.

Every contender mirrors the same source topic (varied JSON values, seeded) into a freshly created target topic with
LogAppendTime, and is measured on the same clocks and axes:

- start to end: from its process start to the moment the target holds all N records (for a contender writing in
  transactions, exactly_once and MirrorMaker 2 with exactly-once: the moment a read_committed reader sees all N,
  ``benchmarks/committed.py``, the same count as ``--scale``'s);
- steady: its rate from the target's own append times (the records appended between the moments 10% and 90% of N
  were on the target), the same window for every contender;
- CPU: the CPU seconds of its own processes (the process it starts and all their descendants, read from /proc when
  the last record is on the target) per million records, and beside it those the two brokers spent while it ran.

The contenders are the table of ``benchmarks/contenders.py``, shared with ``--scale`` (``--contenders a,b``; by
default the copy limit, MirrorMaker 2 without and with exactly-once, the job with ``at_least_once`` and with
``exactly_once``), each at as many tasks as the job has task slots. The order is shuffled in every repeat (seeded; the
seed is printed). A long round (``--long-records``, default 10,000,000 in the full run) runs each contender once more
over a larger topic, where start-up is paid once. Latency (source create time -> target append time at a steady
input rate) compares MirrorMaker 2 with the job's micro-batches, its exactly_once transactions and its low-latency
continuous mode. Figures are ratios measured side by side: absolute numbers on shared machines drift.

    scripts/bench [--quick] [--records N] [--long-records N] [--partitions P] [--repeats R] [--seed S]
                  [--contenders copy_limit,mirrormaker2,...]
    scripts/bench --profile      Java Flight Recorder on the job's and MirrorMaker 2's steady state
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import json
import os
import random
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import yaml

from benchmarks import committed, contenders, load, preflight_scale
from secure_mirror import paths
from secure_mirror.kafka import admin_ops
from secure_mirror.profile import load_profile
from secure_mirror.render import render_all
from secure_mirror.run import class_cache
from secure_mirror.sandbox import Sandbox
from tests.support import provenance

REPO = Path(__file__).resolve().parent.parent
SOURCE_TOPIC = "bench.data"
LONG_TOPIC = "bench.long"
RESULTS = REPO / "benchmarks" / "results"
CLOCK_TICKS = os.sysconf("SC_CLK_TCK")
TASK_SLOTS = 2  # the job's master is local[2]; MirrorMaker 2 and the copy limit get as many tasks


def log(text: str) -> None:
    print(f"bench: {text}", file=sys.stderr, flush=True)


def target_of(topic: str) -> str:
    return f"src.{topic}"  # the sandbox profile's rename rule: <source alias>.<topic>


def class_cache_warm_up(variant_conf: tuple[str, ...]) -> Callable[[dict], None]:
    """The edit that makes a contender's profile the class-data archive's warm-up job: over no topic, and without the
    Spark conf keys ``variant_conf`` a variant contender adds (:meth:`Bench.warm_class_cache`)."""

    def edit(data: dict) -> None:
        data["mirror"]["topics"] = {"include": "secure-mirror-class-cache-warm-up"}  # matches no topic
        conf = data["mirror"].get("spark", {}).get("conf", {})
        for key in variant_conf:
            conf.pop(key, None)

    return edit


class Bench:
    def __init__(self, sb: Sandbox, work: Path, records: int, partitions: int, seed: int = 1):
        self.sb, self.work, self.records, self.partitions, self.seed = sb, work, records, partitions, seed
        # This process is the benchmark's own: its librdkafka calls run as the two admins, whose caches
        # live side by side in one DIR: collection (different realms).
        (work / "cc").mkdir(mode=0o700, exist_ok=True)
        os.environ.update({"KRB5_CONFIG": str(sb.krb5_conf), "KRB5CCNAME": f"DIR:{work / 'cc'}"})
        self.runs = 0
        self.topic = SOURCE_TOPIC
        self.copier: Path | None = None
        self.class_archive: dict | None = None  # the job's class-data archive, once written (:meth:`warm_class_cache`)

    @property
    def target_topic(self) -> str:
        return target_of(self.topic)

    # ---- set-up ---------------------------------------------------------------------------------------
    def profile(self, name: str, *, plaintext: bool = False, edit: Callable[[dict], None] | None = None) -> Path:
        data = yaml.safe_load(self.sb.profile_path.read_text())
        data["mirror"]["topics"] = {"include": re.escape(self.topic)}
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
        if edit:
            edit(data)
        path = self.work / f"{name}-{self.topic}.yaml"
        path.write_text(yaml.safe_dump(data, sort_keys=False))
        return path

    def render(self, profile: Path) -> Path:
        out = self.work / f"rendered-{profile.stem}"
        render_all(load_profile(profile), out)
        return out

    def grant(self, rendered: Path, principals: tuple[str, ...] = ("User:mirror", "User:ANONYMOUS")) -> dict:
        """The rendered ACLs of each side and ALL on every topic, group and the cluster for ``principals``: what each
        side was given."""
        given = {}
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
                for p in principals
            ]
            admin_ops.create_acls(self.sb.client_conf(side, "admin"), acls + broad)  # MM2 and PLAINTEXT need more
            given[side] = acls + broad
        return given

    def load_source(self, records: int | None = None) -> float:
        records = records or self.records
        admin_ops.create_topics(self.sb.client_conf("source", "admin"), {self.topic: self.partitions})
        self.source_records = records
        return load.produce_load(self.sb.client_conf("source", "admin"), self.topic, records, seed=self.seed)

    def fresh_target(self, topic: str | None = None, config: dict | None = None) -> None:
        """A new target topic whose records carry the target's append time (the steady rate's clock)."""
        topic = topic or self.target_topic
        config = {"message.timestamp.type": "LogAppendTime", **(config or {})}
        conf = self.sb.client_conf("target", "admin")
        delete_and_wait(conf, [topic])
        for _ in range(40):
            try:
                admin_ops.create_topics(conf, {topic: self.partitions}, config=config)
                return
            except Exception:  # noqa: BLE001 - the broker may still be deleting the old one
                time.sleep(0.5)
        raise RuntimeError(f"could not re-create {topic} on the target")

    def target_count(self, topic: str | None = None) -> int:
        return load.end_offsets(self.sb.client_conf("target", "admin"), topic or self.target_topic)

    def reader(self, transactional: bool) -> committed.ReadCommitted | None:
        """For a contender writing in transactions, the count of what a read_committed reader of the target topic
        sees (``benchmarks/committed.py``); None for one without."""
        if not transactional:
            return None
        return committed.ReadCommitted(self.sb.client_conf("target", "admin"), {self.target_topic: self.partitions})

    def on_target(self, reader: committed.ReadCommitted | None, records: int | None = None) -> int:
        """The records that count as on the target (:func:`committed.on_target`), of ``records`` (default N)."""
        return committed.on_target(records or self.records, self.target_count(), reader)

    def forget_groups(self, group_prefix: str) -> None:
        load.forget_groups(self.sb.client_conf("target", "admin"), group_prefix)

    # ---- the clocks -----------------------------------------------------------------------------------
    def wait_for_target(
        self,
        proc: subprocess.Popen,
        started: float,
        log_file: Path,
        timeout: float,
        reader: committed.ReadCommitted | None,
    ) -> dict:
        first, since_ms = None, int(time.time() * 1000) - int((time.monotonic() - started) * 1000) - 1000
        cpu_before = broker_cpu(self.sb)
        while True:
            now = time.monotonic()  # asked after this moment: what is counted was on the target by then
            held = self.target_count()
            if held and first is None:
                first = now
            held = committed.on_target(self.records, held, reader)
            if held >= self.records:
                cpu = tree_cpu_seconds(proc.pid)
                brokers = broker_cpu(self.sb) - cpu_before
                return {
                    "seconds": now - started,
                    "startup_seconds": (first or now) - started,
                    "records_per_second": self.records / (now - started),
                    "steady_records_per_second": self.append_rate(since_ms),
                    "cpu_seconds": cpu,
                    "cpu_seconds_per_million": cpu / self.records * 1e6,
                    "broker_cpu_seconds_per_million": brokers / self.records * 1e6,
                }
            if proc.poll() is not None and proc.returncode != 0:
                raise RuntimeError(f"{log_file.name} exited {proc.returncode}: {log_file.read_text()[-2000:]}")
            if now - started > timeout:
                raise RuntimeError(f"{log_file.name}: target has {held}/{self.records} after {timeout}s")
            time.sleep(0.25)

    def append_rate(self, since_ms: int) -> float:
        """Records per second between the target append times of the 10% and the 90% marks of N."""
        t10, t90 = load.append_times(
            self.sb.client_conf("target", "admin"),
            self.target_topic,
            [int(0.1 * self.records), int(0.9 * self.records)],
            since_ms,
        )
        return 0.8 * self.records / max((t90 - t10) / 1000, 1e-3)

    def timed_process(self, name: str, argv: list[str], timeout: float, transactional: bool = False) -> dict:
        self.fresh_target()
        log_file = self.work / f"{name}-{self.runs}.log"
        self.runs += 1
        reader = self.reader(transactional)
        with open(log_file, "w") as fh:
            started = time.monotonic()
            proc = subprocess.Popen(argv, stdout=fh, stderr=subprocess.STDOUT, cwd=REPO, start_new_session=True)
        try:
            return self.wait_for_target(proc, started, log_file, timeout, reader)
        finally:
            stop(proc)
            if reader:
                reader.close()

    # ---- contenders -----------------------------------------------------------------------------------
    def job_argv(self, profile: Path, run_dir: Path, *extra: str, edit: Callable[[dict], None] | None = None):
        data = yaml.safe_load(profile.read_text())
        data["mirror"]["checkpoint_location"] = str(run_dir / "checkpoints")  # from scratch every time
        if edit:
            edit(data)
        fresh = self.work / f"{profile.stem}-{self.runs}.yaml"
        fresh.write_text(yaml.safe_dump(data, sort_keys=False))
        return [
            str(REPO / ".venv/bin/secure-mirror"),
            "run",
            str(fresh),
            "--skip-preflight",
            "--run-dir",
            str(run_dir),
            *extra,
        ]

    def contender(self, name: str, file: Path, timeout: float) -> dict:
        """Run contender ``name`` (``benchmarks/contenders.py``) from its file (:func:`prepare`) to the end."""
        runs = contenders.CONTENDERS[name].runs
        if runs == "job":
            return self.secure_mirror(file, timeout, contenders.CONTENDERS[name].spark_conf_keys())
        if runs == "mirrormaker2":
            return self.mirrormaker2(file, timeout, contenders.CONTENDERS[name].exactly_once, name)
        return self.copy_limit(file, timeout, contenders.CONTENDERS[name].jvm_options)

    def warm_class_cache(self, profile: Path, variant_conf: tuple[str, ...] = ()) -> dict:
        """Before the job's first measured run: the class-data archive ``secure-mirror run`` writes at a job's end and
        maps at the next start (secure_mirror/run/class_cache.py), written by one unmeasured job over no topic into
        this benchmark's own folder, as any later run on a machine finds it. Left to the caller when its environment
        names a cache (``SECURE_MIRROR_CLASS_CACHE``, ``off`` included). What was done goes into the results.

        The job is the plain one, whichever contender asks first: ``variant_conf`` names the Spark conf keys a variant
        contender adds to its profile, left out here. A variant's class path or JVM options would otherwise make the
        archive its own, and every other job would start without one (NOTES section 22)."""
        if self.class_archive is not None:
            return self.class_archive
        if class_cache.CACHE_VARIABLE in os.environ:
            self.class_archive = {"folder": os.environ[class_cache.CACHE_VARIABLE], "written_by": "the caller"}
            return self.class_archive
        folder = self.work / "class-cache"
        os.environ[class_cache.CACHE_VARIABLE] = str(folder)  # every job the benchmark starts inherits it

        argv = self.job_argv(
            profile, self.work / "run-class-cache-warm-up", "--until-caught-up", edit=class_cache_warm_up(variant_conf)
        )
        started = time.monotonic()
        done = subprocess.run(argv, capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=600)
        archives = sorted(folder.glob("spark-*.jsa"))
        self.class_archive = {
            "folder": str(folder),
            "written_by": "one unmeasured job over no topic, before the first measured job",
            "warm_up_seconds": round(time.monotonic() - started, 1),
            "warm_up_exit_code": done.returncode,
            "archive_bytes": archives[0].stat().st_size if archives else 0,
        }
        log(f"class-data archive: {json.dumps(self.class_archive)}")
        return self.class_archive

    def secure_mirror(self, profile: Path, timeout: float, variant_conf: tuple[str, ...] = ()) -> dict:
        self.warm_class_cache(profile, variant_conf)
        run_dir = self.work / f"run-{profile.stem}-{self.runs}"
        argv = self.job_argv(profile, run_dir, "--until-caught-up")
        prefix = exactly_once_prefix(profile)
        if prefix:
            self.forget_groups(prefix)  # positions of an earlier repeat would make the sink skip everything
        wall_start = time.time()
        result = self.timed_process(f"secure-mirror-{profile.stem}", argv, timeout, transactional=bool(prefix))
        return {
            **result,
            **job_phases(run_dir / "metrics.jsonl", wall_start, wall_start + result["seconds"], self.records),
        }

    def mirrormaker2(
        self, rendered: Path, timeout: float, exactly_once: bool = False, name: str = "mirrormaker2"
    ) -> dict:
        self.forget_mirrormaker2()
        return self.timed_process(name, mirrormaker2_argv(rendered), timeout, transactional=exactly_once)

    def copy_limit(self, rendered: Path, timeout: float, jvm_options: tuple[str, ...] = ()) -> dict:
        return self.timed_process("copy-limit", self.copy_limit_argv(rendered, jvm_options), timeout)

    def copy_limit_argv(self, rendered: Path, jvm_options: tuple[str, ...] = ()) -> list[str]:
        if self.copier is None:
            self.copier = compile_copy_limit(self.work)
        return copy_limit_argv(self.copier, rendered, [self.topic], TASK_SLOTS, jvm_options)

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

    def wait_settled(self, deadline: float, count: Callable[[], int]) -> None:
        """Until the target holds the whole source (every contender copies the backlog from the beginning)."""
        while count() < self.source_records and time.monotonic() < deadline:
            time.sleep(0.5)

    def latency(self, name: str, argv: list[str], records: int, rate: float, prefix: str | None = None) -> dict:
        """p50/p99 of source create time -> target log-append time under a steady produce rate. With exactly_once
        (``prefix``) a record counts once its transaction committed (the latency reader is read_committed)."""
        self.fresh_target()
        if prefix:
            self.forget_groups(prefix)
        reader = self.reader(bool(prefix))
        count = lambda: self.on_target(reader, self.source_records)  # noqa: E731
        log_file = self.work / f"latency-{name}.log"
        with open(log_file, "w") as fh:
            proc = subprocess.Popen(argv, stdout=fh, stderr=subprocess.STDOUT, cwd=REPO, start_new_session=True)
        try:
            deadline = time.monotonic() + 600
            self.wait_settled(deadline, count)  # the backlog first: start-up and catch-up are not latency
            since_ms = int(time.time() * 1000)
            load.produce_load(self.sb.client_conf("source", "admin"), self.topic, records, rate=rate)
            self.source_records += records
            while count() < self.source_records and time.monotonic() < deadline:  # the backlog and the new ones
                time.sleep(0.5)
            lat = load.latencies(
                self.sb.client_conf("target", "admin"),
                self.target_topic,
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


def exactly_once_prefix(profile: Path) -> str | None:
    model = load_profile(profile)
    return model.transactional_prefix if model.mirror.delivery.exactly_once else None


def copy_limit_argv(
    copier: Path, rendered: Path, topics: list[str], threads: int, jvm_options: tuple[str, ...] = ()
) -> list[str]:
    """The copy limit over ``topics`` (each into its renamed target topic) with ``threads`` consumer-producer loops."""
    return [
        paths.java_executable(),
        "-Xmx1g",
        *jvm_options,
        f"-Djava.security.krb5.conf={rendered / 'krb5.conf'}",
        "-cp",
        f"{copier}:{paths.kafka_classpath()}",
        "CopyLimit",
        str(rendered / "spark" / "source-options.json"),
        str(rendered / "spark" / "sink-options.json"),
        ",".join(topics),
        ",".join(target_of(t) for t in topics),
        str(threads),
    ]


def compile_copy_limit(work: Path) -> Path:
    out = work / "copy-limit-classes"
    out.mkdir(exist_ok=True)
    javac = str(Path(paths.java_executable()).with_name("javac"))
    lint = ["-Xlint:all,-path", "-Werror"]  # as scripts/setup compiles the sink
    source = REPO / "benchmarks" / "CopyLimit.java"
    subprocess.run([javac, *lint, "-d", str(out), "-cp", paths.kafka_classpath(), str(source)], check=True)
    return out


def proc_stat(pid: str) -> list[str] | None:
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return text[text.rindex(")") + 2 :].split()  # fields from the state on (the name may hold blanks)


def process_tree(root: int) -> dict[int, list[str]]:
    """The /proc stat fields (from the state on) of process ``root`` and all its descendants, followed by parent id,
    so a child that starts a session of its own, as the job's launcher does, still counts."""
    stats = {int(pid): fields for pid in os.listdir("/proc") if pid.isdigit() and (fields := proc_stat(pid))}
    children: dict[int, list[int]] = {}
    for pid, fields in stats.items():
        children.setdefault(int(fields[1]), []).append(pid)  # field 4 of stat: the parent id
    tree, todo = {}, [root]
    while todo:
        pid = todo.pop()
        if pid in stats:
            tree[pid] = stats[pid]
        todo += children.get(pid, [])
    return tree


def tree_cpu_seconds(root: int) -> float:
    """User + system CPU seconds of process ``root`` and all its descendants (:func:`process_tree`), reaped
    children's included, from /proc."""
    tree = process_tree(root)
    return sum(int(v) for fields in tree.values() for v in fields[11:15]) / CLOCK_TICKS  # utime, stime, cu-, cs-


def broker_cpu(sb: Sandbox) -> float:
    total = 0
    for side in ("source", "target"):
        fields = proc_stat(str(sb.state["pids"].get(side)))
        if fields:
            total += int(fields[11]) + int(fields[12])
    return total / CLOCK_TICKS


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


def jfr_options(path: Path) -> tuple[str, ...]:
    """The JVM options of a Flight Recording (``settings=profile``) written to ``path`` at the JVM's exit; a folder
    gets a file per JVM (``scripts/bench --profile``, ``--scale --jfr``). ``DebugNonSafepoints`` has the JIT keep
    where each instruction came from, not only at safepoints: without it a sample taken between two safepoints is
    put at the nearest one, in whichever inlined method that was (JDK Mission Control's documentation of its method
    profiling; benchmarks/NOTES.md section 23 found samples put in a 3-entry map's tree bins). Every compilation is
    recorded, not only those over 100 ms (``jdk.Compilation#threshold``), so the JIT's work can be split by method."""
    return (
        "-XX:+UnlockDiagnosticVMOptions",
        "-XX:+DebugNonSafepoints",
        f"-XX:StartFlightRecording=filename={path},settings=profile,jdk.Compilation#threshold=0ms,dumponexit=true",
    )


def mirrormaker2_argv(rendered: Path, *jvm: str) -> list[str]:
    """MirrorMaker 2 in dedicated mode with the mm2.properties that render wrote."""
    return [
        paths.java_executable(),
        "-Xmx1g",
        *jvm,
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


MEDIANS = {
    "median_startup_seconds": "startup_seconds",
    "median_steady_records_per_second": "steady_records_per_second",
    "median_cpu_seconds_per_million": "cpu_seconds_per_million",
    "median_broker_cpu_seconds_per_million": "broker_cpu_seconds_per_million",
    "median_job_startup_seconds": "job_startup_seconds",
    "median_job_steady_records_per_second": "job_steady_records_per_second",
}


def summarize(samples: list[dict]) -> dict:
    rates = [s["records_per_second"] for s in samples]
    out = {"median_records_per_second": statistics.median(rates), "min": min(rates), "max": max(rates), "runs": samples}
    for name, key in MEDIANS.items():
        if all(key in s for s in samples):
            out[name] = statistics.median(s[key] for s in samples)
    return out


def ratios(summary: dict, key: str) -> dict:
    """The job's figures over MirrorMaker 2's and the copy limit's, and exactly_once over at_least_once and over
    MirrorMaker 2 with exactly-once."""
    have = {name: c[key] for name, c in summary.items() if key in c}
    pairs = [
        ("secure_mirror", "mirrormaker2"),
        ("secure_mirror", "copy_limit"),
        ("mirrormaker2", "copy_limit"),
        ("secure_mirror_exactly_once", "secure_mirror"),
        ("secure_mirror_exactly_once", "mirrormaker2"),
        ("secure_mirror_exactly_once", "mirrormaker2_exactly_once"),
        ("mirrormaker2_exactly_once", "mirrormaker2"),
    ]
    return {f"{a}_over_{b}": have[a] / have[b] for a, b in pairs if a in have and b in have and have[b]}


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
    return {name: summarize(s) for name, s in samples.items()}, orders


def exactly_once(data: dict) -> None:
    data["mirror"].setdefault("delivery", {})["guarantee"] = "exactly_once"


def low_latency(partitions: int) -> Callable[[dict], None]:
    """The job's low-latency mode (docs/continuous.md): Spark's continuous trigger, which holds a task slot per source
    partition for as long as it runs, 500 ms epochs, and a producer that sends at once (linger 0)."""

    def edit(data: dict) -> None:
        spark = data["mirror"].setdefault("spark", {})
        spark.update({"trigger": "continuous", "continuous_interval_ms": 500, "master": f"local[{partitions}]"})
        linger_zero(data)

    return edit


def linger_zero(data: dict) -> None:
    data["mirror"].setdefault("delivery", {})["linger_ms"] = 0


def prepare(bench: Bench, names: list[str], tasks: int, edit: Callable[[dict], None] | None = None) -> dict[str, Path]:
    """Each contender's file for the topics of ``bench``: a job's profile, the rendered folder of MirrorMaker 2 and of
    the copy limit (``contenders.profile_edit`` at ``tasks`` task slots, then ``edit``); every rendered folder's
    grants given, and MirrorMaker 2's exactly-once ones (KIP-618's transactional ids) when it runs."""
    files, source_alias = {}, ""
    for name in names:

        def both(data: dict, name: str = name) -> None:
            contenders.profile_edit(name, tasks)(data)
            if edit:
                edit(data)

        profile = bench.profile(name, edit=both)
        rendered = bench.render(profile)
        bench.grant(rendered)
        files[name] = profile if contenders.CONTENDERS[name].runs == "job" else rendered
        source_alias = load_profile(profile).source.alias
    if "mirrormaker2_exactly_once" in names:
        admin_ops.create_acls(
            bench.sb.client_conf("target", "admin"),
            contenders.mm2_exactly_once_acls(source_alias, ("User:mirror", "User:ANONYMOUS")),
        )
    return files


def setup_topic(bench: Bench, topic: str, records: int, names: list[str]) -> dict[str, Path]:
    """The files of contenders ``names`` for ``topic`` (:func:`prepare`), granted, and the topic loaded."""
    bench.topic, bench.records = topic, records
    files = prepare(bench, names, TASK_SLOTS)
    log(f"loading {records} records into {topic} (varied JSON values, seed {bench.seed}) over {bench.partitions}")
    bench.load_seconds = bench.load_source(records)
    return files


def contender_runs(bench: Bench, files: dict[str, Path], timeout: float) -> dict[str, Callable[[], dict]]:
    """Each contender of ``files`` as a call that runs it to the end (:meth:`Bench.contender`)."""
    return {name: functools.partial(bench.contender, name, file, timeout) for name, file in files.items()}


LATENCY_FILES = ["mirrormaker2", "secure_mirror", "secure_mirror_exactly_once"]  # the latency runs' contenders


def latencies(bench: Bench, files: dict[str, Path], records: int, rate: float, with_continuous: bool) -> dict:
    log(f"latency: {records} records at {rate}/s")
    out = {}
    work = bench.work
    alo, eos_profile = files["secure_mirror"], files["secure_mirror_exactly_once"]
    micro = bench.job_argv(alo, work / "run-latency", "--trigger-interval", "0 seconds")
    out["secure_mirror"] = bench.latency("secure_mirror", micro, records, rate)
    eos = bench.job_argv(eos_profile, work / "run-latency-eos", "--trigger-interval", "0 seconds")
    out["secure_mirror_exactly_once"] = bench.latency(
        "secure_mirror_exactly_once", eos, records, rate, exactly_once_prefix(eos_profile)
    )
    bench.forget_mirrormaker2()  # from the beginning, as the job: it copies the backlog before the timed records
    out["mirrormaker2"] = bench.latency("mirrormaker2", mirrormaker2_argv(files["mirrormaker2"]), records, rate)
    if with_continuous:
        low = bench.job_argv(alo, work / "run-latency-continuous", edit=low_latency(bench.partitions))
        try:
            out["secure_mirror_continuous"] = bench.latency("secure_mirror_continuous", low, records, rate)
        except Exception as exc:  # noqa: BLE001 - reported, not fatal: the other figures still stand
            out["secure_mirror_continuous"] = {"error": str(exc)[:500]}
        # MirrorMaker 2 with the low-latency mode's producer setting too (linger 0), so the two compare like for like
        rendered = bench.render(bench.profile("gssapi-linger0", edit=linger_zero))
        bench.forget_mirrormaker2()
        out["mirrormaker2_linger_0"] = bench.latency(
            "mirrormaker2_linger_0", mirrormaker2_argv(rendered), records, rate
        )
    return out


@contextlib.contextmanager
def kept_on_failure(prefix: str):
    """A work folder, removed after a run that succeeded and kept (its path printed) for the logs of one that failed."""
    work = Path(tempfile.mkdtemp(prefix=prefix))
    try:
        yield work
    except BaseException:
        log(f"failed; the contenders' logs are kept in {work}")
        raise
    shutil.rmtree(work, ignore_errors=True)


@dataclass
class Session:
    """A benchmark's sandbox and work folder; :meth:`keep` keeps the folder (the contenders' logs) after the run."""

    sb: Sandbox
    work: Path
    kept: bool = False

    def keep(self) -> None:
        self.kept = True

    def each(self, label: str, names, make: Callable, results: dict, shown: Callable[[dict], object]) -> None:
        """Each contender in turn (``make(name)`` builds one with ``run()`` and ``tear_down()``): ``results[name]`` is
        its result, or its error (the folder then kept), and the next one still runs; ``shown`` picks what is logged."""
        for name in names:
            log(f"{label}: {name}")
            contender = make(name)
            try:
                results[name] = contender.run()
            except Exception as exc:  # noqa: BLE001 - recorded; the other contenders still run
                self.keep()
                results[name] = {"error": f"{type(exc).__name__}: {str(exc)[:800]}"}
            finally:
                contender.tear_down()
            log(f"{label}: {name}: {json.dumps(shown(results[name]))}")


@contextlib.contextmanager
def sandbox_session(sandbox: Path | None, prefix: str):
    """A work folder and a sandbox: the running one in ``sandbox`` (left running), else a fresh one in the folder
    (stopped after). The folder is removed afterwards unless the run failed or :meth:`Session.keep` was called; the
    benchmark's admin clients are dropped before the sandbox goes."""
    work = Path(tempfile.mkdtemp(prefix=prefix))
    session: Session | None = None
    try:
        session = Session(Sandbox.load(sandbox) if sandbox else Sandbox.up(work / "sandbox"), work)
        try:
            yield session
        finally:
            load._ADMINS.clear()
            if not sandbox:
                session.sb.down()
    except BaseException:
        log(f"failed; the contenders' logs are kept in {work}")
        raise
    if session.kept:
        log(f"the contenders' logs are kept in {work}")
    else:
        shutil.rmtree(work, ignore_errors=True)


def run(args: argparse.Namespace, seed: int) -> dict:
    build = provenance.build()  # the checkout the run starts from: the code it measures
    shuffle = random.Random(seed)
    with kept_on_failure("secure-mirror-bench-") as work:
        log("starting the sandbox")
        sb = Sandbox.up(work / "sandbox")
        try:
            bench = Bench(sb, work, args.records, args.partitions, seed)
            named = list(dict.fromkeys([*args.contenders, *(LATENCY_FILES if args.latency_records else [])]))
            files = setup_topic(bench, SOURCE_TOPIC, args.records, named)
            load_seconds = bench.load_seconds
            runs = contender_runs(bench, {n: files[n] for n in args.contenders}, max(300.0, args.records / 2000))
            summary, orders = rounds(runs, args.repeats, shuffle, "repeat")
            latency = {}
            if args.latency_records:
                latency = latencies(bench, files, args.latency_records, args.latency_rate, args.continuous)
            long_summary, long_orders = {}, []
            if args.long_records:
                long_files = setup_topic(bench, LONG_TOPIC, args.long_records, args.contenders)
                long_runs = contender_runs(bench, long_files, max(600.0, args.long_records / 2000))
                long_summary, long_orders = rounds(long_runs, 1, shuffle, "long round")
            preflight = {}
            if args.preflight_topics:
                log(f"pre-flight over {args.preflight_topics} topics")
                preflight = preflight_scale.bench(sb, args.preflight_topics, work)
        finally:
            sb.down()
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
            "orders": orders,
            "long_orders": long_orders,
            "latency_records": args.latency_records,
            "latency_rate": args.latency_rate,
        },
        "load_seconds": load_seconds,
        "class_cache": bench.class_archive,
        "contenders": summary,
        "long": long_summary,
        "latency": latency,
        "preflight": preflight,
        # Process start to all N records on the target, the same clock for every contender.
        "ratios": ratios(summary, "median_records_per_second"),
        # Steady rates from the target's append times over the same window (10% to 90% of N) for every contender.
        "steady_ratios": ratios(summary, "median_steady_records_per_second"),
        "cpu_ratios": ratios(summary, "median_cpu_seconds_per_million"),
        "long_ratios": ratios(long_summary, "median_records_per_second"),
        "long_steady_ratios": ratios(long_summary, "median_steady_records_per_second"),
        "long_cpu_ratios": ratios(long_summary, "median_cpu_seconds_per_million"),
    }


def table(summary: dict) -> list[str]:
    rows = [
        "| contender | records/s start to end (median) | min | max | first record on target, s | steady records/s, "
        "target append times 10%-90% | CPU s per million records (its processes) | brokers' CPU s per million "
        "records | job start-up, s |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ]

    def fmt(c: dict, key: str, spec: str) -> str:
        return format(c[key], spec) if key in c else "-"

    for name, c in summary.items():
        rows.append(
            f"| {name} | {c['median_records_per_second']:.0f} | {c['min']:.0f} | {c['max']:.0f} | "
            f"{fmt(c, 'median_startup_seconds', '.1f')} | {fmt(c, 'median_steady_records_per_second', '.0f')} | "
            f"{fmt(c, 'median_cpu_seconds_per_million', '.1f')} | "
            f"{fmt(c, 'median_broker_cpu_seconds_per_million', '.1f')} | "
            f"{fmt(c, 'median_job_startup_seconds', '.1f')} |"
        )
    return rows


def ratio_lines(values: dict) -> str:
    return "\n".join(f"- {k}: **{v:.2f}**" for k, v in values.items()) or "- n/a"


def markdown(result: dict, command: str) -> str:
    lat = "\n".join(
        f"- {k}: p50 {v['p50_ms']:.0f} ms, p99 {v['p99_ms']:.0f} ms ({v['samples']} samples)"
        if "p50_ms" in v
        else f"- {k}: no figure ({v.get('error', 'failed')})"
        for k, v in result["latency"].items()
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
    text = (
        f"# Benchmark\n\nCommand: `{command}`\n\n{p['records']} records ({p['values']}) over "
        f"{p['partitions']} partitions, {p['repeats']} repeat(s), seed {p['seed']}, on "
        f"{result['machine']['cpus']} CPUs; the job has {p['job_task_slots']} task slots, MirrorMaker 2 "
        f"{p['mm2_tasks']} tasks, the copy limit {p['copy_limit_threads']} consumer-producer loops (the job's "
        f"security, acks and compression, tuned as benchmarks/CopyLimit.java says); order of the runs: {orders}. "
        "Every figure is a median over the repeats. CPU is the contender's own processes (from /proc: the process "
        "started and its descendants); the brokers' CPU is theirs while it ran. For a contender writing in "
        "transactions (exactly_once, MirrorMaker 2 with exactly-once), 'on the target' means what a read_committed "
        "reader sees.\n\n"
        + "\n".join(table(result["contenders"]))
        + f"\n\nRatios, start to end:\n{ratio_lines(result['ratios'])}\n\nRatios, steady (the same window of the "
        f"target's append times):\n{ratio_lines(result['steady_ratios'])}\n\nRatios, CPU seconds per million "
        f"records (lower is better):\n{ratio_lines(result['cpu_ratios'])}\n"
    )
    if result.get("long"):
        long_order = " -> ".join(p["long_orders"][0])
        text += (
            f"\n## Long round: {p['long_records']} records, each contender once (order: {long_order})\n\n"
            + "\n".join(table(result["long"]))
            + f"\n\nRatios, start to end:\n{ratio_lines(result['long_ratios'])}\n\nRatios, steady:\n"
            f"{ratio_lines(result['long_steady_ratios'])}\n\nRatios, CPU per record:\n"
            f"{ratio_lines(result['long_cpu_ratios'])}\n"
        )
    text += (
        f"\n## Latency (source create time -> target append time, {p['latency_records']} records at "
        f"{p['latency_rate']:.0f}/s after the backlog)\n\n{lat or '- not measured'}\n\n## Pre-flight at scale\n\n"
        f"{preflight}\n"
    )
    return text


def chart(result: dict, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (a, c, b) = plt.subplots(1, 3, figsize=(15, 4))
    names = list(result["contenders"])
    a.bar(names, [result["contenders"][n].get("median_steady_records_per_second", 0) for n in names], color="#4477aa")
    a.set_ylabel("records/s (median, steady)")
    a.set_title("Steady throughput")
    a.tick_params(axis="x", rotation=20)
    c.bar(names, [result["contenders"][n].get("median_cpu_seconds_per_million", 0) for n in names], color="#228833")
    c.set_ylabel("CPU s per million records")
    c.set_title("CPU per record (own processes)")
    c.tick_params(axis="x", rotation=20)
    lat = {k: v for k, v in result["latency"].items() if "p50_ms" in v}
    if lat:
        xs = list(lat)
        b.bar(
            [f"{x}\np50" for x in xs] + [f"{x}\np99" for x in xs],
            [lat[x]["p50_ms"] for x in xs] + [lat[x]["p99_ms"] for x in xs],
            color="#cc6677",
        )
        b.set_ylabel("ms")
        b.set_yscale("log")
        b.tick_params(axis="x", rotation=60, labelsize=7)
    b.set_title("Latency")
    fig.tight_layout()
    fig.savefig(path, dpi=100)


def add_seed_option(parser: argparse.ArgumentParser) -> None:
    """``--seed`` (default: SECURE_MIRROR_SEED, else a random one drawn by :func:`drawn_seed`)."""
    parser.add_argument(
        "--seed",
        type=int,
        default=int(os.environ.get("SECURE_MIRROR_SEED", "0")) or None,
        help="the data and run-order seed (default: random, printed)",
    )


def add_sandbox_option(parser: argparse.ArgumentParser) -> None:
    """``--sandbox DIR``: a running sandbox to use and leave running (default: SECURE_MIRROR_TEST_SANDBOX, else a
    fresh one the script starts and stops)."""
    parser.add_argument(
        "--sandbox",
        type=Path,
        default=os.environ.get("SECURE_MIRROR_TEST_SANDBOX") or None,
        help="a running sandbox's folder (left running); default: a fresh one",
    )


def drawn_seed(seed: int | None, given: list[str]) -> int:
    """The run's seed: ``seed``, or a random one added to ``given`` (the command's arguments, so that the command
    written into the results repeats the run); printed either way."""
    if seed is None:
        seed = random.SystemRandom().randrange(1, 2**31)
        given += ["--seed", str(seed)]
    log(f"seed {seed} (--seed {seed} or SECURE_MIRROR_SEED={seed} repeats the data and the run order)")
    return seed


def results_main(argv: list[str] | None, description: str, flag: str, name: str, run, markdown) -> int:
    """The main of a benchmark on the sandbox that writes ``<out>/<name>.{json,md}``: ``--seed``, ``--sandbox``,
    ``--out``; ``run(args, command)`` gets the command that repeats it (``scripts/bench <flag> ...``, the seed drawn
    added) and returns the result, which ``markdown`` makes readable. The result records the build the run started
    from (``build``, tests/support/provenance.py), and the report says it under its title."""
    parser = argparse.ArgumentParser(description=description)
    add_seed_option(parser)
    add_sandbox_option(parser)
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args(argv)
    stop_on_sigterm()
    given = list(argv if argv is not None else sys.argv[1:])
    args.seed = drawn_seed(args.seed, given)
    build = provenance.build()
    result = {"build": build, **run(args, " ".join(["scripts/bench", flag, *given]))}
    report = provenance.stamped(markdown(result), build)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / f"{name}.json").write_text(json.dumps(result, indent=2))
    (args.out / f"{name}.md").write_text(report)
    print(report)
    return 0


def stop_on_sigterm() -> None:
    """A SIGTERM unwinds like Ctrl-C: every contender, leftover process and the sandbox are stopped on the way out."""
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
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
    parser.add_argument("--out", type=Path, default=RESULTS)
    add_seed_option(parser)
    args = parser.parse_args(argv)
    args.records = args.records or (100_000 if args.quick else 2_000_000)
    args.repeats = args.repeats or (1 if args.quick else 3)
    if args.long_records is None:
        args.long_records = 0 if args.quick else 10_000_000
    latency_records, args.latency_rate = (1000, 200.0) if args.quick else (10_000, 1000.0)
    args.latency_records = latency_records if args.latency_records is None else args.latency_records
    if args.quick:
        args.preflight_topics = min(args.preflight_topics, 100)
    given = list(argv if argv is not None else sys.argv[1:])
    seed = drawn_seed(args.seed, given)
    result = run(args, seed)
    command = ("scripts/bench " + " ".join(given)).strip()
    result["command"] = command
    args.out.mkdir(parents=True, exist_ok=True)
    stem = "quick" if args.quick else "full"
    report = provenance.stamped(markdown(result, command), result["build"])
    (args.out / f"{stem}.json").write_text(json.dumps(result, indent=2))
    (args.out / f"{stem}.md").write_text(report)
    chart(result, args.out / f"{stem}.png")
    print(report)
    return 0


if __name__ == "__main__":
    sys.exit(main())
