"""Where the project's installed parts live.

An installed package (a wheel) carries its compiled Java in ``secure_mirror/_data/jars`` (the mirror's Spark sink and
source, and the Java tools pre-flight and lag use), found with importlib.resources. A checkout finds what
scripts/setup made under its ``.deps/`` (the Kafka jars, Spark's Kafka connector, the sink), and so does an installed
package told where such a folder is by ``SECURE_MIRROR_DEPS``.
"""

from __future__ import annotations

import importlib.util
import os
from importlib import resources
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
SINK_JAR = "secure-mirror-sink.jar"  # jvm/sink: the mirror's Spark source, sink and metrics (securemirror.*)
TOOLS_JAR = "secure-mirror-tools.jar"  # jvm/tools the package runs (setup.py TOOL_SOURCES): JavaClientProbe, ...
# Spark's Kafka connector for the pinned pyspark 4.0.0, Scala 2.13 (jvm/spark-connector/pom.xml): its Maven
# coordinates for spark.jars.packages, and the file names of it and the jars it needs that pyspark does not ship.
SPARK_VERSION = "4.0.0"
CONNECTOR_PACKAGE = f"org.apache.spark:spark-sql-kafka-0-10_2.13:{SPARK_VERSION}"
CONNECTOR_JARS = ("spark-sql-kafka-0-10", "spark-token-provider-kafka-0-10", "kafka-clients", "commons-pool2")


def in_checkout() -> bool:
    """True when the package runs from a clone of the project (its jvm/ sources beside it), not from a wheel."""
    return (REPO_ROOT / "jvm" / "sink").is_dir() and (REPO_ROOT / "pyproject.toml").is_file()


def deps_dir() -> Path:
    """The folder scripts/setup installs into (override with SECURE_MIRROR_DEPS)."""
    return Path(os.environ.get("SECURE_MIRROR_DEPS", REPO_ROOT / ".deps"))


def uses_deps() -> bool:
    """True when ``.deps`` is read: in a checkout, or when SECURE_MIRROR_DEPS names one."""
    return in_checkout() or "SECURE_MIRROR_DEPS" in os.environ


def packaged_jar(name: str) -> Path | None:
    """A jar the wheel carries (``secure_mirror/_data/jars``), or None (a checkout has none: setup builds them)."""
    found = resources.files("secure_mirror").joinpath("_data", "jars", name)
    return Path(str(found)) if found.is_file() else None


def sink_jar() -> Path:
    """The mirror's sink and source: the wheel's own jar, else setup's in ``.deps/spark-jars`` where ``.deps`` is
    used (either may be missing: doctor says so)."""
    found = packaged_jar(SINK_JAR)
    if found is None and uses_deps():
        return deps_dir() / "spark-jars" / SINK_JAR
    return found or Path(__file__).resolve().parent / "_data" / "jars" / SINK_JAR


def tools_jar() -> Path | None:
    """The wheel's compiled jvm/tools (None in a checkout, which runs or compiles them from jvm/tools)."""
    return packaged_jar(TOOLS_JAR)


def kafka_lib_dir() -> Path:
    """The Apache Kafka broker, tools and MirrorMaker 2 classpath (apart from Spark's jars)."""
    return deps_dir() / "kafka" / "lib"


def kafka_classpath() -> str:
    return str(kafka_lib_dir() / "*")


def kafka_old_lib_dir() -> Path:
    """The sandbox's optional HDP-era broker: Kafka 2.2 and ZooKeeper (jvm/kafka-old/pom.xml)."""
    return deps_dir() / "kafka-old" / "lib"


def ranger_kafka_lib_dir() -> Path:
    """Apache Ranger's Kafka authorizer 1.2.0 and its dependencies, for that broker (jvm/ranger-kafka/pom.xml)."""
    return deps_dir() / "ranger-kafka" / "lib"


def spark_connector_jars() -> list[Path]:
    """spark-sql-kafka-0-10 and the jars it needs that pyspark does not ship, as local files from ``.deps``
    (none when ``.deps`` is not used: an installed package has Spark resolve them, or names a folder of them)."""
    return jars_in(deps_dir() / "spark-jars") if uses_deps() else []


def jars_in(folder: Path) -> list[Path]:
    """The jars of a folder of them (``mirror.spark.jars.local_dir``, a bundle's ``jars/``), but the sink."""
    return sorted(jar for jar in folder.glob("*.jar") if jar.name != SINK_JAR)


def pyspark_jars_dir() -> Path | None:
    """The installed pyspark's jars folder (found without importing pyspark), or None."""
    spec = importlib.util.find_spec("pyspark")
    folders = list(spec.submodule_search_locations or []) if spec else []
    return Path(folders[0]) / "jars" if folders else None


def credential_provider_classpath() -> str:
    """The class path a Java reader needs for ``${jceks-...:alias}`` references: the sink jar (our config provider)
    and Hadoop's client jars (pyspark's ``hadoop-client-api`` and ``hadoop-client-runtime``)."""
    jars = pyspark_jars_dir()
    hadoop = sorted(jars.glob("hadoop-client-*.jar")) if jars is not None else []
    return ":".join(str(jar) for jar in [sink_jar(), *hadoop])


def ivy_jars_dir() -> Path:
    """Where Spark 4.0 leaves the jars it resolved for spark.jars.packages (its default spark.jars.ivy)."""
    return Path.home() / ".ivy2.5.2" / "jars"


def kafka_clients_jars(local_dir: Path | None) -> list[Path]:
    """kafka-clients jars on this machine for a Java tool: a profile's folder of jars, ``.deps``' connector, or
    what Spark resolved for an earlier run (its Ivy folder names them ``org.apache.kafka_kafka-clients-*``)."""
    folders = [local_dir] if local_dir else []
    folders += [deps_dir() / "spark-jars"] if uses_deps() else []
    found = [jar for folder in folders for jar in sorted(folder.glob("kafka-clients-*.jar"))]
    return found + sorted(ivy_jars_dir().glob("org.apache.kafka_kafka-clients-*.jar"))


def java_probe_command(local_dir: Path | None) -> list[str] | None:
    """``-cp CLASSPATH MAIN`` running pre-flight's Java probe (jvm/tools/JavaClientProbe.java), or None when Kafka's
    Java client is not on this machine: in a checkout the source on ``.deps/kafka/lib``, as it always ran; from a
    wheel, its compiled tool on a kafka-clients jar and pyspark's jars (its logging, compression codecs)."""
    source = REPO_ROOT / "jvm" / "tools" / "JavaClientProbe.java"
    if uses_deps() and source.exists() and any(kafka_lib_dir().glob("kafka-clients-*.jar")):
        return ["-cp", kafka_classpath(), str(source)]
    tools, clients, spark = tools_jar(), kafka_clients_jars(local_dir), pyspark_jars_dir()
    if tools is None or not clients or spark is None:
        return None
    return ["-cp", f"{tools}:{clients[0]}:{spark}/*", "JavaClientProbe"]


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
