"""monitoring/'s two configurations, judged by the real programs without a cluster: a real Prometheus server (Debian's,
tests/support/prometheus.py) scrapes, with monitoring/prometheus.yml's two jobs and their ``metric_relabel_configs``,

- a loopback endpoint serving lines as Spark's PrometheusServlet prints the job's gauges (its normalizeKey: every
  character but a letter or digit read as '_'; each gauge twice, ``_Number`` and ``_Value``), and
- the Prometheus JMX exporter's own Java agent (.deps/jmx-exporter, fetched by scripts/setup) with
  monitoring/jmx-exporter.yml, in a small JVM holding MBeans named as MirrorMaker 2's (tests/support/MBeans.java):
  Kafka 4's, tagged with the source alias, and earlier ones without it.

tests/integration/test_metrics_live.py does the same against a running job; these cover what one run does not draw:
a namespace that is Spark's application id, aliases and topics holding '-' and '.', a group holding '.', MirrorMaker
2 before Kafka 4.0, a gauge that is not the mirror's.
"""

from __future__ import annotations

import re
import subprocess
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from secure_mirror import paths
from tests.support.exposition import ATTRIBUTES, MONITORING
from tests.support.prometheus import Prometheus, free_port

pytestmark = pytest.mark.jvm
SERIES = {f"kafka_connect_mirror_mirrorsourceconnector_{a.replace('-', '_')}" for a in ATTRIBUTES}
# MirrorMaker 2's MirrorCheckpointConnector (connect/mirror MirrorCheckpointMetrics): tagged by group too
CHECKPOINT_ATTRIBUTES = ["checkpoint-latency-ms", "checkpoint-latency-ms-max", "checkpoint-latency-ms-min"]
CHECKPOINT_ATTRIBUTES += ["checkpoint-latency-ms-avg"]
CHECKPOINT_SERIES = {
    f"kafka_connect_mirror_mirrorcheckpointconnector_{a.replace('-', '_')}" for a in CHECKPOINT_ATTRIBUTES
}
NAMESPACES = ("secure-mirror", "local-1795608559689")  # spark.metrics.namespace, or the application id
OTHER_GAUGE = "metrics_secure_mirror_driver_BlockManager_memory_maxMem_MB_Value"
SOURCE_BEAN = "kafka.connect.mirror:type=MirrorSourceConnector,source=src,target=tgt,topic=src.orders-eu,partition=10"
CHECKPOINT_BEAN = "kafka.connect.mirror:type=MirrorCheckpointConnector,source=src,target=tgt,group=app.billing,"
CHECKPOINT_BEAN += "topic=src.orders-eu,partition=10"
PROGRAM = paths.REPO_ROOT / "tests" / "support" / "MBeans.java"


def _servlet_line(
    namespace: str, source: str, target: str, topic: str, partition: int, attribute: str, group: str = ""
) -> str:
    """A gauge of the job's Spark source as Spark's PrometheusServlet prints it (its normalizeKey)."""
    kind = "MirrorCheckpointConnector" if group else "MirrorSourceConnector"
    key = f"{namespace}.driver.kafka.connect.mirror.{kind}.source.{source}.target.{target}"
    key += f".group.{group}" * bool(group) + f".topic.{topic}.partition.{partition}.{attribute}"
    flat = "metrics_" + re.sub(r"[^a-zA-Z0-9]", "_", key) + "_"
    return f'{flat}Number{{type="gauges"}} 7.0\n{flat}Value{{type="gauges"}} 7.0\n'


def _servlet_text() -> str:
    text = "".join(
        _servlet_line(namespace, "src", "tgt-2", "src.orders-eu", 10, attribute)
        for namespace in NAMESPACES
        for attribute in ATTRIBUTES
    )
    text += "".join(
        _servlet_line("secure-mirror", "src", "tgt-2", "src.orders-eu", 10, attribute, group="app.billing")
        for attribute in CHECKPOINT_ATTRIBUTES
    )
    return text + f'{OTHER_GAUGE}{{type="gauges"}} 434.0\n'


class _Servlet(BaseHTTPRequestHandler):
    body = _servlet_text().encode()

    def do_GET(self) -> None:
        self.send_response(200 if self.path == "/metrics/prometheus" else 404)
        self.send_header("Content-Type", "text/plain; version=0.0.4")
        self.end_headers()
        self.wfile.write(self.body if self.path == "/metrics/prometheus" else b"")

    def log_message(self, *_args) -> None:
        pass


def _beans() -> dict[tuple[str, str], float]:
    """Kafka 4's MBeans (tagged with the source alias) and the same before Kafka 4.0 (untagged), and one of Kafka's
    own beans in the same domain; each attribute a different value."""
    names = [SOURCE_BEAN, SOURCE_BEAN.replace("source=src,", "")]
    beans = {
        (name, attribute): float(i) for i, (name, attribute) in enumerate((n, a) for n in names for a in ATTRIBUTES)
    }
    checkpoints = [CHECKPOINT_BEAN, CHECKPOINT_BEAN.replace("source=src,", "")]
    beans |= {(n, a): 100.0 + i for i, (n, a) in enumerate((n, a) for n in checkpoints for a in CHECKPOINT_ATTRIBUTES)}
    beans[("kafka.connect.mirror:type=kafka-metrics-count", "count")] = 13.0
    return beans


def _exporter_agent(port: int) -> str:
    jars = sorted((paths.deps_dir() / "jmx-exporter").glob("jmx_prometheus_javaagent-*.jar"))
    assert jars, "the JMX exporter's agent is not in .deps/jmx-exporter: run scripts/setup"
    return f"-javaagent:{jars[-1]}=127.0.0.1:{port}:{MONITORING / 'jmx-exporter.yml'}"


@pytest.fixture(scope="module")
def stored(tmp_path_factory):
    """What Prometheus stored from each job once both were scraped: ``{job: {(name, labels): value}}``."""
    folder = tmp_path_factory.mktemp("monitoring-configs")
    servlet = ThreadingHTTPServer(("127.0.0.1", 0), _Servlet)
    threading.Thread(target=servlet.serve_forever, daemon=True).start()
    agent = free_port()
    argv = [paths.java_executable(), "-XX:TieredStopAtLevel=1", "-Xmx128m", _exporter_agent(agent), str(PROGRAM)]
    with open(folder / "jvm.err", "w") as err:
        jvm = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=err, text=True)
    try:
        assert jvm.stdin is not None and jvm.stdout is not None
        jvm.stdin.write("".join(f"{n}\t{a}\t{v}\n" for (n, a), v in _beans().items()) + "\n")
        jvm.stdin.flush()
        assert jvm.stdout.readline().strip() == "ready", (folder / "jvm.err").read_text()[-3000:]
        targets = {"secure-mirror-spark": f"127.0.0.1:{servlet.server_port}", "secure-mirror-jmx": f"127.0.0.1:{agent}"}
        with Prometheus(folder, targets) as server:
            deadline = time.monotonic() + 60
            while not all(server.up(job) == 1 for job in targets) and time.monotonic() < deadline:
                time.sleep(0.5)
            assert all(server.up(job) == 1 for job in targets), f"a target was never scraped: {server}"
            yield {job: server.query(f'{{job="{job}",__name__!~"up|scrape_.*"}}') for job in targets}
    finally:
        servlet.shutdown()
        if jvm.stdin is not None:
            jvm.stdin.close()
        jvm.wait(timeout=30)


def test_the_relabelling_turns_sparks_flattened_names_into_mirrormaker2_series(stored):
    series = stored["secure-mirror-spark"]
    labels = (
        ("partition", "10"),
        ("source", "src"),
        ("target", "tgt_2"),
        ("topic", "src_orders_eu"),
        ("type", "gauges"),
    )
    assert {name for name, found in series if found == labels} == SERIES  # each once: the _Number twins dropped
    assert (OTHER_GAUGE, (("type", "gauges"),)) in series  # not the mirror's: left as it was
    assert len(series) == len(SERIES) + len(CHECKPOINT_SERIES) + 1, sorted(series)


def test_the_checkpoint_series_are_relabelled_as_mirrormaker2s(stored):
    labels = (("group", "app_billing"), ("partition", "10"), ("source", "src"), ("target", "tgt_2"))
    labels += (("topic", "src_orders_eu"), ("type", "gauges"))
    series = stored["secure-mirror-spark"]
    assert {name for name, found in series if found == labels} == CHECKPOINT_SERIES, sorted(series)


def test_the_exporter_names_the_mbeans_as_mirrormaker2_dashboards_read_them(stored):
    """Every MirrorMaker 2 attribute, Kafka 4's and earlier, once under its name with its tags as labels and its own
    value; Kafka's other beans and the exporter's and the JVM's own series aside."""
    exposed = {key: v for key, v in stored["secure-mirror-jmx"].items() if key[0].startswith("kafka_connect_mirror_")}
    expected = {}
    for (bean, attribute), value in _beans().items():
        keys = dict(pair.split("=") for pair in bean.partition(":")[2].split(","))
        kind = keys.pop("type")
        if kind.startswith("Mirror"):
            expected[
                (f"kafka_connect_mirror_{kind.lower()}_{attribute.replace('-', '_')}", tuple(sorted(keys.items())))
            ] = value
    assert exposed == expected
    assert {name for name, _ in exposed} == SERIES | CHECKPOINT_SERIES
