"""Where the CPU goes: Java Flight Recorder on the steady state of the job and of MirrorMaker 2.

    scripts/bench --profile [--records N] [--seed S]

Each contender copies the same backlog as in the benchmark, with JFR recording (``settings=profile``) in its JVM (the
job's driver JVM holds its local executors). Only the samples taken while the target's append times were between the
10% and 90% marks are counted: the steady state, the same window the benchmark's steady rate uses. Every sample
counts for a component (whose code is in its stack: the mirror's sink, Spark's Kafka source, the Kafka producer, ...)
and for a kind of work (what its top frames do: compression, TLS, copying, ...), and the hottest methods are listed
by their own samples. Results: ``benchmarks/results/profile.{json,md}``; what they
taught is in ``benchmarks/NOTES.md``.
"""

from __future__ import annotations

import argparse
import collections
import subprocess
import sys
import time
from pathlib import Path

from benchmarks import recordings
from benchmarks.harness import cli, provenance, reading
from benchmarks.harness.bench import SOURCE_TOPIC, Bench, setup_topic
from benchmarks.harness.launch import REPO, exactly_once_prefix, jfr_options, mirrormaker2_argv, stop
from benchmarks.harness.results import write_results
from benchmarks.harness.session import kept_on_failure
from secure_mirror.sandbox import Sandbox

# Two views of a sample. Its component: the first of these found anywhere in its stack (whose code was running or
# asked for the work: a copy made by our sink counts for the sink, the consumer's fetch under Spark's Kafka source for
# that source).
COMPONENTS = [
    ("the mirror's sink (ours)", ("securemirror.sink.",)),
    ("Spark's Kafka source (rows from records)", ("org.apache.spark.sql.kafka010.",)),
    ("MirrorMaker 2 / Connect task", ("org.apache.kafka.connect.",)),
    ("Kafka producer (sender thread, batching)", ("org.apache.kafka.clients.producer.",)),
    ("Kafka consumer (fetching, parsing)", ("org.apache.kafka.clients.consumer.",)),
    ("Spark, other (scheduling, codegen, RPC)", ("org.apache.spark.", "scala.", "py4j.")),
    ("Kafka clients, other", ("org.apache.kafka.",)),
]
# Its kind of work: the first of these its top frames meet (the frame that was running, then its callers).
KINDS = [
    ("compression (lz4)", ("net.jpountz.", "org.apache.kafka.common.compress.", "com.github.luben.zstd")),
    ("TLS and crypto", ("sun.security.", "com.sun.crypto.", "javax.crypto.", "javax.net.ssl.")),
    ("copying bytes", ("java.lang.System.arraycopy", "java.util.Arrays.copyOf", "org.apache.spark.unsafe.Platform.")),
    ("Kafka record encoding and parsing", ("org.apache.kafka.common.record.", "org.apache.kafka.common.utils.")),
    ("strings (UTF-8 coding)", ("java.lang.String", "java.lang.StringCoding", "java.lang.StringLatin1")),
    ("Spark rows", ("org.apache.spark.sql.catalyst.", "org.apache.spark.unsafe.")),
    ("headers (Kafka and Connect)", ("org.apache.kafka.common.header.", "org.apache.kafka.connect.header.")),
    ("Scala and Java collections", ("scala.collection.", "java.util.")),
    ("network I/O", ("sun.nio.", "java.nio.", "org.apache.kafka.common.network.")),
]


PROFILE_DEPTH = 48  # frames of each sample read, as results/profile.* were made


def first_match(frames: list[str], table: list[tuple[str, tuple[str, ...]]], depth: int | None = None) -> str:
    for frame in frames[:depth]:
        for name, prefixes in table:
            if frame.startswith(prefixes):
                return name
    return "other"


def component(frames: list[str]) -> str:
    for name, prefixes in COMPONENTS:
        if any(frame.startswith(prefixes) for frame in frames):
            return name
    return "JDK and other"


def kind(frames: list[str]) -> str:
    return first_match(frames, KINDS, depth=3)


def breakdown(stacks: list[list[str]], top: int = 15) -> dict:
    total = len(stacks) or 1
    components = collections.Counter(component(s) for s in stacks)
    kinds = collections.Counter(kind(s) for s in stacks)
    own = collections.Counter(s[0] for s in stacks if s)
    return {
        "samples": len(stacks),
        "components": {k: round(100 * v / total, 1) for k, v in components.most_common()},
        "kinds": {k: round(100 * v / total, 1) for k, v in kinds.most_common()},
        "hot_methods": {k: round(100 * v / total, 1) for k, v in own.most_common(top)},
    }


def recorded(b: Bench, name: str, argv: list[str], jfr: Path, transactional: bool = False) -> dict:
    """Run a contender to the end with JFR on, and break down the samples of its steady window."""
    b.fresh_target()
    log_file = b.work / f"profile-{name}.log"
    started_ms = int(time.time() * 1000) - 1000
    reader = b.reader(transactional)
    with open(log_file, "w") as fh:
        proc = subprocess.Popen(argv, stdout=fh, stderr=subprocess.STDOUT, cwd=REPO, start_new_session=True)
    try:
        deadline = time.monotonic() + max(600, b.records / 1000)
        while b.on_target(reader) < b.records:
            if proc.poll() is not None and proc.returncode != 0 or time.monotonic() > deadline:
                raise RuntimeError(f"{name} did not finish; see {log_file}")
            time.sleep(0.25)
    finally:
        stop(proc)  # SIGTERM: the JVM dumps the recording on exit
        if reader:
            reader.close()
    for _ in range(60):
        if jfr.exists() and jfr.stat().st_size:
            break
        time.sleep(1)
    t10, t90 = reading.append_times(
        b.sb.client_conf("target", "admin"), b.target_topic, [int(0.1 * b.records), int(0.9 * b.records)], started_ms
    )
    return {**breakdown(recordings.stacks(jfr, t10, t90, depth=PROFILE_DEPTH)), "window_seconds": (t90 - t10) / 1000}


JOBS = ["secure_mirror", "secure_mirror_exactly_once"]


def run(records: int, seed: int) -> dict:
    with kept_on_failure("secure-mirror-profile-") as work:
        sb = Sandbox.up(work / "sandbox")
        try:
            b = Bench(sb, work, records, 6, seed)
            files = setup_topic(b, SOURCE_TOPIC, records, ["mirrormaker2", *JOBS])
            out = {}
            mm2_jfr = work / "mm2.jfr"
            b.forget_mirrormaker2()
            log_argv = mirrormaker2_argv(files["mirrormaker2"], *jfr_options(mm2_jfr))
            out["mirrormaker2"] = recorded(b, "mirrormaker2", log_argv, mm2_jfr)
            for name in JOBS:
                jfr = work / f"{name}.jfr"

                def with_jfr(data: dict, jfr: Path = jfr) -> None:
                    data["mirror"]["spark"].setdefault("conf", {})["spark.driver.extraJavaOptions"] = " ".join(
                        jfr_options(jfr)
                    )

                argv = b.job_argv(files[name], work / f"run-profile-{name}", "--until-caught-up", edit=with_jfr)
                prefix = exactly_once_prefix(files[name])
                if prefix:
                    b.forget_groups(prefix)
                out[name] = recorded(b, name, argv, jfr, transactional=bool(prefix))
        finally:
            sb.down()
    return out


def markdown(result: dict) -> str:
    parts = [
        f"# Where the CPU goes (Java Flight Recorder)\n\nCommand: `{result['command']}`\n\n{result['records']} records "
        f"(varied JSON, about 1 KiB) over 6 partitions, on {result['machine']['cpus']} CPUs; JFR `settings=profile`, "
        "samples put where they fell (`DebugNonSafepoints`, `launch.jfr_options`); only execution samples taken "
        "while the target's append times were between the 10% and 90% marks. A sample "
        "counts for the component whose code is in its stack (ours first: a copy our sink makes is the sink's) and for "
        "the kind of work its top frames do; hot methods by their own samples.\n"
    ]
    for name, r in result["contenders"].items():
        parts.append(f"\n## {name}: {r['samples']} samples over {r['window_seconds']:.1f} s\n")
        parts.append("\n| component | % of samples |\n| --- | --- |")
        parts += [f"| {k} | {v} |" for k, v in r["components"].items()]
        parts.append("\n| kind of work (top frames) | % of samples |\n| --- | --- |")
        parts += [f"| {k} | {v} |" for k, v in r["kinds"].items()]
        parts.append("\n| hottest methods (own samples) | % |\n| --- | --- |")
        parts += [f"| `{k}` | {v} |" for k, v in r["hot_methods"].items()]
    return "\n".join(parts) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=2_000_000)
    cli.add_seed_option(parser)
    cli.add_out_option(parser)
    args = parser.parse_args(argv)
    seed = cli.drawn_seed(args.seed, [])
    build = provenance.build()  # the checkout the run starts from: the code it measures
    result = {
        "build": build,
        "command": f"scripts/bench --profile --records {args.records} --seed {seed}",
        "records": args.records,
        "machine": provenance.machine(),
        "contenders": run(args.records, seed),
    }
    print(write_results(args.out, "profile", result, markdown(result)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
