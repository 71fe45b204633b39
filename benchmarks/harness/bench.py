"""One benchmark's work on a sandbox (:class:`Bench`): the source topic it loads, each contender's profile and
rendered folder, their grants, a fresh LogAppendTime target topic per run, and a contender run to the end on the same
clocks as every other (:meth:`Bench.wait_for_target`: start to end, steady, CPU per record); :func:`prepare` makes
the files of several contenders at once."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

import yaml

from benchmarks.harness import admin, committed, contenders, load, reading
from benchmarks.harness.cli import log
from benchmarks.harness.cpu import broker_cpu, tree_cpu_seconds
from benchmarks.harness.launch import (
    REPO,
    TASK_SLOTS,
    compile_copy_limit,
    copy_limit_argv,
    exactly_once_prefix,
    job_phases,
    mirrormaker2_argv,
    stop,
    target_of,
    task_slots,
)
from secure_mirror.kafka import admin_ops
from secure_mirror.profile import load_profile
from secure_mirror.render import render_all
from secure_mirror.run import class_cache
from secure_mirror.sandbox import Sandbox

SOURCE_TOPIC = "bench.data"


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
        """``profile`` rendered into the bench's work folder, over what an earlier call rendered there (``scripts/bench
        --wan`` renders the same profile at each link)."""
        out = self.work / f"rendered-{profile.stem}"
        shutil.rmtree(out, ignore_errors=True)
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
        admin.delete_and_wait(conf, [topic])
        for _ in range(40):
            try:
                admin_ops.create_topics(conf, {topic: self.partitions}, config=config)
                return
            except Exception:  # noqa: BLE001 - the broker may still be deleting the old one
                time.sleep(0.5)
        raise RuntimeError(f"could not re-create {topic} on the target")

    def target_count(self, topic: str | None = None) -> int:
        return reading.end_offsets(self.sb.client_conf("target", "admin"), topic or self.target_topic)

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
        admin.forget_groups(self.sb.client_conf("target", "admin"), group_prefix)

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
        t10, t90 = reading.append_times(
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
            admin.delete_and_wait(
                conf,
                [
                    t
                    for t in admin_ops.list_topics(conf)
                    if t.startswith("mm2-") or t.endswith(".internal") or t == "heartbeats"
                ],
            )


def exactly_once(data: dict) -> None:
    data["mirror"].setdefault("delivery", {})["guarantee"] = "exactly_once"


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
