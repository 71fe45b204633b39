"""The job's figures where dashboards look, read back from a real ``secure-mirror run`` on the sandbox.

One short run mirrors 300 records (two topics, three partitions) with the profile's ``mirror.spark.conf`` turning on
Spark's PrometheusServlet and JmxSink on the driver (its UI on a free port), the driver's JMX on a free loopback
port (no authentication: loopback only, in this test) and the Prometheus JMX exporter's own Java agent (the jar
scripts/setup fetches from Maven Central) with monitoring/jmx-exporter.yml on another, as docs/metrics.md tells an
operator to; and ``mirror.groups`` selecting a group that committed on one topic (the launcher's group sync writes
its checkpoints and their ``checkpoint-latency-ms`` lines to the metrics file). A real Prometheus server (Debian's)
scrapes both endpoints every second with monitoring/prometheus.yml's two jobs, its ``metric_relabel_configs``
included, and the tests read what it stored over its HTTP API. While the job runs:

- from Spark's Prometheus endpoint (``/metrics/prometheus`` on the UI port), after the relabelling, Prometheus holds
  MirrorMaker 2's series per topic-partition with the records mirrored (``record-count``), the bytes the sink
  reported (``byte-count``, as in the metrics file), rates, ages and latencies;
- Kafka's JmxTool reads MirrorMaker 2's MBeans (``kafka.connect.mirror:type=MirrorSourceConnector,source=src,
  target=tgt,topic=<target topic>,partition=<n>``) with the same figures, and Spark's JmxSink's copy of the source;
  from the JMX exporter agent Prometheus holds them under the names and labels (source, target, topic, partition)
  the dashboard reads, with the exact target topic names;
- the driver has read the group sync's lines from the metrics file: MirrorMaker 2's checkpoint connector series
  (``kafka.connect.mirror:type=MirrorCheckpointConnector,source=...,target=tgt,group=<group>,topic=<target topic>,
  partition=<n>``, ``checkpoint-latency-ms[-min|-max|-avg]``) are at both endpoints, with the file's latencies;
- no name or tag holds anything but the aliases, a group, a target topic and a partition: none of the job's options.
"""

from __future__ import annotations

import json
import math
import signal
import subprocess
import time
import urllib.request
from collections import Counter

import pytest

from secure_mirror import paths
from secure_mirror.sandbox.sink_jar import sink_conf
from secure_mirror.sandbox.waiting import caught_up, wait_for
from tests.support.cluster import commit_offsets
from tests.support.exposition import ATTRIBUTES, MONITORING, jmx_tool_properties
from tests.support.mirror_case import CLI, MirrorCase, records, with_groups
from tests.support.prometheus import Prometheus, free_port

pytestmark = [pytest.mark.sandbox, pytest.mark.spark, pytest.mark.jvm]
SERIES = "kafka_connect_mirror_mirrorsourceconnector_"
CHECKPOINTS = "kafka_connect_mirror_mirrorcheckpointconnector_"
PRODUCED = {"a": (200, 2), "b": (100, 1)}  # topic: (records, partitions)
COMMITTED = {0: 60, 1: 40}  # the group's offsets on topic a
LATENCIES = [
    "checkpoint-latency-ms",
    "checkpoint-latency-ms-min",
    "checkpoint-latency-ms-max",
    "checkpoint-latency-ms-avg",
]


def _loopback_jmx(port: int) -> str:
    """The driver's JMX on loopback only, without authentication (acceptable in this test, never elsewhere)."""
    return " ".join(
        f"-D{key}={value}"
        for key, value in {
            "com.sun.management.jmxremote.port": port,
            "com.sun.management.jmxremote.rmi.port": port,
            "com.sun.management.jmxremote.host": "127.0.0.1",
            "java.rmi.server.hostname": "127.0.0.1",
            "com.sun.management.jmxremote.authenticate": "false",
            "com.sun.management.jmxremote.ssl": "false",
        }.items()
    )


def _exporter_agent(port: int) -> str:
    """The Prometheus JMX exporter's Java agent on ``127.0.0.1:port`` with monitoring/jmx-exporter.yml."""
    jars = sorted((paths.deps_dir() / "jmx-exporter").glob("jmx_prometheus_javaagent-*.jar"))
    assert jars, "the JMX exporter's agent is not in .deps/jmx-exporter: run scripts/setup"
    return f"-javaagent:{jars[-1]}=127.0.0.1:{port}:{MONITORING / 'jmx-exporter.yml'}"


def _spark_conf(ui: int, jmx: int, agent: int) -> dict:
    return {
        "spark.ui.port": ui,
        "spark.metrics.namespace": "secure-mirror",
        "spark.metrics.conf.driver.sink.prometheusServlet.class": "org.apache.spark.metrics.sink.PrometheusServlet",
        "spark.metrics.conf.driver.sink.prometheusServlet.path": "/metrics/prometheus",
        "spark.metrics.conf.driver.sink.jmx.class": "org.apache.spark.metrics.sink.JmxSink",
        "spark.driver.extraJavaOptions": f"{_loopback_jmx(jmx)} {_exporter_agent(agent)}",
    }


def _expected(case) -> dict[tuple[str, str], int]:
    """(target topic, partition) -> records produced to it (tests/support/mirror_case.records: i % partitions)."""
    return {
        (case.profile.target_topic(case.topic(name)), str(p)): sum(1 for i in range(count) if i % parts == p)
        for name, (count, parts) in PRODUCED.items()
        for p in range(parts)
    }


def _scrape(url: str) -> str:
    with urllib.request.urlopen(url, timeout=10) as answer:
        return answer.read().decode()


def _normalized(expected: dict[tuple[str, str], int]) -> dict[tuple[str, str], int]:
    """The target topics as Spark's PrometheusServlet spells them in a name (each '.' or '-' read as '_')."""
    return {(topic.replace(".", "_").replace("-", "_"), p): n for (topic, p), n in expected.items()}


def _stored(server: Prometheus) -> dict:
    """What Prometheus holds now of MirrorMaker 2's series from each job (``spark``: Spark's endpoint after the
    relabelling; ``jmx``: the JMX exporter agent), and whether each target's last scrape succeeded."""
    return {
        "spark": server.job_series("secure-mirror-spark", "kafka_connect_mirror_"),
        "jmx": server.job_series("secure-mirror-jmx", "kafka_connect_mirror_"),
        "task": server.job_series("secure-mirror-jmx", "kafka_connect_task_error_metrics_"),
        "up": {job: server.up(job) for job in ("secure-mirror-spark", "secure-mirror-jmx")},
    }


def _settled(job: str, series: dict, expected: dict[tuple[str, str], int]) -> bool:
    """The job's series count every record of ``expected`` (Spark's endpoint: topics as it spells them) and have a
    checkpoint latency of each partition the group committed."""
    counted = _counted(series, "record_count") == (_normalized(expected) if job == "spark" else expected)
    return counted and _partitions(series, CHECKPOINTS + "checkpoint_latency_ms") == {str(p) for p in COMMITTED}


def _partitions(series: dict, name: str) -> set[str]:
    return {dict(labels).get("partition", "") for found, labels in series if found == name}


def _last_look(server: Prometheus, expected: dict[tuple[str, str], int], timeout: float) -> dict:
    """Prometheus's store of each job as first seen settled, or as it is after ``timeout`` seconds (what the tests
    then read: on a broken configuration they say what it lacks, and the other job's look is as early as ever)."""
    deadline, kept = time.monotonic() + timeout, {}
    while True:
        stored = _stored(server)
        kept |= {
            job: stored[job] for job in ("spark", "jmx") if job not in kept and _settled(job, stored[job], expected)
        }
        if len(kept) == 2 or time.monotonic() > deadline:
            return {**stored, **kept}
        time.sleep(1)


def _counted(series: dict, attribute: str) -> dict[tuple[str, str], float]:
    return {
        (dict(labels).get("topic", ""), dict(labels).get("partition", "")): value
        for (name, labels), value in series.items()
        if name == SERIES + attribute
    }


def _jmx_tool(port: int) -> str:
    res = subprocess.run(
        [paths.java_executable(), "-cp", paths.kafka_classpath(), "org.apache.kafka.tools.JmxTool"]
        + ["--jmx-url", f"service:jmx:rmi:///jndi/rmi://127.0.0.1:{port}/jmxrmi", "--one-time", "true"]
        + ["--report-format", "properties", "--object-name", "kafka.connect.mirror:type=MirrorSourceConnector,*"]
        + ["--object-name", "kafka.connect.mirror:type=MirrorCheckpointConnector,*"]
        + ["--object-name", "kafka.connect:type=task-error-metrics,*"]
        + ["--object-name", "metrics:name=secure-mirror.driver.kafka.connect.mirror.*,type=gauges"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert res.returncode == 0, res.stderr[-3000:]
    return res.stdout


def _option_texts(case, folder) -> set[str]:
    """Every key and every longer value of the job's rendered source and sink options (JAAS lines, keytab paths)."""
    out = folder / "rendered"
    subprocess.run([*CLI, "render", str(case.profile_path), "--out", str(out)], check=True, capture_output=True)
    texts: set[str] = set()
    for name in ("source-options.json", "sink-options.json"):
        for key, value in json.loads((out / "spark" / name).read_text()).items():
            texts |= {key} | ({str(value)} if len(str(value)) >= 8 else set())
    return texts


@pytest.fixture(scope="module")
def exposed(sandbox, tmp_path_factory):
    folder = tmp_path_factory.mktemp("metrics-live")
    ui, jmx, agent = free_port(), free_port(), free_port()
    conf = {**_spark_conf(ui, jmx, agent), **sink_conf(folder)}
    targets = {"secure-mirror-spark": f"127.0.0.1:{ui}", "secure-mirror-jmx": f"127.0.0.1:{agent}"}
    case = MirrorCase(sandbox, folder, mirror={"spark": {"master": "local[2]", "conf": conf}})
    group = f"{case.prefix}-grp"
    with_groups(case, group)  # its own source alias, with the grants group sync needs (tests/support/mirror_case.py)
    with case:
        case.create({name: parts for name, (_, parts) in PRODUCED.items()})
        for name, (count, parts) in PRODUCED.items():
            case.produce(name, records(count, parts, name))
        sandbox.admin("source", commit_offsets, group, case.topic("a"), COMMITTED)
        expected, metrics = _expected(case), folder / "metrics.jsonl"
        argv = case.run_argv(folder / "run", "--trigger-interval", "1 second", "--metrics-file", str(metrics))
        with Prometheus(folder, targets) as server:
            with open(folder / "job.out", "w") as out, open(folder / "job.err", "w") as err:
                job = subprocess.Popen(argv, stdout=out, stderr=err)
            try:
                topics = {case.topic(n) for n in PRODUCED}
                wait_for(lambda: caught_up(case.profile, topics), 180, "the mirror to catch up")
                stored = _last_look(server, expected, 90)
                text = _scrape(f"http://127.0.0.1:{ui}/metrics/prometheus")  # what each endpoint says itself
                agent_text = _scrape(f"http://127.0.0.1:{agent}/metrics")
                jmx_text = _jmx_tool(jmx)
            finally:
                job.send_signal(signal.SIGTERM)
                job.wait(timeout=120)
        yield {
            "case": case,
            "alias": case.profile.source.alias,
            "group": group,
            "expected": expected,
            "text": text,
            "agent_text": agent_text,
            "stored": stored,
            "prometheus_log": server.log.read_text(errors="replace")[-3000:],
            "jmx": jmx_tool_properties(jmx_text),
            "lines": [json.loads(line) for line in metrics.read_text().splitlines()],
            "exit": job.returncode,
            "err": (folder / "job.err").read_text(),
            "options": _option_texts(case, folder),
        }


def _bytes_in_metrics_file(lines: list[dict]) -> Counter:
    found: Counter = Counter()
    for line in lines:
        for row in line.get("partitions", []):  # the group sync's checkpoints lines have none
            found[(row["target-topic"], str(row["partition"]))] += row.get("byte-count", 0)
    return found


def test_the_prometheus_endpoint_holds_mirrormaker2s_figures(exposed):
    assert exposed["exit"] == 0, exposed["err"][-3000:]
    assert "not all published" not in exposed["err"]
    assert exposed["stored"]["up"]["secure-mirror-spark"] == 1, exposed["prometheus_log"]
    series = _of(exposed["stored"]["spark"], SERIES)  # as Prometheus stored it, after monitoring/prometheus.yml's rules
    assert _counted(series, "record_count") == _normalized(exposed["expected"]), sorted(exposed["stored"]["spark"])
    assert {name for name, _ in series} == {SERIES + a.replace("-", "_") for a in ATTRIBUTES}
    assert {tuple(k for k, _ in labels) for _, labels in series} == {("partition", "source", "target", "topic", "type")}
    assert len(series) == len(ATTRIBUTES) * len(exposed["expected"])
    sizes = _normalized(_bytes_in_metrics_file(exposed["lines"]))
    assert _counted(series, "byte_count") == sizes and all(sizes.values())
    assert all(value > 0 for value in _counted(series, "record_rate").values())
    for key, low in _counted(series, "replication_latency_ms_min").items():
        assert 0 <= low <= _counted(series, "replication_latency_ms_max")[key]
        assert 0 <= _counted(series, "record_age_ms_min")[key] <= _counted(series, "record_age_ms_max")[key]
    assert {dict(labels)["source"] for _, labels in series} == {exposed["alias"].replace("-", "_")}
    assert {dict(labels)["target"] for _, labels in series} == {"tgt"}


def test_jmx_holds_mirrormaker2s_mbeans_and_sparks_copy(exposed):
    beans, expected = exposed["jmx"], exposed["expected"]
    mm2 = {name: value for name, value in beans.items() if name[0].startswith("kafka.connect.mirror:type=MirrorS")}
    counts = {}
    for (name, attribute), value in mm2.items():
        keys = [pair.split("=") for pair in name.partition(":")[2].split(",")]
        assert [k for k, _ in keys] == ["type", "source", "target", "topic", "partition"]  # MirrorMaker 2's, in order
        tags = dict(keys)
        assert (tags["type"], tags["source"], tags["target"]) == ("MirrorSourceConnector", exposed["alias"], "tgt")
        if attribute == "record-count":
            counts[(tags["topic"], tags["partition"])] = value
    assert counts == expected  # the exact target topic names
    assert len(mm2) == 12 * len(expected) and not any(math.isnan(v) for (_, a), v in mm2.items() if "rate" in a)
    spark = {
        name: value
        for (name, attribute), value in beans.items()
        if name.startswith("metrics:") and attribute == "Value"
    }
    prefix = "metrics:name=secure-mirror.driver.kafka.connect.mirror.MirrorSourceConnector"
    prefix += f".source.{exposed['alias']}.target.tgt"
    assert {name: value for name, value in spark.items() if name.endswith(".record-count,type=gauges")} == {
        f"{prefix}.topic.{topic}.partition.{p}.record-count,type=gauges": n for (topic, p), n in expected.items()
    }  # Spark's JmxSink: its Dropwizard JmxReporter's copy of the job's source
    # What the dashboard reads: the JMX exporter agent's series with monitoring/jmx-exporter.yml, as Prometheus stored
    # them from it (every MBean attribute JmxTool read, under MirrorMaker 2's names, with the exact target topics)
    assert exposed["stored"]["up"]["secure-mirror-jmx"] == 1, exposed["prometheus_log"]
    exported = _of(exposed["stored"]["jmx"], SERIES)
    assert set(exported) == {_exported(name, attribute) for name, attribute in mm2}, sorted(exposed["stored"]["jmx"])
    assert _counted(exported, "record_count") == expected
    for attribute in ("record-count", "byte-count"):  # settled before JmxTool read them
        assert {_exported(n, a): v for (n, a), v in mm2.items() if a == attribute} == {
            key: value for key, value in exported.items() if key[0] == SERIES + attribute.replace("-", "_")
        }


def test_the_task_errors_are_connects_task_error_metrics_with_the_wait(exposed):
    """The driver's ride watch publishes Kafka Connect's error metrics of MirrorMaker 2's task 0 (docs/metrics.md): a
    run with no failure says 0 retries and no wait, at JmxTool and through the JMX exporter's rule."""
    bean = "kafka.connect:type=task-error-metrics,connector=MirrorSourceConnector,task=0"
    task = {attribute: value for (name, attribute), value in exposed["jmx"].items() if name == bean}
    assert {"total-retries", "last-error-timestamp", "waiting-seconds", "waits-ridden-total"} <= set(task), task
    assert task["total-retries"] == task["waiting-seconds"] == task["last-error-timestamp"] == 0, task
    labels = (("connector", "MirrorSourceConnector"), ("task", "0"))
    stored = {name: value for (name, found), value in exposed["stored"]["task"].items() if found == labels}
    assert stored.get("kafka_connect_task_error_metrics_total_retries") == 0, exposed["stored"]["task"]
    assert stored.get("kafka_connect_task_error_metrics_waiting_seconds") == 0, exposed["stored"]["task"]


def _exported(bean: str, attribute: str) -> tuple[str, tuple[tuple[str, str], ...]]:
    """The series an MBean's attribute is, as docs/metrics.md and monitoring/prometheus.yml's comment promise it:
    ``kafka_connect_mirror_<type, lower case>_<attribute, '-' read as '_'>`` with its key properties but ``type`` as
    labels, values exact."""
    keys = dict(pair.split("=") for pair in bean.partition(":")[2].split(","))
    name = f"kafka_connect_mirror_{keys.pop('type').lower()}_{attribute.replace('-', '_')}"
    return name, tuple(sorted(keys.items()))


def _of(series: dict, prefix: str) -> dict:
    return {key: value for key, value in series.items() if key[0].startswith(prefix)}


def _latencies_in_metrics_file(lines: list[dict]) -> dict[tuple[str, str, str], set[float]]:
    """(group, target topic, partition) -> every checkpoint-latency-ms the group sync wrote for it."""
    found: dict[tuple[str, str, str], set[float]] = {}
    for line in lines:
        for row in line.get("checkpoints", {}).get("figures", []):
            key = (row["group"], row["topic"], str(row["partition"]))
            found.setdefault(key, set()).add(float(row["checkpoint-latency-ms"]))
    return found


def test_the_group_syncs_checkpoints_are_mirrormaker2s_checkpoint_connector(exposed):
    target_topic = exposed["case"].profile.target_topic(exposed["case"].topic("a"))
    written = _latencies_in_metrics_file(exposed["lines"])
    assert set(written) == {(exposed["group"], target_topic, str(p)) for p in COMMITTED}, exposed["lines"][-3:]
    beans = {}
    for (name, attribute), value in exposed["jmx"].items():
        if name.startswith("kafka.connect.mirror:type=MirrorCheckpointConnector,"):
            keys = [pair.split("=") for pair in name.partition(":")[2].split(",")]
            assert [k for k, _ in keys] == ["type", "source", "target", "group", "topic", "partition"]  # MM2's order
            tags = dict(keys)
            assert (tags["source"], tags["target"]) == (exposed["alias"], "tgt")
            beans.setdefault((tags["group"], tags["topic"], tags["partition"]), {})[attribute] = value
    assert set(beans) == set(written)
    for key, bean in beans.items():
        assert sorted(bean) == sorted(LATENCIES)
        assert bean["checkpoint-latency-ms"] in written[key]  # the latest the driver read from the file
        assert 0 <= bean["checkpoint-latency-ms-min"] <= bean["checkpoint-latency-ms-max"] < 60_000 or all(
            math.isnan(bean[a]) for a in LATENCIES[1:]
        )  # NaN once the checkpoint is over 60 s old
    exported = _of(exposed["stored"]["jmx"], CHECKPOINTS)  # the JMX exporter agent's, as Prometheus stored them
    assert set(exported) == {
        _exported(name, attribute) for name, attribute in exposed["jmx"] if "=MirrorCheckpointConnector," in name
    }, sorted(exposed["stored"]["jmx"])
    assert {(name, dict(labels)["group"], dict(labels)["topic"]) for name, labels in exported} == {
        (CHECKPOINTS + a.replace("-", "_"), exposed["group"], target_topic) for a in LATENCIES
    }
    series = _of(exposed["stored"]["spark"], CHECKPOINTS)  # Spark's endpoint, after monitoring/prometheus.yml's rules
    assert {tuple(k for k, _ in labels) for _, labels in series} == {
        ("group", "partition", "source", "target", "topic", "type")
    }, sorted(exposed["stored"]["spark"])
    latest = {
        (dict(labels)["group"], dict(labels)["partition"]): value
        for (name, labels), value in series.items()
        if name == CHECKPOINTS + "checkpoint_latency_ms"
    }
    assert {key: value in written[(exposed["group"], target_topic, key[1])] for key, value in latest.items()} == {
        (exposed["group"].replace("-", "_"), str(p)): True for p in COMMITTED
    }


def test_no_option_reaches_a_name_or_a_tag(exposed):
    stored = {**exposed["stored"]["spark"], **exposed["stored"]["jmx"]}
    lines = exposed["text"].splitlines() + exposed["agent_text"].splitlines()  # each endpoint's own text
    names = [line for line in lines if "kafka_connect_mirror" in line and not line.startswith("#")]
    names += [name for name, _ in exposed["jmx"]] + [value for _, labels in stored for _, value in labels]
    assert len(names) > 4 * 12 * 3 and any(text.endswith("sasl.jaas.config") for text in exposed["options"])
    assert sorted({text for text in exposed["options"] for name in names if text in name}) == []
