"""One size's source topics and the measured runs of its contenders on one sandbox (:class:`Scale`): set up and torn
down, the brokers left quiet before each run, a contender run to the end or to the time limit while the probes
sample it, and the figures read after it."""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import time
from pathlib import Path

from benchmarks.harness import admin, cli, committed, contenders, launch, load, reading
from benchmarks.harness.bench import Bench, prepare
from benchmarks.harness.cpu import broker_cpu, tree_cpu_seconds
from benchmarks.scale import probes
from benchmarks.scale.recording import Recording
from benchmarks.scale.sampler import Sampler
from secure_mirror.kafka import admin_ops
from secure_mirror.sandbox import Sandbox, procs

POLL_SECONDS = 0.5  # how often the target's end offsets are asked (one ListOffsets round over all partitions)
QUIET_CPU = 0.1  # the brokers are quiet when together they used less than this share of a CPU ...
QUIET_SECONDS = 3  # ... over each of this many seconds in a row
SETTLE_LIMIT = 120.0  # seconds a contender waits at most for quiet brokers (then it starts, the wait recorded)
DELETING = "-delete"  # how a broker renames a deleted partition's folder until it removes it
EXIT_GRACE = 15.0  # seconds a contender that exited may still take to show its last records
WARM_UP = "copy_limit"  # what runs unmeasured after each size's load (--warm-ups), the quickest to copy it all

log = cli.prefixed("scale")


def topic_names(partitions: int, topics: int) -> dict[str, int]:
    """The source topics of one size: ``partitions`` spread over ``topics`` topics (the first ones one more when it
    does not divide), named ``scale.p<partitions>.t<topics>.<i>``."""
    if not 1 <= topics <= partitions:
        raise ValueError(f"{partitions} partitions cannot be spread over {topics} topics")
    width = len(str(topics - 1))
    return {
        f"scale.p{partitions}.t{topics}.{i:0{width}d}": partitions // topics + (1 if i < partitions % topics else 0)
        for i in range(topics)
    }


class Scale:
    """One size's source topics and the runs of its contenders on one sandbox."""

    def __init__(self, sb: Sandbox, work: Path, args: argparse.Namespace, seed: int):
        self.sb, self.work, self.args = sb, work, args
        self.bench = Bench(sb, work, args.records, 0, seed)  # its profiles, grants, MirrorMaker 2 clean-up
        self.records, self.runs = args.records, 0
        self.sources: dict[str, int] = {}
        self.ports = {side: {p for p in (s.port, s.ssl_port, s.plaintext_port) if p} for side, s in sb.sides.items()}
        self.principals = {s.mirror_principal for s in sb.sides.values()}
        self.kdc_log = sb.kdc().log
        self.copier: Path | None = None
        self.data = [sb.broker(side).base / "data" for side in sb.sides]
        for side in sb.sides:  # a deleted topic's files go within seconds, not a minute later in the next run
            admin.set_on_brokers(self.conf(side), "log.segment.delete.delay.ms", "1000")

    @property
    def targets(self) -> dict[str, int]:
        return {launch.target_of(t): p for t, p in self.sources.items()}

    def conf(self, side: str) -> dict:
        return self.sb.client_conf(side, "admin")

    # ---- a size -------------------------------------------------------------------------------------------------
    def set_up(self, partitions: int, topics: int) -> dict[str, Path]:
        """Create and load the source topics of a size; the files of its contenders (``harness.bench.prepare``), granted."""
        self.sources = topic_names(partitions, topics)
        self.bench.topic = f"scale.p{partitions}.t{topics}"  # names the profile files
        include = re.escape(self.bench.topic) + r"\..*"

        def topics_of_size(data: dict) -> None:
            data["mirror"]["topics"] = {"include": include}

        names = [
            *self.args.contenders,
            *([WARM_UP] if self.args.warm_ups and WARM_UP not in self.args.contenders else []),
        ]
        files = prepare(self.bench, names, self.args.tasks, topics_of_size)
        admin_ops.create_topics(self.conf("source"), self.sources, timeout=120)
        log(f"loading {self.records} records into {topics} topic(s) of {partitions} partitions in all")
        self.load_seconds = load.produce_load(
            self.conf("source"), list(self.sources), self.records, seed=self.args.seed
        )
        return files

    def tear_down(self) -> None:
        admin.delete_and_wait(self.conf("source"), list(self.sources))
        admin.delete_and_wait(self.conf("target"), list(self.targets))
        self.bench.forget_mirrormaker2()

    def fresh_targets(self) -> None:
        """New target topics whose records carry the target's append time (the steady rate's clock)."""
        conf = self.conf("target")
        admin.delete_and_wait(conf, list(self.targets))
        for _ in range(60):
            present = admin_ops.list_topics(conf)
            missing = {t: p for t, p in self.targets.items() if t not in present}
            if not missing:
                return
            try:
                admin_ops.create_topics(conf, missing, timeout=120, config={"message.timestamp.type": "LogAppendTime"})
            except Exception:  # noqa: BLE001 - the broker may still be deleting the old ones
                time.sleep(0.5)
        raise RuntimeError("could not re-create the target topics")

    def settle(self) -> dict:
        """Before a contender: what the load or the contender before it left to do is done, so that it does not run
        on this one's clock (the first contender after a load ran slower, the brokers still busy with the load). The
        brokers have removed the folders of the topics deleted before (the last run's targets: 1,000 partitions'
        files removed in a burst during another contender's run made it twice as slow), the page cache is written out
        (``sync``: the dirty pages of the load or of the last run's target), then the brokers' CPU is sampled every
        second until :func:`quiet`; at most ``SETTLE_LIMIT`` seconds for each wait."""
        started = time.monotonic()
        while self.deleting() and time.monotonic() - started < SETTLE_LIMIT:
            time.sleep(1.0)
        os.sync()
        used: list[float] = []
        before = broker_cpu(self.sb)
        while not quiet(used) and time.monotonic() - started < SETTLE_LIMIT:
            time.sleep(1.0)
            now = broker_cpu(self.sb)
            used.append(now - before)
            before = now
        return {"settle_seconds": time.monotonic() - started, "brokers_cpu_share_before": used[-1] if used else None}

    def deleting(self) -> int:
        """Partition folders the brokers have still to remove (of topics deleted, renamed ``*-delete``)."""
        return sum(1 for folder in self.data for child in folder.iterdir() if child.name.endswith(DELETING))

    def source_folders(self) -> list[Path]:
        """The source broker's folders of this size's partitions."""
        data = self.sb.broker("source").base / "data"
        return [data / f"{topic}-{p}" for topic, count in self.sources.items() for p in range(count)]

    def brokers(self) -> dict[str, int]:
        return {side: pid for side in self.sb.sides if (pid := self.sb.state["pids"].get(side))}

    def held(self) -> int:
        return reading.end_offset_sum(self.conf("target"), self.targets)

    # ---- a contender ----------------------------------------------------------------------------------------------
    def contender(self, name: str, files: dict[str, Path]) -> dict:
        contender = contenders.CONTENDERS[name]
        if contender.runs == "copy_limit":
            if self.copier is None:
                self.copier = launch.compile_copy_limit(self.work)
            argv = launch.copy_limit_argv(
                self.copier, files[name], list(self.sources), self.args.tasks, contender.jvm_options
            )
            return self.measure(name, argv)
        if contender.runs == "mirrormaker2":
            self.bench.forget_mirrormaker2()
            return self.measure(name, launch.mirrormaker2_argv(files[name]), contender.exactly_once)
        self.bench.warm_class_cache(files[name], contender.spark_conf_keys())
        run_dir = self.work / f"run-{name}-{self.runs}"
        argv = self.bench.job_argv(files[name], run_dir, "--until-caught-up")
        prefix = launch.exactly_once_prefix(files[name])
        if prefix:
            self.bench.forget_groups(prefix)  # earlier positions would make the sink skip everything
        return self.measure(name, argv, bool(prefix), run_dir / "metrics.jsonl")

    def measure(self, name: str, argv: list[str], transactional: bool = False, metrics: Path | None = None) -> dict:
        self.fresh_targets()
        recording = Recording(self.args.jfr / f"{self.runs}-{name}", self.brokers()) if self.args.jfr else None
        settled = self.settle()
        reader = committed.ReadCommitted(self.conf("target"), self.targets) if transactional else None
        log_file = self.work / f"{name}-{self.runs}.log"
        self.runs += 1
        kdc_from = self.kdc_log.stat().st_size
        cached = probes.cached_share([log for folder in self.source_folders() for log in folder.glob("*.log")])
        brokers_before, load_average = broker_cpu(self.sb), os.getloadavg()[0]
        wall_start = time.time()
        with open(log_file, "w") as fh:
            started = time.monotonic()
            env = recording.environment() if recording else None
            proc = subprocess.Popen(
                argv, stdout=fh, stderr=subprocess.STDOUT, cwd=launch.REPO, start_new_session=True, env=env
            )
        sampler = Sampler(proc.pid, self.ports)
        sampler.start()
        try:
            end = self.wait(proc, started, reader)
            own = tree_cpu_seconds(proc.pid) if proc.poll() is None else 0.0
            end["cpu_seconds"] = max(own, sampler.cpu_seconds)  # the sampler's last reading if it is gone
            end["broker_cpu_seconds"] = broker_cpu(self.sb) - brokers_before
        finally:
            if recording:
                recording.dump_brokers()
            sampler.stop()
            launch.stop(proc)
            left = sampler.stop_leftovers()
            if reader:
                reader.close()
        figures = self.figures(end)
        figures.update(sampler.figures(), load_average_at_start=load_average, log=log_file.name)
        first = end["first_record_seconds"]
        to_first = probes.cpu_before(sampler.timeline, None if first is None else started + first)
        if to_first is not None and figures["records"]:
            figures["cpu_seconds_to_first_record"] = to_first
            figures["cpu_seconds_per_million_after_first_record"] = (
                (end["cpu_seconds"] - to_first) / figures["records"] * 1e6
            )
        figures.update(settled, source_log_cached_share=cached)
        figures["kdc"] = probes.kdc_requests(procs.log_since(self.kdc_log, kdc_from), self.principals)
        if left:
            figures["processes_left_running"] = left
        if metrics is not None:
            lines = probes.metrics_lines(metrics)
            figures["batches"] = len(lines)
            figures["batch_phases"] = probes.batch_phases(lines)
            figures.update(launch.job_phases(metrics, wall_start, wall_start + end["seconds"], figures["records"]))
        return figures

    def wait(self, proc: subprocess.Popen, started: float, reader: committed.ReadCommitted | None) -> dict:
        """Until the target holds all N records (written in transactions: a read_committed reader sees them all,
        ``benchmarks/committed.py``), the time limit passes, or the contender has exited and nothing more arrives;
        never raises for a contender that does not finish."""
        first, exited = None, None
        while True:
            now = time.monotonic()  # asked after this moment: what is counted was on the target by then
            held = self.held()
            if held and first is None:
                first = now
            end = {"seconds": now - started, "first_record_seconds": None if first is None else first - started}
            seen = committed.on_target(self.records, held, reader)
            if seen >= self.records:
                return {**end, "finished": True, "held": held, "committed": seen if reader else None}
            code = proc.poll()
            exited = exited or (now if code is not None else None)
            why = None
            if now - started > self.args.timeout:
                why = f"not finished within the time limit of {self.args.timeout:.0f} s"
            elif exited is not None and now - exited > EXIT_GRACE:
                why = f"exited with status {code} before the target held every record"
            if why:
                return {**end, "finished": False, "why": why, "held": held, "committed": reader and reader.seen()}
            time.sleep(POLL_SECONDS)

    def figures(self, end: dict) -> dict:
        """The run's figures over the records it got onto the target (all N when it finished)."""
        count = self.records if end["finished"] else (end["committed"] if end["committed"] is not None else end["held"])
        out = {
            "finished": end["finished"],
            **({"why": end["why"]} if not end["finished"] else {}),
            "records": count,
            "records_on_target_end_offsets": end["held"],
            "seconds": end["seconds"],
            "first_record_seconds": end["first_record_seconds"],
            "records_per_second": count / end["seconds"],
            "cpu_seconds": end["cpu_seconds"],
            "broker_cpu_seconds": end["broker_cpu_seconds"],
        }
        if count:
            out["cpu_seconds_per_million"] = end["cpu_seconds"] / count * 1e6
            out["broker_cpu_seconds_per_million"] = end["broker_cpu_seconds"] / count * 1e6
        if count >= 10:
            t10, t90 = reading.read_append_times(
                self.conf("target"), list(self.targets), [int(0.1 * count), int(0.9 * count)]
            )
            out["steady_records_per_second"] = 0.8 * count / max((t90 - t10) / 1000, 1e-3)
        return out


def quiet(used: list[float]) -> bool:
    """Whether the brokers are quiet: in each of the last ``QUIET_SECONDS`` one-second samples (``used``: CPU
    seconds of both brokers per sample, oldest first) they used less than ``QUIET_CPU`` of a CPU."""
    return len(used) >= QUIET_SECONDS and all(u < QUIET_CPU for u in used[-QUIET_SECONDS:])
