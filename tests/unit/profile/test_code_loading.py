"""Settings that load code into the mirror's processes (``profile/code_loading.py``): the Kafka and MirrorMaker 2
settings naming classes, refused unless they name Kafka's own; MirrorMaker 2's replication policy, rendered from
mirror.rename; Spark's code-loading settings, refused; a class path, warned about."""

from __future__ import annotations

import pytest

from secure_mirror.profile import ProfileError, load_profile
from secure_mirror.profile.code_loading import kafka_code_problem, spark_class_path_finding, spark_code_problem
from tests.support import profiles as pf

LOADS = (
    "loads the code it names into the mirror's clients (Spark's driver and executors, MirrorMaker 2's workers), which "
    "hold both clusters' credentials (keytabs, passwords, TLS keys); "
)
SPARK_LOADS = (
    "loads code (classes, jars, native libraries, Python or a script) into Spark's driver or executors, which hold "
    "both clusters' credentials (keytabs, passwords, TLS keys); set it in the Spark configuration of the machine that "
    "submits (spark-defaults.conf in SPARK_CONF_DIR, reviewed by its operators), or remove it"
)


@pytest.mark.parametrize(
    "key",
    [
        "partitioner.class",
        "producer.partitioner.class",
        "tgt.producer.partitioner.class",
        "src->tgt.producer.partitioner.class",
        "PARTITIONER.CLASS",  # Spark's option map and this rule compare keys without case
        "partition.assignment.strategy",
        "src.consumer.partition.assignment.strategy",
        "key.converter",
        "value.converter",
        "header.converter",
        "src->tgt.key.converter",
        "tgt.value.converter",
        "key.serializer",
        "consumer.value.deserializer",
        "topic.filter.class",
        "forwarding.admin.class",
    ],
)
def test_a_setting_naming_another_class_is_refused(key):
    problem = kafka_code_problem(key, "com.example.Evil")
    assert problem is not None and problem.startswith(LOADS + "name only classes Kafka ships for it ("), problem
    assert problem.endswith(") or remove it")
    assert "com.example.Evil" not in problem  # the user's value is not repeated


def test_the_classes_kafka_ships_are_named_in_the_fix():
    assert kafka_code_problem("header.converter", "x.Y") == (
        LOADS + "name only classes Kafka ships for it (org.apache.kafka.connect.converters.BooleanConverter, "
        "org.apache.kafka.connect.converters.ByteArrayConverter, org.apache.kafka.connect.converters.DoubleConverter, "
        "org.apache.kafka.connect.converters.FloatConverter, org.apache.kafka.connect.converters.IntegerConverter, "
        "org.apache.kafka.connect.converters.LongConverter, org.apache.kafka.connect.converters.ShortConverter, "
        "org.apache.kafka.connect.json.JsonConverter, org.apache.kafka.connect.storage.SimpleHeaderConverter, "
        "org.apache.kafka.connect.storage.StringConverter) or remove it"
    )


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("partitioner.class", "org.apache.kafka.clients.producer.RoundRobinPartitioner"),
        (
            "src.consumer.partition.assignment.strategy",
            "org.apache.kafka.clients.consumer.RangeAssignor, org.apache.kafka.clients.consumer.CooperativeStickyAssignor",
        ),
        ("src->tgt.value.converter", "org.apache.kafka.connect.converters.ByteArrayConverter"),
        ("key.deserializer", "org.apache.kafka.common.serialization.ByteArrayDeserializer"),
        ("topic.filter.class", "org.apache.kafka.connect.mirror.DefaultTopicFilter"),
        ("linger.ms", "5"),  # names no class
        ("partitioner.ignore.keys", "true"),
    ],
)
def test_kafkas_own_classes_and_other_settings_pass(key, value):
    assert kafka_code_problem(key, value) is None


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("partition.assignment.strategy", "org.apache.kafka.clients.consumer.RangeAssignor,com.example.Evil"),
        ("partitioner.class", "org.apache.kafka.clients.producer.roundrobinpartitioner"),  # Java names have case
    ],
)
def test_one_other_class_among_kafkas_is_refused(key, value):
    assert kafka_code_problem(key, value) is not None


@pytest.mark.parametrize(
    "key",
    [
        "transforms.x.type",
        "src->tgt.transforms.drop.type",
        "predicates.p.type",
        "plugin.path",
        "rest.extension.classes",
    ],
)
def test_a_setting_with_no_class_of_kafkas_to_allow_is_refused(key):
    assert kafka_code_problem(key, "org.apache.kafka.connect.transforms.Filter") == LOADS + "remove it"


@pytest.mark.parametrize(
    "key", ["replication.policy.class", "replication.policy.separator", "src->tgt.replication.policy.class"]
)
def test_mirrormaker2s_replication_policy_is_the_renames(key):
    assert kafka_code_problem(key, "org.apache.kafka.connect.mirror.IdentityReplicationPolicy") == (
        "sets MirrorMaker 2's replication policy, which render sets from mirror.rename (the job and the ACLs name "
        "topics by it too); change mirror.rename instead"
    )
    assert kafka_code_problem("replication.policy.internal.topic.separator.enabled", "false") is None


@pytest.mark.parametrize(
    "key",
    [
        "spark.plugins",
        "spark.extraListeners",
        "spark.driver.extraLibraryPath",
        "spark.executor.extraLibraryPath",
        "spark.jars.packages",
        "spark.jars.repositories",
        "spark.yarn.dist.jars",
        "spark.submit.pyFiles",
        "spark.sql.extensions",
        "spark.sql.queryExecutionListeners",
        "spark.sql.streaming.streamingQueryListeners",
        "spark.sql.catalog.mine",
        "spark.executor.resource.gpu.discoveryScript",
        "spark.metrics.conf.*.sink.mine.class",
        "spark.hadoop.fs.hdfs.impl",
        "spark.kryo.registrator",
        "spark.ui.filters",
    ],
)
def test_sparks_code_loading_settings_are_refused(key):
    assert spark_code_problem(key) == SPARK_LOADS


def test_a_metrics_sink_or_source_is_refused_unless_spark_ships_it():  # docs/metrics.md names Spark's own
    key = "spark.metrics.conf.driver.sink.jmx.class"
    assert spark_code_problem(key, "org.apache.spark.metrics.sink.JmxSink") is None
    assert (
        spark_code_problem("spark.metrics.conf.*.source.jvm.class", "org.apache.spark.metrics.source.JvmSource") is None
    )
    for value in ("com.example.Sink", "org.apache.spark.metrics.sink.JmxSink,com.example.Sink", None):
        assert spark_code_problem(key, value) == SPARK_LOADS


@pytest.mark.parametrize(
    "key",
    ["spark.executor.memory", "spark.sql.shuffle.partitions", "spark.kafka.consumer.cache.capacity", "spark.jars"],
)
def test_other_spark_settings_pass(key):  # spark.jars is the profile's own (mirror.spark.jars), refused elsewhere
    assert spark_code_problem(key) is None


def test_a_class_path_is_warned_about():
    for key in ("spark.driver.extraClassPath", "spark.executor.extraClassPath"):
        assert spark_class_path_finding(key) == (
            "puts the jars and folders it names first on the class path of Spark's driver or executors, which hold "
            "both clusters' credentials (keytabs, passwords, TLS keys): their classes are loaded before Spark's and "
            "Kafka's own"
        )
    for key in ("spark.pyspark.python", "spark.pyspark.driver.python"):  # the nodes' own Python: warned
        assert spark_code_problem(key) is None
        assert spark_class_path_finding(key) == (
            "names the Python that runs the job in Spark's driver or executors, which hold both clusters' credentials "
            "(keytabs, passwords, TLS keys): it runs with them"
        )
    for key in ("spark.yarn.jars", "spark.yarn.archive"):  # a YARN deployment's own Spark: warned, not refused
        assert spark_code_problem(key) is None
        assert spark_class_path_finding(key) == (
            "names the Spark jars YARN's containers run Spark's driver and executors with, which hold both clusters' "
            "credentials (keytabs, passwords, TLS keys): any other jar there runs with them"
        )
    assert spark_class_path_finding("spark.driver.userClassPathFirst") is None


# ---- at validate: each named by its field ---------------------------------------------------------------------------
def test_validate_refuses_them_naming_the_field(tmp_path):
    data = pf.profile_data(tmp_path, spark={"conf": {"spark.plugins": "com.example.Evil"}})
    data["source"]["client_options"] = {"producer.partitioner.class": "com.example.Evil"}
    data["mirror"]["mm2"] = {"properties": {"replication.policy.class": "com.example.Policy"}}
    with pytest.raises(ProfileError) as caught:
        load_profile(pf.write_profile(tmp_path, data))
    problems = [problem.split(": ", 1)[0] for problem in caught.value.problems]
    assert problems == [
        "source.client_options.producer.partitioner.class",
        "mirror.spark.conf.spark.plugins",
        "mirror.mm2.properties.replication.policy.class",
    ]
    assert not any("com.example" in problem for problem in caught.value.problems)
