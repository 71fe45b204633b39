"""Check programs (tests/support/*Check.java) compiled with some of the mirror's sink sources, as scripts/setup
compiles the sink (secure_mirror/sandbox/sink_jar.py), and run against pyspark's jars and the job's kafka-clients."""

from __future__ import annotations

import subprocess
from collections.abc import Sequence
from pathlib import Path

import pyspark

from secure_mirror import paths
from secure_mirror.sandbox.sink_jar import JAVAC_LINT, job_kafka_clients


def run_check(
    folder: Path, check: Path, sources: list[Path], main_class: str, *args: str, jvm_args: Sequence[str] = ()
) -> list[str]:
    """Compile a check program (tests/support/*Check.java) with some of the sink's ``sources`` as setup compiles them,
    against pyspark's jars and the job's kafka-clients, run ``main_class`` with ``args`` (and the JVM's own
    ``jvm_args``); its output's lines."""
    kafka_clients = job_kafka_clients()
    class_path = f"{Path(pyspark.__file__).parent / 'jars' / '*'}:{kafka_clients}"
    javac = str(Path(paths.java_executable()).with_name("javac"))
    built = subprocess.run(
        [javac, *JAVAC_LINT, "--release", "17", "-d", str(folder), "-cp", class_path, *map(str, [*sources, check])],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert built.returncode == 0, built.stderr[-4000:]
    ran = subprocess.run(
        [paths.java_executable(), *jvm_args, "-cp", f"{folder}:{class_path}", main_class, *args],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert ran.returncode == 0, ran.stderr[-4000:]
    return ran.stdout.splitlines()
