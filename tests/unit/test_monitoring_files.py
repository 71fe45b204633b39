"""monitoring/: the Grafana dashboard reads only MirrorMaker 2's series (the names and labels the JMX exporter rules
and the Prometheus relabelling give), and those two configurations turn the job's MBeans and Spark's PrometheusServlet
lines into exactly those series. tests/integration/test_metrics_live.py does the same against a running job."""

from __future__ import annotations

import json
import re

from tests.support.exposition import ATTRIBUTES, MONITORING, jmx_exporter, parse_text, relabelled, scrape_job

SERIES = {f"kafka_connect_mirror_mirrorsourceconnector_{a.replace('-', '_')}" for a in ATTRIBUTES}
LABELS = {"source", "target", "topic", "partition"}


def _exprs(dashboard: dict) -> list[str]:
    return [target["expr"] for panel in dashboard["panels"] for target in panel.get("targets", [])]


def test_the_dashboard_reads_mirrormaker2_series_and_labels_only():
    dashboard = json.loads((MONITORING / "grafana-dashboard.json").read_text(encoding="utf-8"))
    exprs = _exprs(dashboard) + [v["query"]["query"] for v in dashboard["templating"]["list"] if v["type"] == "query"]
    named = {name for expr in exprs for name in re.findall(r"kafka_connect_mirror_\w+", expr)}
    assert named and named <= SERIES
    used = {label for expr in exprs for label in re.findall(r"(\w+)=~", expr)}
    used |= {
        label.strip() for expr in exprs for group in re.findall(r"by \(([^)]*)\)", expr) for label in group.split(",")
    }
    used |= {m for expr in exprs for m in re.findall(r"label_values\(\w+, (\w+)\)", expr)}
    assert used <= LABELS, used - LABELS
    assert len({panel["id"] for panel in dashboard["panels"]}) == len(dashboard["panels"])


def _servlet_line(namespace: str, source: str, target: str, topic: str, partition: int, attribute: str) -> str:
    """A gauge of the job's Spark source as Spark's PrometheusServlet prints it (its normalizeKey)."""
    key = f"{namespace}.driver.kafka.connect.mirror.MirrorSourceConnector.source.{source}.target.{target}"
    key += f".topic.{topic}.partition.{partition}.{attribute}"
    flat = "metrics_" + re.sub(r"[^a-zA-Z0-9]", "_", key) + "_"
    return f'{flat}Number{{type="gauges"}} 7.0\n{flat}Value{{type="gauges"}} 7.0\n'


def test_the_relabelling_turns_sparks_flattened_names_into_mirrormaker2_series():
    text = "".join(
        _servlet_line(namespace, "src", "tgt-2", "src.orders-eu", 3, attribute)
        for namespace in ("secure-mirror", "local-1795608559689")  # spark.metrics.namespace, or the app id
        for attribute in ATTRIBUTES
    )
    text += 'metrics_secure_mirror_driver_BlockManager_memory_maxMem_MB_Value{type="gauges"} 434.0\n'
    series = relabelled(parse_text(text), scrape_job("secure-mirror-spark")["metric_relabel_configs"])
    labels = (
        ("partition", "3"),
        ("source", "src"),
        ("target", "tgt_2"),
        ("topic", "src_orders_eu"),
        ("type", "gauges"),
    )
    assert {name for name, found in series if found == labels} == SERIES  # each once: the _Number twins dropped
    assert len(series) == len(SERIES) + 1
    assert ("metrics_secure_mirror_driver_BlockManager_memory_maxMem_MB_Value", (("type", "gauges"),)) in series


def test_the_exporter_rule_names_the_mbeans_as_mirrormaker2_dashboards_read_them():
    tagged = "kafka.connect.mirror:type=MirrorSourceConnector,source=src,target=tgt,topic=src.orders-eu,partition=3"
    untagged = "kafka.connect.mirror:type=MirrorSourceConnector,target=tgt,topic=src.orders-eu,partition=3"  # < 4.0
    beans = {(name, attribute): 1.0 for name in (tagged, untagged) for attribute in ATTRIBUTES}
    beans[("kafka.connect.mirror:type=kafka-metrics-count", "count")] = 13.0
    exposed = jmx_exporter(beans)
    labels = (("partition", "3"), ("target", "tgt"), ("topic", "src.orders-eu"))
    assert {name for name, found in exposed if found == (*labels[:1], ("source", "src"), *labels[1:])} == SERIES
    assert {name for name, found in exposed if found == labels} == SERIES
    assert len(exposed) == 2 * len(SERIES)
