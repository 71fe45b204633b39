"""monitoring/: the Grafana dashboard reads only MirrorMaker 2's series (the names and labels the JMX exporter rules
and the Prometheus relabelling give). That those two configurations turn the job's MBeans and Spark's
PrometheusServlet lines into exactly those series is judged by a real Prometheus server and the real JMX exporter
agent: tests/integration/test_monitoring_configs.py (no cluster) and test_metrics_live.py (a running job)."""

from __future__ import annotations

import json
import re

from tests.support.exposition import ATTRIBUTES, MONITORING

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
