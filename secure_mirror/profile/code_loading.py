"""Settings that load code into the processes holding both clusters' credentials: refused at validate.

The mirror's processes (Spark's driver and executors, MirrorMaker 2's workers) hold both sides' keytabs, passwords
and TLS keys, so a setting that has them load a class, a jar, a native library or a script hands all of it to that
code. The profile owns its security settings and config providers (``base.PROTECTED_OPTION``) and warns about the
metrics reporters, interceptors and security providers the operators may mean (``warnings.CLASS_LOADING_OPTION``);
these are refused:

- Kafka client and MirrorMaker 2 settings that name classes (:data:`KAFKA_CLASS_SETTINGS`), after any prefix as Kafka
  and MirrorMaker 2 apply them (``producer.``, ``<alias>.consumer.``, ``source->target.``): unless every class named
  is one Kafka ships for that setting (:data:`KAFKA_OWN_CLASSES`: its partitioners, assignors, serializers and
  converters, MirrorMaker 2's default filters);
- MirrorMaker 2's replication policy (``replication.policy.class``, ``replication.policy.separator``): rendered from
  ``mirror.rename``, which the job and the ACLs follow too;
- Spark settings that load code (:data:`SPARK_CODE_SETTINGS`): they belong to the Spark configuration of the machine
  that submits, where its operators review them.

The settings that name the JVM's own class path are warned about instead (:data:`SPARK_CLASS_PATH`):
``spark.{driver,executor}.extraClassPath`` (the live suites put this checkout's own sink there when the installed one
is older, ``sandbox/sink_jar.py``) and ``spark.yarn.jars`` / ``spark.yarn.archive`` (where YARN's containers
take Spark's own jars from: a YARN deployment names its Spark installation there, as the sandbox's YARN profiles do),
and ``spark.pyspark.python`` / ``spark.pyspark.driver.python`` (the Python that runs the job: a deployment names the
nodes' own). A metrics sink or source (``spark.metrics.conf.*.class``) is refused unless it is one Spark ships
(:data:`SPARK_OWN_METRICS`: docs/metrics.md's JMX and Prometheus sinks).
"""

from __future__ import annotations

import re
from typing import Any

from secure_mirror.profile.base import option_matches
from secure_mirror.profile.fields import Problem

_CLIENTS = "org.apache.kafka.clients"
_CONNECT = "org.apache.kafka.connect"
_SERDE = "org.apache.kafka.common.serialization"
_SERDE_TYPES = ("ByteArray", "Bytes", "ByteBuffer", "String", "Integer", "Long", "Short", "Float", "Double", "UUID")
_CONVERTERS = (
    f"{_CONNECT}.converters.ByteArrayConverter",
    f"{_CONNECT}.storage.StringConverter",
    f"{_CONNECT}.storage.SimpleHeaderConverter",
    f"{_CONNECT}.json.JsonConverter",
    *(f"{_CONNECT}.converters.{kind}Converter" for kind in ("Integer", "Long", "Short", "Float", "Double", "Boolean")),
)
# setting -> the classes Kafka ships for it, the only ones it may name (by their full names)
KAFKA_OWN_CLASSES: dict[str, frozenset[str]] = {
    "partitioner.class": frozenset(
        {f"{_CLIENTS}.producer.RoundRobinPartitioner", f"{_CLIENTS}.producer.UniformStickyPartitioner"}
    ),
    "partition.assignment.strategy": frozenset(
        f"{_CLIENTS}.consumer.{name}"
        for name in ("RangeAssignor", "RoundRobinAssignor", "StickyAssignor", "CooperativeStickyAssignor")
    ),
    **{
        f"{part}.{role}": frozenset(f"{_SERDE}.{kind}{role.title()}" for kind in _SERDE_TYPES)
        for part in ("key", "value")
        for role in ("serializer", "deserializer")
    },
    "key.converter": frozenset(_CONVERTERS),
    "value.converter": frozenset(_CONVERTERS),
    "header.converter": frozenset(_CONVERTERS),
    "topic.filter.class": frozenset({"org.apache.kafka.connect.mirror.DefaultTopicFilter"}),
    "group.filter.class": frozenset({"org.apache.kafka.connect.mirror.DefaultGroupFilter"}),
    "config.property.filter.class": frozenset({"org.apache.kafka.connect.mirror.DefaultConfigPropertyFilter"}),
    "forwarding.admin.class": frozenset({f"{_CLIENTS}.admin.ForwardingAdmin"}),
}
# Settings naming code with no class of Kafka's to allow: Connect's transformations and predicates, plugin folders,
# REST extensions.
_ANY_CODE = r"(transforms|predicates)\.[^.]+\.type|plugin\.path|rest\.extension\.classes"
KAFKA_CLASS_SETTINGS = re.compile(rf"^({'|'.join(map(re.escape, KAFKA_OWN_CLASSES))}|{_ANY_CODE})$")
REPLICATION_POLICY = re.compile(r"^replication\.policy\.(class|separator)$")
# Spark 4.0's settings that load a class, a jar, a native library, Python code or a script into the driver or the
# executors (spark.jars itself is rendered from mirror.spark.jars: runtime.PROTECTED_SPARK_CONF).
SPARK_CODE_SETTINGS = re.compile(
    r"^spark\.("
    r"plugins|extraListeners|(driver|executor)\.extraLibraryPath"
    r"|jars\.(packages|repositories|ivySettings)|yarn\.dist\.jars|submit\.pyFiles"
    r"|kryo\.registrator|serializer|ui\.filters"
    r"|(driver|executor)\.resource\.[^.]+\.discoveryScript|metrics\.conf\..*\.class"
    r"|sql\.(extensions|queryExecutionListeners|streaming\.streamingQueryListeners|catalog\..*"
    r"|streaming\.stateStore\.providerClass|streaming\.checkpointFileManagerClass)"
    r"|hadoop\.fs\.[^.]+\.impl"
    r")$"
)


SPARK_CLASS_PATH = re.compile(
    r"^spark\.((driver|executor)\.extraClassPath|yarn\.(jars|archive)|pyspark\.(driver\.)?python)$"
)
SPARK_METRICS_CLASS = re.compile(r"^spark\.metrics\.conf\..*\.class$")
SPARK_OWN_METRICS = re.compile(r"^org\.apache\.spark\.metrics\.(sink|source)\.[A-Za-z0-9_$]+$")  # Spark's own


def kafka_code_problem(key: str, value: object) -> str | None:
    """Why the Kafka client or MirrorMaker 2 setting ``key`` (``*.client_options``, ``mirror.mm2.properties``) is
    refused, with the fix, or None. The classes named are not repeated: the value is the user's."""
    if option_matches(REPLICATION_POLICY, key):
        return (
            "sets MirrorMaker 2's replication policy, which render sets from mirror.rename (the job and the ACLs name "
            "topics by it too); change mirror.rename instead"
        )
    if not option_matches(KAFKA_CLASS_SETTINGS, key):
        return None
    allowed = KAFKA_OWN_CLASSES.get(_setting(key), frozenset())
    named = [name.strip() for name in str(value).split(",") if name.strip()]
    if allowed and all(name in allowed for name in named):
        return None
    only = f"name only classes Kafka ships for it ({', '.join(sorted(allowed))}) or " if allowed else ""
    return (
        "loads the code it names into the mirror's clients (Spark's driver and executors, MirrorMaker 2's workers), "
        f"which hold both clusters' credentials (keytabs, passwords, TLS keys); {only}remove it"
    )


def refuse_kafka_code(options: dict[str, Any]) -> dict[str, Any]:
    """``options`` (``*.client_options``, ``mirror.mm2.properties``), or a :class:`Problem` at the first key that
    :func:`kafka_code_problem` refuses."""
    for key, value in options.items():
        if (reason := kafka_code_problem(key, value)) is not None:
            raise Problem(key, reason)
    return options


def _setting(key: str) -> str:
    """The setting ``key`` sets after any prefix (``a->b.producer.partitioner.class`` -> ``partitioner.class``)."""
    parts = key.lower().split(".")
    return next((s for i in range(len(parts)) if (s := ".".join(parts[i:])) in KAFKA_OWN_CLASSES), "")


def spark_code_problem(key: str, value: object = None) -> str | None:
    """Why ``mirror.spark.conf.<key>`` (set to ``value``) is refused, with the fix, or None."""
    if not SPARK_CODE_SETTINGS.match(key):
        return None
    if SPARK_METRICS_CLASS.match(key) and SPARK_OWN_METRICS.match(str(value).strip()):
        return None
    return (
        "loads code (classes, jars, native libraries, Python or a script) into Spark's driver or executors, which "
        "hold both clusters' credentials (keytabs, passwords, TLS keys); set it in the Spark configuration of the "
        "machine that submits (spark-defaults.conf in SPARK_CONF_DIR, reviewed by its operators), or remove it"
    )


def spark_class_path_finding(key: str) -> str | None:
    """For a warning: what ``mirror.spark.conf.<key>`` does when it sets a JVM's class path, or None."""
    if not SPARK_CLASS_PATH.match(key):
        return None
    if key.startswith("spark.pyspark."):
        return (
            "names the Python that runs the job in Spark's driver or executors, which hold both clusters' credentials "
            "(keytabs, passwords, TLS keys): it runs with them"
        )
    if key.startswith("spark.yarn."):
        return (
            "names the Spark jars YARN's containers run Spark's driver and executors with, which hold both clusters' "
            "credentials (keytabs, passwords, TLS keys): any other jar there runs with them"
        )
    return (
        "puts the jars and folders it names first on the class path of Spark's driver or executors, which hold both "
        "clusters' credentials (keytabs, passwords, TLS keys): their classes are loaded before Spark's and Kafka's own"
    )
