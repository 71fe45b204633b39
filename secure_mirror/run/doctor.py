"""What this machine has and lacks to render, pre-flight and run a mirror, each item with the fix (``doctor``).

Asked of the real things: confluent-kafka and each SASL mechanism of its librdkafka (``kafka.client_support``), MIT
krb5's tools on PATH, the Java runtime's version, pyspark, the Kafka connector's jars and the mirror's sink, for
YARN the Hadoop client configuration, and the driver JVM's class-data archive (``run/class_cache.py``). ``judge`` turns
the answers into items; a missing required part makes the report not ok (exit 4).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from dataclasses import asdict, dataclass
from pathlib import Path

from secure_mirror import paths
from secure_mirror.kafka import client_support
from secure_mirror.run import class_cache

MECHANISMS = ("GSSAPI", "SCRAM-SHA-512", "SCRAM-SHA-256", "PLAIN", "OAUTHBEARER")
KRB5_TOOLS = ("kinit", "klist", "kvno")
CONNECTOR_JARS = paths.CONNECTOR_JARS
SINK_JAR = paths.SINK_JAR
SETUP = "run scripts/setup in a clone of secure-mirror"
WHEEL = (
    "install secure-mirror from a wheel built in a checkout set up by scripts/setup (pip wheel . or secure-mirror "
    "bundle: the wheel carries the sink), or set SECURE_MIRROR_DEPS to such a checkout's .deps"
)


@dataclass(frozen=True)
class Item:
    name: str
    ok: bool
    found: str
    fix: str = ""
    required: bool = True

    def to_dict(self) -> dict[str, object]:
        return asdict(self)


def ask() -> dict[str, object]:
    """Plain answers about this machine."""
    client = client_support.missing_client()
    return {
        "client": client,
        "librdkafka": None if client else _libversion(),
        "mechanisms": {} if client else {m: client_support.mechanism_problem(m) for m in MECHANISMS},
        "krb5_tools": {tool: shutil.which(tool) for tool in KRB5_TOOLS},
        "java": _java_version(),
        "pyspark": _pyspark_version(),
        "jars": [jar.name for jar in paths.spark_connector_jars()],
        "jar_folder": str(paths.deps_dir() / "spark-jars") if paths.uses_deps() else None,
        "sink": str(paths.sink_jar()) if paths.sink_jar().is_file() else None,
        "sink_looked": str(paths.sink_jar().parent),
        "hadoop_conf_dir": os.environ.get("HADOOP_CONF_DIR"),
        "class_cache": class_cache.kept(os.environ),
    }


def _libversion() -> str:
    import confluent_kafka

    return f"confluent-kafka {confluent_kafka.version()[0]}, librdkafka {confluent_kafka.libversion()[0]}"


def _java_version() -> str | None:
    try:
        out = subprocess.run([paths.java_executable(), "-version"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return None
    found = re.search(r'version "([^"]+)"', out.stderr)
    return found.group(1) if found else None


def _pyspark_version() -> str | None:
    try:
        import pyspark
    except ImportError:
        return None
    return str(pyspark.__version__)


def judge(answers: dict) -> list[Item]:
    """The items of the report, from :func:`ask`'s answers (pure)."""
    return [
        *_client_items(answers),
        *_krb5_items(answers["krb5_tools"]),
        _java_item(answers["java"]),
        _pyspark_item(answers["pyspark"]),
        *_jar_items(answers["jars"], answers["jar_folder"]),
        _sink_item(answers["sink"], answers["sink_looked"], answers["jar_folder"] is not None),
        _hadoop_item(answers["hadoop_conf_dir"]),
        _class_cache_item(answers["class_cache"]),
    ]


def _client_items(answers: dict) -> list[Item]:
    if answers["client"] is not None:
        return [Item("confluent-kafka", False, answers["client"], client_support.INSTALL_HOW)]
    items = [Item("confluent-kafka", True, answers["librdkafka"])]
    for mechanism, problem in answers["mechanisms"].items():
        fix = client_support.INSTALL_HOW if mechanism == "GSSAPI" else "use a librdkafka built with it"
        items.append(
            Item(
                f"SASL {mechanism}",
                problem is None,
                problem or "provided by librdkafka",
                "" if problem is None else fix,
                mechanism == "GSSAPI",
            )
        )
    return items


def _krb5_items(tools: dict[str, str | None]) -> list[Item]:
    return [
        Item(
            tool,
            where is not None,
            where or "not on PATH",
            "" if where else "install MIT krb5's tools (Debian: apt install krb5-user)",
        )
        for tool, where in tools.items()
    ]


def _java_item(version: str | None) -> Item:
    major = int(version.split(".")[0]) if version and version.split(".")[0].isdigit() else 0
    if major >= 17:
        return Item("java", True, f"Java {version}")
    found = f"Java {version}" if version else "no java (JAVA_HOME or PATH)"
    return Item("java", False, found, "install Java 17 or later (Spark 4 and Kafka 4 need it) and set JAVA_HOME")


def _pyspark_item(version: str | None) -> Item:
    if version is None:
        return Item("pyspark", False, "not importable", "pip install pyspark==4.0.0 (secure-mirror's dependency)")
    return Item("pyspark", True, f"pyspark {version}")


def _jar_items(jars: list[str], folder: str | None) -> list[Item]:
    """The connector's jars: in ``folder`` (``.deps``) when one is used; else Spark resolves them when the job starts,
    or the profile names a folder of them (``mirror.spark.jars``)."""
    if folder is None:
        how = (
            f"resolved by Spark when the job starts (spark.jars.packages {paths.CONNECTOR_PACKAGE}, from Maven "
            "Central or mirror.spark.jars.repositories / ivy_settings), or from mirror.spark.jars.local_dir"
        )
        return [Item("Spark's Kafka connector", True, how, required=False)]
    wanted = [(f"jar {name}", [jar for jar in jars if jar.startswith(name)]) for name in CONNECTOR_JARS]
    return [
        Item(name, True, str(Path(folder) / found[0])) if found else Item(name, False, f"not in {folder}", SETUP)
        for name, found in wanted
    ]


def _sink_item(sink: str | None, looked: str, checkout: bool) -> Item:
    if sink is not None:
        return Item("the mirror's sink", True, sink)
    return Item("the mirror's sink", False, f"not in {looked}", SETUP if checkout else WHEEL)


def _hadoop_item(conf_dir: str | None) -> Item:
    if conf_dir and any(Path(conf_dir).glob("*-site.xml")):
        return Item("HADOOP_CONF_DIR", True, conf_dir, required=False)
    found = f"{conf_dir} holds no *-site.xml" if conf_dir else "not set"
    fix = "only for master yarn: set HADOOP_CONF_DIR to the cluster's client configuration, or the profile's hadoop section"
    return Item("HADOOP_CONF_DIR", False, found, fix, required=False)


def _class_cache_item(cache: dict) -> Item:
    """The driver JVM's class-data archive (run/class_cache.py): a faster start, never a requirement."""
    name = "the driver's class-data archive"
    if cache["folder"] is None:
        return Item(name, True, f"off ({class_cache.CACHE_VARIABLE}={class_cache.OFF})", required=False)
    if cache["archive"]:
        return Item(name, True, f"{cache['archive']} ({cache['bytes'] / 1e6:.0f} MB)", required=False)
    found = f"none yet in {cache['folder']}: the first run whose driver runs here and ends well writes one"
    return Item(name, True, found, required=False)


def ready(items: list[Item]) -> bool:
    return all(item.ok for item in items if item.required)
