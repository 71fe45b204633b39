"""Where the package finds its jars (issue 30): a wheel's own first, ``.deps`` only in a checkout or when
SECURE_MIRROR_DEPS names one; the installed case is faked here, and shown for real in
tests/integration/test_wheel_install.py."""

from __future__ import annotations

from pathlib import Path

import pytest

from secure_mirror import paths


@pytest.fixture()
def installed(monkeypatch):
    monkeypatch.delenv("SECURE_MIRROR_DEPS", raising=False)
    monkeypatch.setattr(paths, "in_checkout", lambda: False)


def _jars(folder: Path, *names: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for name in names:
        (folder / name).write_bytes(b"PK")
    return folder


def test_this_checkout_reads_deps_and_carries_no_jars_of_its_own():
    assert paths.in_checkout() and paths.uses_deps()
    assert paths.packaged_jar(paths.SINK_JAR) is None and paths.tools_jar() is None  # setup.py builds into build/
    assert paths.sink_jar() == paths.deps_dir() / "spark-jars" / paths.SINK_JAR
    assert paths.SINK_JAR not in [jar.name for jar in paths.spark_connector_jars()]


def test_the_checkout_runs_the_java_probe_from_its_source_on_the_kafka_jars():
    assert paths.java_probe_command(None) == [
        "-cp",
        paths.kafka_classpath(),
        str(paths.REPO_ROOT / "jvm" / "tools" / "JavaClientProbe.java"),
    ]


def test_an_installed_package_reads_no_deps_and_names_its_own_sink(installed):
    assert not paths.uses_deps() and paths.spark_connector_jars() == []
    assert paths.sink_jar() == paths.REPO_ROOT / "secure_mirror" / "_data" / "jars" / paths.SINK_JAR


def test_an_installed_package_runs_its_compiled_probe_on_the_profiles_jars(installed, tmp_path, monkeypatch):
    tools = _jars(tmp_path / "pkg", paths.TOOLS_JAR) / paths.TOOLS_JAR
    monkeypatch.setattr(paths, "packaged_jar", lambda name: tools if name == paths.TOOLS_JAR else None)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert paths.java_probe_command(None) is None  # no kafka-clients on this machine yet
    local = _jars(tmp_path / "bundle" / "jars", "kafka-clients-3.9.0.jar", "spark-sql-kafka-0-10_2.13-4.0.0.jar")
    spark = paths.pyspark_jars_dir()
    assert paths.java_probe_command(local) == [
        "-cp",
        f"{tools}:{local / 'kafka-clients-3.9.0.jar'}:{spark}/*",
        "JavaClientProbe",
    ]
    ivy = _jars(tmp_path / "home" / ".ivy2.5.2" / "jars", "org.apache.kafka_kafka-clients-3.9.0.jar")
    assert paths.kafka_clients_jars(None) == [ivy / "org.apache.kafka_kafka-clients-3.9.0.jar"]  # after a first run
