"""monitoring/: the Grafana dashboard reads only MirrorMaker 2's series (the names and labels the JMX exporter rules
and the Prometheus relabelling give), and those two configurations turn the job's MBeans and Spark's PrometheusServlet
lines into exactly those series. tests/integration/test_metrics_live.py does the same against a running job."""

from __future__ import annotations

import json
import re

from tests.support.exposition import ATTRIBUTES, MONITORING, jmx_exporter, parse_text, relabelled, scrape_job

SERIES = {f"kafka_connect_mirror_mirrorsourceconnector_{a.replace('-', '_')}" for a in ATTRIBUTES}
LABELS = {"source", "target", "topic", "partition"}
# MirrorMaker 2's MirrorCheckpointConnector (connect/mirror MirrorCheckpointMetrics): tagged by group too
CHECKPOINT_ATTRIBUTES = ["checkpoint-latency-ms", "checkpoint-latency-ms-max", "checkpoint-latency-ms-min"]
CHECKPOINT_ATTRIBUTES += ["checkpoint-latency-ms-avg"]
CHECKPOINT_SERIES = {
    f"kafka_connect_mirror_mirrorcheckpointconnector_{a.replace('-', '_')}" for a in CHECKPOINT_ATTRIBUTES
}


def _exprs(dashboard: dict) -> list[str]:
    return [target["expr"] for panel in dashboard["panels"] for target in panel.get("targets", [])]


def test_the_dashboard_reads_mirrormaker2_series_and_labels_only():
    dashboard = json.loads((MONITORING / "grafana-dashboard.json").read_text(encoding="utf-8"))
    exprs = _exprs(dashboard) + [v["query"]["query"] for v in dashboard["templating"]["list"] if v["type"] == "query"]
    named = {name for expr in exprs for name in re.findall(r"kafka_connect_mirror_\w+", expr)}
    assert named and named <= SERIES | CHECKPOINT_SERIES and named & CHECKPOINT_SERIES
    used = {label for expr in exprs for label in re.findall(r"(\w+)=~", expr)}
    used |= {
        label.strip() for expr in exprs for group in re.findall(r"by \(([^)]*)\)", expr) for label in group.split(",")
    }
    used |= {m for expr in exprs for m in re.findall(r"label_values\(\w+, (\w+)\)", expr)}
    assert used <= LABELS | {"group"}, used - LABELS
    assert len({panel["id"] for panel in dashboard["panels"]}) == len(dashboard["panels"])


def _servlet_line(
    namespace: str, source: str, target: str, topic: str, partition: int, attribute: str, group: str = ""
) -> str:
    """A gauge of the job's Spark source as Spark's PrometheusServlet prints it (its normalizeKey)."""
    kind = "MirrorCheckpointConnector" if group else "MirrorSourceConnector"
    key = f"{namespace}.driver.kafka.connect.mirror.{kind}.source.{source}.target.{target}"
    key += f".group.{group}" * bool(group) + f".topic.{topic}.partition.{partition}.{attribute}"
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


def test_the_checkpoint_series_are_relabelled_and_named_as_mirrormaker2s():
    text = "".join(
        _servlet_line("secure-mirror", "src", "tgt-2", "src.orders-eu", 3, attribute, group="app.billing")
        for attribute in CHECKPOINT_ATTRIBUTES
    )
    series = relabelled(parse_text(text), scrape_job("secure-mirror-spark")["metric_relabel_configs"])
    labels = (("group", "app_billing"), ("partition", "3"), ("source", "src"), ("target", "tgt_2"))
    labels += (("topic", "src_orders_eu"), ("type", "gauges"))
    assert {name for name, found in series if found == labels} == CHECKPOINT_SERIES and len(series) == 4
    tagged = "kafka.connect.mirror:type=MirrorCheckpointConnector,source=src,target=tgt,group=app.billing,"
    tagged += "topic=src.orders-eu,partition=3"
    untagged = tagged.replace("source=src,", "")  # before Kafka 4.0
    exposed = jmx_exporter({(name, a): 1.0 for name in (tagged, untagged) for a in CHECKPOINT_ATTRIBUTES})
    labels = (("group", "app.billing"), ("partition", "3"), ("target", "tgt"), ("topic", "src.orders-eu"))
    assert {name for name, found in exposed if found == (*labels[:2], ("source", "src"), *labels[2:])} == (
        CHECKPOINT_SERIES
    )
    assert {name for name, found in exposed if found == labels} == CHECKPOINT_SERIES and len(exposed) == 8
