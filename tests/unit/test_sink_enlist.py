"""The sink's one reach into Kafka's producer (jvm/sink PartitionEnlister: a task's partitions enlisted in its
transaction at once) resolves against the kafka-clients jar the job runs with, and reaches the real transaction
manager: asked to add a partition for a producer that never called initTransactions, Kafka's own refusal comes back.
Against a class with no transaction manager it warns once, with the reason and the client's version, and enlists
nothing (each partition is then added as its first record is sent).

Run by tests/support/PartitionEnlisterCheck.java, compiled with the enlister (same package) as setup compiles the sink.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pyspark
import pytest

from secure_mirror import paths
from secure_mirror.sandbox.sink_jar import JAVAC_LINT, SOURCES, job_kafka_clients

pytestmark = pytest.mark.jvm
CHECK = paths.REPO_ROOT / "tests" / "support" / "PartitionEnlisterCheck.java"


def _version() -> str:
    """The version in the jar's name (kafka-clients-3.9.0.jar): what the client's AppInfoParser says of itself."""
    return job_kafka_clients().name.removeprefix("kafka-clients-").removesuffix(".jar")


def _run_check(out: Path) -> list[str]:
    slf4j = next((Path(pyspark.__file__).parent / "jars").glob("slf4j-api-*.jar"))  # the job's, for the log line
    class_path = f"{job_kafka_clients()}:{slf4j}"
    javac = str(Path(paths.java_executable()).with_name("javac"))
    sources = [str(SOURCES / "sink" / "PartitionEnlister.java"), str(CHECK)]
    built = subprocess.run(
        [javac, *JAVAC_LINT, "--release", "17", "-d", str(out), "-cp", class_path, *sources],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert built.returncode == 0, built.stderr[-4000:]
    ran = subprocess.run(
        [paths.java_executable(), "-cp", f"{out}:{class_path}", "securemirror.sink.PartitionEnlisterCheck"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert ran.returncode == 0, ran.stderr[-4000:]
    return ran.stdout.splitlines()


def test_the_enlister_reaches_the_transaction_manager_of_the_jobs_kafka_client_and_warns_once_elsewhere(tmp_path):
    lines = _run_check(tmp_path)
    assert lines[:4] == [
        "resolved true",
        "refused Cannot add partition mirror.check-0 to transaction before completing a call to initTransactions",
        "elsewhere resolved false, warned 1",
        "after two enlists, warned 1",
    ]
    assert lines[4:] == [
        f"warning secure-mirror sink: this Kafka client (kafka-clients {_version()}) has no transaction manager to "
        "enlist partitions with (java.lang.NoSuchFieldException: transactionManager); a transaction adds each "
        "partition when its first record is sent, with a round trip to the transaction coordinator each"
    ]
