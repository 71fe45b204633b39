"""Where the project's installed parts live (made by scripts/setup under the checkout's .deps/)."""

from __future__ import annotations

import os
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent


def deps_dir() -> Path:
    """The folder scripts/setup installs into (override with SECURE_MIRROR_DEPS)."""
    return Path(os.environ.get("SECURE_MIRROR_DEPS", REPO_ROOT / ".deps"))


def kafka_lib_dir() -> Path:
    """The Apache Kafka broker, tools and MirrorMaker 2 classpath (apart from Spark's jars)."""
    return deps_dir() / "kafka" / "lib"


def kafka_classpath() -> str:
    return str(kafka_lib_dir() / "*")


def kafka_old_lib_dir() -> Path:
    """The sandbox's optional HDP-era broker: Kafka 2.2 and ZooKeeper (jvm/kafka-old/pom.xml)."""
    return deps_dir() / "kafka-old" / "lib"


def spark_connector_jars() -> list[Path]:
    """spark-sql-kafka-0-10 and the jars it needs that pyspark does not ship, as local files."""
    return sorted((deps_dir() / "spark-jars").glob("*.jar"))


def job_script() -> Path:
    """The mirror job's script, as spark-submit runs it (``secure_mirror/run/job/__main__.py``)."""
    return REPO_ROOT / "secure_mirror" / "run" / "job" / "__main__.py"


def librdkafka_dir() -> Path:
    return deps_dir() / "librdkafka"


def java_executable() -> str:
    java_home = os.environ.get("JAVA_HOME")
    if java_home and (Path(java_home) / "bin" / "java").exists():
        return str(Path(java_home) / "bin" / "java")
    return "java"
