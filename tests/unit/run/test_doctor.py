"""doctor's judgement over answer dicts (the asking is shown live in tests/integration/test_client_support.py)."""

from __future__ import annotations

from secure_mirror.run import doctor

READY = {
    "client": None,
    "librdkafka": "confluent-kafka 2.8.0, librdkafka 2.8.0",
    "mechanisms": {m: None for m in doctor.MECHANISMS},
    "krb5_tools": {tool: f"/usr/bin/{tool}" for tool in doctor.KRB5_TOOLS},
    "java": "17.0.15",
    "pyspark": "4.0.0",
    "jars": ["commons-pool2-2.12.0.jar", "kafka-clients-3.9.0.jar",
             "spark-sql-kafka-0-10_2.13-4.0.0.jar", "spark-token-provider-kafka-0-10_2.13-4.0.0.jar"],
    "jar_folder": "/repo/.deps/spark-jars",
    "sink": "/repo/.deps/spark-jars/secure-mirror-sink.jar",
    "sink_looked": "/repo/.deps/spark-jars",
    "hadoop_conf_dir": None,
    "class_cache": {"folder": "/home/m/.cache/secure-mirror/jvm", "archive": None, "bytes": 0},
}  # fmt: skip


def _missing(answers: dict) -> list[tuple[str, str, str]]:
    return [(i.name, i.found, i.fix) for i in doctor.judge(answers) if not i.ok and i.required]


def test_a_ready_machine_is_ready_and_yarn_is_a_note():
    items = doctor.judge(READY)
    assert doctor.ready(items) and _missing(READY) == []
    [note] = [i for i in items if not i.ok]
    assert (note.name, note.required) == ("HADOOP_CONF_DIR", False)


def test_a_client_without_gssapi_is_not_ready_and_says_how():
    answers = {**READY, "mechanisms": {**READY["mechanisms"], "GSSAPI": "its librdkafka cannot use SASL GSSAPI (x)"}}
    [(name, found, fix)] = _missing(answers)
    assert (name, found) == ("SASL GSSAPI", "its librdkafka cannot use SASL GSSAPI (x)")
    assert "pip install --no-binary confluent-kafka confluent-kafka" in fix


def test_no_client_old_java_no_tools_no_jars():
    answers = {**READY, "client": "confluent-kafka cannot be imported (x)", "java": "11.0.2", "jars": [], "sink": None,
               "krb5_tools": {"kinit": None, "klist": "/usr/bin/klist", "kvno": None}}  # fmt: skip
    names = [name for name, _, _ in _missing(answers)]
    assert names == ["confluent-kafka", "kinit", "kvno", "java", "jar spark-sql-kafka-0-10",
                     "jar spark-token-provider-kafka-0-10", "jar kafka-clients", "jar commons-pool2",
                     "the mirror's sink"]  # fmt: skip
    assert ("java", "Java 11.0.2", "install Java 17 or later (Spark 4 and Kafka 4 need it) and set JAVA_HOME") in (
        _missing(answers)
    )


def test_an_installed_package_has_spark_resolve_the_connector_and_needs_its_own_sink():
    installed = {**READY, "jars": [], "jar_folder": None, "sink": None, "sink_looked": "/site/secure_mirror/_data/jars"}
    items = {item.name: item for item in doctor.judge(installed)}
    connector = items["Spark's Kafka connector"]
    assert (connector.ok, connector.required) == (True, False)
    assert "spark.jars.packages org.apache.spark:spark-sql-kafka-0-10_2.13:4.0.0" in connector.found
    [(name, found, fix)] = _missing(installed)
    assert (name, found) == ("the mirror's sink", "not in /site/secure_mirror/_data/jars")
    assert fix.startswith("install secure-mirror from a wheel built in a checkout set up by scripts/setup")
    assert doctor.ready(doctor.judge({**installed, "sink": "/site/secure_mirror/_data/jars/secure-mirror-sink.jar"}))


def test_the_class_data_archive_is_a_note_whatever_the_cache_holds():
    folder = "/home/m/.cache/secure-mirror/jvm"
    cases = {
        "none yet in /home/m/.cache/secure-mirror/jvm: the first run": {"folder": folder, "archive": None, "bytes": 0},
        f"{folder}/spark-1.jsa (167 MB)": {"folder": folder, "archive": f"{folder}/spark-1.jsa", "bytes": 166_793_216},
        "off (SECURE_MIRROR_CLASS_CACHE=off)": {"folder": None, "archive": None, "bytes": 0},
    }
    for found, cache in cases.items():
        items = doctor.judge({**READY, "class_cache": cache})
        [item] = [i for i in items if i.name == "the driver's class-data archive"]
        assert item.ok and not item.required and item.found.startswith(found), item
        assert doctor.ready(items)
