"""Thousands of partitions (issue 26): the mirror's cost as the partition count grows, beside MirrorMaker 2 and the
copy limit, on the sandbox.

    scripts/bench --scale [--partitions-list 1000,5000] [--topics-list 1,200] [--records N] [--tasks T] [--seed S]
                          [--contenders copy_limit,mirrormaker2,...] [--repeats R] [--timeout SECONDS] [--out DIR]
                          [--warm-ups N] [--read-ahead-kb KB] [--jfr DIR]

For every size (each partition count over each topic count: one topic of 1,000 partitions, 200 topics of 5, ...) the
source is loaded with the same N records (varied JSON values, seeded, spread over the topics), and every contender
copies them into freshly created LogAppendTime target topics, ``--repeats`` times, in an order shuffled anew for each
repeat (seeded: the seed is printed and written in the command). The contenders are the table of
``benchmarks/contenders.py``, shared with ``scripts/bench``, at equal parallelism T: the copy limit (T loops),
MirrorMaker 2 without and with exactly-once (``tasks.max`` T), and the job (``local[T]``; with the mirror's source
``mirror.spark.tasks: T``) with ``at_least_once`` and ``exactly_once``, on its own source and (when named) on Spark's
Kafka source. A contender writing in transactions has finished when a read_committed reader of the target sees all N
records (``benchmarks/committed.py``, the same count as ``scripts/bench``'s). Per run, from a measurement each (see
``benchmarks/scale_probes.py``):
records/s start to end and steady (the target's append times between 10% and 90% of N), CPU seconds per million
records of its processes and of the brokers, the time to the first record on the target, the peak used heap of its
JVMs, the peak count of its established connections to each broker, the KDC's AS_REQ and TGS_REQ lines of its
principals while it ran, and for the job Spark's time per phase of each micro-batch (its metrics file). A contender
that has not finished within ``--timeout`` seconds is recorded with the records it got onto the target, and stopped.
Before the measured runs of a size, ``--warm-ups`` unmeasured copy-limit runs (default 1; their figures are kept
apart, and the report says how the first measured run compares with its own other repeats). Per contender and size,
each figure's median, minimum and maximum over its finished runs
(``scale_report.summarize``). The disk under the sandbox reads ahead 128 KiB during the run (``--read-ahead-kb``,
``benchmarks/read_ahead.py``, NOTES section 16), and ``--jfr`` keeps Flight Recordings of every run (:class:`Recording`).
Results: ``<out>/scale.{json,md}`` (the tables generated from the json, with the command
and seed).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from benchmarks import bench, committed, contenders, load, read_ahead
from benchmarks import scale_probes as probes
from benchmarks.scale_report import markdown, summarize
from secure_mirror.kafka import admin_ops
from secure_mirror.sandbox import Sandbox, procs
from tests.support import provenance

POLL_SECONDS = 0.5  # how often the target's end offsets are asked (one ListOffsets round over all partitions)
QUIET_CPU = 0.1  # the brokers are quiet when together they used less than this share of a CPU ...
QUIET_SECONDS = 3  # ... over each of this many seconds in a row
SETTLE_LIMIT = 120.0  # seconds a contender waits at most for quiet brokers (then it starts, the wait recorded)
DELETING = "-delete"  # how a broker renames a deleted partition's folder until it removes it
EXIT_GRACE = 15.0  # seconds a contender that exited may still take to show its last records
WARM_UP = "copy_limit"  # what runs unmeasured after each size's load (--warm-ups), the quickest to copy it all


def log(text: str) -> None:
    bench.log(f"scale: {text}")


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
        self.bench = bench.Bench(sb, work, args.records, 0, seed)  # its profiles, grants, MirrorMaker 2 clean-up
        self.records, self.runs = args.records, 0
        self.sources: dict[str, int] = {}
        self.ports = {side: {p for p in (s.port, s.ssl_port, s.plaintext_port) if p} for side, s in sb.sides.items()}
        self.principals = {s.mirror_principal for s in sb.sides.values()}
        self.kdc_log = sb.kdc().log
        self.copier: Path | None = None
        self.data = [sb.broker(side).base / "data" for side in sb.sides]
        for side in sb.sides:  # a deleted topic's files go within seconds, not a minute later in the next run
            load.set_on_brokers(self.conf(side), "log.segment.delete.delay.ms", "1000")

    @property
    def targets(self) -> dict[str, int]:
        return {bench.target_of(t): p for t, p in self.sources.items()}

    def conf(self, side: str) -> dict:
        return self.sb.client_conf(side, "admin")

    # ---- a size -------------------------------------------------------------------------------------------------
    def set_up(self, partitions: int, topics: int) -> dict[str, Path]:
        """Create and load the source topics of a size; the files of its contenders (``bench.prepare``), granted."""
        self.sources = topic_names(partitions, topics)
        self.bench.topic = f"scale.p{partitions}.t{topics}"  # names the profile files
        include = re.escape(self.bench.topic) + r"\..*"

        def topics_of_size(data: dict) -> None:
            data["mirror"]["topics"] = {"include": include}

        names = [
            *self.args.contenders,
            *([WARM_UP] if self.args.warm_ups and WARM_UP not in self.args.contenders else []),
        ]
        files = bench.prepare(self.bench, names, self.args.tasks, topics_of_size)
        admin_ops.create_topics(self.conf("source"), self.sources, timeout=120)
        log(f"loading {self.records} records into {topics} topic(s) of {partitions} partitions in all")
        self.load_seconds = load.produce_load(
            self.conf("source"), list(self.sources), self.records, seed=self.args.seed
        )
        return files

    def tear_down(self) -> None:
        bench.delete_and_wait(self.conf("source"), list(self.sources))
        bench.delete_and_wait(self.conf("target"), list(self.targets))
        self.bench.forget_mirrormaker2()

    def fresh_targets(self) -> None:
        """New target topics whose records carry the target's append time (the steady rate's clock)."""
        conf = self.conf("target")
        bench.delete_and_wait(conf, list(self.targets))
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
        before = bench.broker_cpu(self.sb)
        while not quiet(used) and time.monotonic() - started < SETTLE_LIMIT:
            time.sleep(1.0)
            now = bench.broker_cpu(self.sb)
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
        return load.end_offset_sum(self.conf("target"), self.targets)

    # ---- a contender ----------------------------------------------------------------------------------------------
    def contender(self, name: str, files: dict[str, Path]) -> dict:
        contender = contenders.CONTENDERS[name]
        if contender.runs == "copy_limit":
            if self.copier is None:
                self.copier = bench.compile_copy_limit(self.work)
            argv = bench.copy_limit_argv(
                self.copier, files[name], list(self.sources), self.args.tasks, contender.jvm_options
            )
            return self.measure(name, argv)
        if contender.runs == "mirrormaker2":
            self.bench.forget_mirrormaker2()
            return self.measure(name, bench.mirrormaker2_argv(files[name]), contender.exactly_once)
        self.bench.warm_class_cache(files[name], contender.spark_conf_keys())
        run_dir = self.work / f"run-{name}-{self.runs}"
        argv = self.bench.job_argv(files[name], run_dir, "--until-caught-up")
        prefix = bench.exactly_once_prefix(files[name])
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
        brokers_before, load_average = bench.broker_cpu(self.sb), os.getloadavg()[0]
        wall_start = time.time()
        with open(log_file, "w") as fh:
            started = time.monotonic()
            env = recording.environment() if recording else None
            proc = subprocess.Popen(
                argv, stdout=fh, stderr=subprocess.STDOUT, cwd=bench.REPO, start_new_session=True, env=env
            )
        sampler = probes.Sampler(proc.pid, self.ports)
        sampler.start()
        try:
            end = self.wait(proc, started, reader)
            own = bench.tree_cpu_seconds(proc.pid) if proc.poll() is None else 0.0
            end["cpu_seconds"] = max(own, sampler.cpu_seconds)  # the sampler's last reading if it is gone
            end["broker_cpu_seconds"] = bench.broker_cpu(self.sb) - brokers_before
        finally:
            if recording:
                recording.dump_brokers()
            sampler.stop()
            bench.stop(proc)
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
            figures.update(bench.job_phases(metrics, wall_start, wall_start + end["seconds"], figures["records"]))
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
            t10, t90 = load.read_append_times(
                self.conf("target"), list(self.targets), [int(0.1 * count), int(0.9 * count)]
            )
            out["steady_records_per_second"] = 0.8 * count / max((t90 - t10) / 1000, 1e-3)
        return out


class Recording:
    """``--jfr``: Java Flight Recordings (``settings=profile``: CPU samples every 10-20 ms, and where threads waited
    10 ms or more) of one run into ``folder``: of each JVM the contender starts (``JAVA_TOOL_OPTIONS`` in its
    environment, :func:`bench.jfr_options`; a file per JVM, written when it exits, as the harness stops it) and of
    both brokers (started with ``jcmd`` before the wait for quiet brokers, dumped when the target holds everything;
    their samples are put at safepoints, as a running JVM cannot be given ``DebugNonSafepoints``). For finding why a
    run was slow; the recordings cost the run some CPU, so their runs' figures are not for comparison with runs
    without."""

    NAME = "secure-mirror-scale"

    def __init__(self, folder: Path, brokers: dict[str, int]):
        self.folder, self.brokers = folder, brokers
        folder.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        folder.parent.chmod(0o700)  # a recording holds the JVM's environment and system properties: the user's only
        folder.mkdir(mode=0o700, exist_ok=True)
        for pid in brokers.values():
            jcmd(pid, "JFR.stop", f"name={self.NAME}", quiet=True)  # one a failed run left running
            jcmd(pid, "JFR.start", f"name={self.NAME}", "settings=profile")

    def environment(self) -> dict[str, str]:
        options = bench.jfr_options(self.folder)
        return {
            **os.environ,
            "JAVA_TOOL_OPTIONS": " ".join(filter(None, [os.environ.get("JAVA_TOOL_OPTIONS"), *options])),
        }

    def dump_brokers(self) -> None:
        for side, pid in self.brokers.items():
            jcmd(pid, "JFR.dump", f"name={self.NAME}", f"filename={self.folder / f'broker-{side}.jfr'}")
            jcmd(pid, "JFR.stop", f"name={self.NAME}")


def jcmd(pid: int, *command: str, quiet: bool = False) -> None:
    """Run a diagnostic command in JVM ``pid``; a failure is logged (unless ``quiet``), never raised."""
    done = subprocess.run(["jcmd", str(pid), *command], capture_output=True, text=True, timeout=60)
    if done.returncode and not quiet:
        log(f"jcmd {pid} {' '.join(command)} failed: {(done.stdout + done.stderr).strip()[:300]}")


def quiet(used: list[float]) -> bool:
    """Whether the brokers are quiet: in each of the last ``QUIET_SECONDS`` one-second samples (``used``: CPU
    seconds of both brokers per sample, oldest first) they used less than ``QUIET_CPU`` of a CPU."""
    return len(used) >= QUIET_SECONDS and all(u < QUIET_CPU for u in used[-QUIET_SECONDS:])


def run_size(scale: Scale, partitions: int, topics: int, shuffle: random.Random, done: Callable[[dict], None]) -> dict:
    """Every contender ``--repeats`` times over one size's source (loaded once), in a new shuffled order each
    repeat; ``done`` gets the size's result after each repeat (what is measured so far is written)."""
    files = scale.set_up(partitions, topics)
    names, repeats = scale.args.contenders, scale.args.repeats
    out: dict = {"partitions": partitions, "topics": topics, "records": scale.records, "orders": []}
    out["load_seconds"], out["runs"] = scale.load_seconds, {name: [] for name in names}
    try:
        out["warm_up"] = [warm_up(scale, files) for _ in range(scale.args.warm_ups)]
        for repeat in range(repeats):
            order = shuffle.sample(names, len(names))
            out["orders"].append(order)
            for name in order:
                log(f"{partitions} partitions over {topics} topic(s), repeat {repeat + 1}/{repeats}: {name}")
                figures = attempt(scale, name, files)
                out["runs"][name].append(figures)
                log(f"{name}: {json.dumps({k: v for k, v in figures.items() if not isinstance(v, dict)})[:600]}")
            out["summary"] = {name: summarize(runs) for name, runs in out["runs"].items()}
            done(out)
    finally:
        scale.tear_down()
    return out


def warm_up(scale: Scale, files: dict[str, Path]) -> dict:
    """One unmeasured run of the copy limit after a size's load: the first contender after a load ran at 0.66x to
    0.79x its own other repeats in four of the six sizes measured before this warm-up (the brokers' first copy of the
    size; ``scale_report.first_after_load`` says it for every results file). Its figures are kept, apart."""
    log(f"warm-up: one unmeasured {WARM_UP} run")
    return {k: v for k, v in attempt(scale, WARM_UP, files).items() if not isinstance(v, dict)}


def attempt(scale: Scale, name: str, files: dict[str, Path]) -> dict:
    """One run of contender ``name``: its figures, or the error that stopped it (recorded; the other runs go on)."""
    try:
        return scale.contender(name, files)
    except Exception as exc:  # noqa: BLE001 - recorded; the other contenders still run
        return {"error": f"{type(exc).__name__}: {str(exc)[:500]}"}


def run(args: argparse.Namespace, command: str) -> dict:
    result = {
        "build": provenance.build(),  # the checkout the run starts from: the code it measures
        "command": command,
        "seed": args.seed,
        "machine": provenance.machine(),
        "parameters": {
            "records": args.records,
            "partitions_list": args.partitions_list,
            "topics_list": args.topics_list,
            "tasks": args.tasks,
            "timeout_seconds": args.timeout,
            "contenders": args.contenders,
            "repeats": args.repeats,
            "warm_ups": args.warm_ups,
            "flight_recordings": bool(args.jfr),
            "values": "varied JSON, about 1 KiB (a third to twice)",
            "sample_interval_seconds": 1.0,
        },
        "sizes": [],
    }
    work = Path(tempfile.mkdtemp(prefix="secure-mirror-scale-"))
    mounts = Path("/proc/mounts").read_text()
    result["machine"]["sandbox_file_system"] = file_system(mounts, work)
    keep = True
    try:
        with read_ahead.set_for(work, args.read_ahead_kb, mounts) as disk:
            result["machine"]["sandbox_disk"] = disk
            log(f"the sandbox's disk: {json.dumps(disk)}")
            keep = run_sizes(args, result, work)
    finally:
        if keep:
            log(f"the contenders' logs are kept in {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)
    return result


def run_sizes(args: argparse.Namespace, result: dict, work: Path) -> bool:
    """Every size on one sandbox, into ``result``; whether a run did not finish (its logs are kept)."""
    shuffle = random.Random(args.seed)
    log("starting the sandbox")
    sb = Sandbox.up(work / "sandbox")
    try:
        scale = Scale(sb, work, args, args.seed)
        for partitions in args.partitions_list:
            for topics in args.topics_list:
                measured = result["sizes"][:]

                def so_far(size: dict, measured: list = measured) -> None:  # should a later run fail
                    write({**result, "class_cache": scale.bench.class_archive, "sizes": [*measured, size]}, args.out)

                result["sizes"].append(run_size(scale, partitions, topics, shuffle, so_far))
                result["class_cache"] = scale.bench.class_archive
    finally:
        load._ADMINS.clear()  # the kept admin clients go before the brokers they talk to
        sb.down()
    return any(not r.get("finished") for s in result["sizes"] for runs in s["runs"].values() for r in runs)


def file_system(mounts: str, folder: Path) -> str:
    """The type of the file system (``ext4``, ``tmpfs``, ...) that holds ``folder``, from ``/proc/mounts``'s text:
    the brokers' logs are there (the sandbox's folder is in the work folder, under ``TMPDIR``), and what a fresh
    partition's first index entry costs depends on it (NOTES section 8)."""
    return read_ahead.mount_of(mounts, folder)[1]


def write(result: dict, out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    (out / "scale.json").write_text(json.dumps(result, indent=2))
    (out / "scale.md").write_text(provenance.stamped(markdown(result), result["build"]))


def numbers(text: str) -> list[int]:
    return [int(part) for part in text.split(",") if part.strip()]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--partitions-list", type=numbers, default=[1000, 5000], help="partition counts (1000,5000)")
    parser.add_argument("--topics-list", type=numbers, default=[1, 200], help="topic counts they are spread over")
    parser.add_argument("--records", type=int, default=300_000, help="records per size")
    parser.add_argument("--tasks", type=int, default=bench.TASK_SLOTS, help="the job's tasks, MirrorMaker 2's too")
    parser.add_argument(
        "--contenders", type=contenders.names, default=contenders.DEFAULT, help=", ".join(contenders.CONTENDERS)
    )
    parser.add_argument("--repeats", type=int, default=1, help="runs of every contender per size, each in a new order")
    parser.add_argument("--timeout", type=float, default=600.0, help="seconds a contender may take per size")
    parser.add_argument(
        "--warm-ups", type=int, default=1, help="unmeasured copy-limit runs after each size's load (0: none)"
    )
    parser.add_argument("--out", type=Path, default=bench.RESULTS)
    parser.add_argument(
        "--read-ahead-kb",
        type=int,
        default=read_ahead.LINUX_DEFAULT_KB,
        help="the sandbox disk's read-ahead during the run, put back after (0: as it is; NOTES section 16)",
    )
    parser.add_argument(
        "--jfr", type=Path, help="a folder for Flight Recordings of every run's JVMs and the brokers (diagnosis)"
    )
    bench.add_seed_option(parser)
    args = parser.parse_args(argv)
    if args.jfr and any(c in str(args.jfr) for c in " ,="):
        parser.error("--jfr: a folder whose path has no space, comma or '=' (it goes into a JVM option)")
    bench.stop_on_sigterm()
    given = list(argv if argv is not None else sys.argv[1:])
    args.seed = bench.drawn_seed(args.seed, given)
    result = run(args, " ".join(["scripts/bench", "--scale", *given]))
    write(result, args.out)
    print(provenance.stamped(markdown(result), result["build"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
