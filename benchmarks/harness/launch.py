"""The contenders' command lines and processes: the copy limit (``benchmarks/CopyLimit.java``, compiled against the
Kafka jars), MirrorMaker 2 in dedicated mode, the JVM options of a Flight Recording, a contender stopped, and what the
job's profile and metrics file say (its transactional prefix, its start-up apart from its steady state)."""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path

from secure_mirror import paths
from secure_mirror.profile import load_profile

REPO = Path(__file__).resolve().parents[2]
TASK_SLOTS = 2  # the job's master is local[2]; MirrorMaker 2 and the copy limit get as many tasks


def target_of(topic: str) -> str:
    return f"src.{topic}"  # the sandbox profile's rename rule: <source alias>.<topic>


def task_slots(master: str) -> int:
    """The job's task slots: ``local[N]`` -> N (``local`` -> 1, ``local[*]`` -> the CPUs)."""
    found = re.fullmatch(r"local(?:\[(\d+|\*)\])?", master)
    if not found:
        raise ValueError(f"the benchmark runs the job locally, not on {master}")
    return (os.cpu_count() or 1) if found.group(1) == "*" else int(found.group(1) or 1)


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
