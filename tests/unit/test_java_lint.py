"""Every Java file of ours compiles without one javac lint warning: ``-Xlint:all -Werror``, less ``[path]`` (the
manifests of pyspark's derby and scala-compiler jars name jars pyspark does not ship; nothing about our code).

scripts/setup compiles the sink so, and secure_mirror/sandbox/sink_jar.py the same way. The tools in jvm/tools run
through the java launcher's source-file mode (or, for HdfsCheckpointRead and CredentialRead, a javac at run time on the
user's machine), and benchmarks/CopyLimit.java through a plain javac: none of those take lint flags, so this test
compiles each of them with the flags, against the class path it runs with."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pyspark
import pytest

from secure_mirror import paths
from secure_mirror.sandbox.sink_jar import JAVAC_LINT, job_kafka_clients
from secure_mirror.sandbox.sink_jar import SOURCES as SINK_SOURCES

REPO = paths.REPO_ROOT
TOOLS = REPO / "jvm" / "tools"
# Each Java program and the jars it runs with: "kafka" (.deps/kafka/lib) or "pyspark" (pyspark's jars: Spark and
# Hadoop's client).
PROGRAMS = {
    "ClientStart.java": "kafka",
    "JaasParse.java": "kafka",
    "JavaClientProbe.java": "kafka",
    "GroupOffsets.java": "kafka",
    "NameRules.java": "kafka",
    "CredentialCreate.java": "pyspark",
    "CredentialRead.java": "pyspark",
    "HadoopConfRead.java": "pyspark",
    "HdfsCheckpointRead.java": "pyspark",
    "ReadBack.java": "pyspark",
}


def _javac() -> str:
    return str(Path(paths.java_executable()).with_name("javac"))


def _class_path(jars: str) -> str:
    if jars == "kafka":
        return paths.kafka_classpath()
    return f"{Path(pyspark.__file__).parent / 'jars'}/*"


def _lint(sources: list[Path], class_path: str, out: Path) -> None:
    res = subprocess.run(
        [_javac(), *JAVAC_LINT, "--release", "17", "-d", str(out), "-cp", class_path, *map(str, sources)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert res.returncode == 0, res.stderr[-4000:]


def test_every_tool_is_listed():
    assert sorted(p.name for p in TOOLS.glob("*.java")) == sorted(PROGRAMS)


@pytest.mark.jvm
@pytest.mark.parametrize("jars", ["kafka", "pyspark"])
def test_the_tools_compile_without_a_lint_warning(tmp_path, jars):
    sources = [TOOLS / name for name, needs in PROGRAMS.items() if needs == jars]
    if jars == "kafka":
        sources.append(REPO / "benchmarks" / "CopyLimit.java")  # bench.py compiles it against the Kafka jars
    _lint(sources, _class_path(jars), tmp_path)


@pytest.mark.jvm
def test_the_sink_and_source_compile_without_a_lint_warning(tmp_path):
    kafka_clients = job_kafka_clients()
    _lint(sorted(SINK_SOURCES.glob("*/*.java")), f"{_class_path('pyspark')}:{kafka_clients}", tmp_path)
