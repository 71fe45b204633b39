"""MirrorMaker 2's attribute names and the folder of the monitoring configurations, and the output of Kafka's JmxTool
(``--report-format properties``) read as data (no tests here). The configurations themselves are judged by the real
programs: a Prometheus server (tests/support/prometheus.py) and the Prometheus JMX exporter's agent
(tests/integration/test_monitoring_configs.py, test_metrics_live.py)."""

from __future__ import annotations

from secure_mirror import paths

MONITORING = paths.REPO_ROOT / "monitoring"
ATTRIBUTES = [  # MirrorMaker 2's MirrorSourceConnector attributes (connect/mirror MirrorSourceMetrics)
    "record-count",
    "record-rate",
    "record-age-ms",
    "record-age-ms-max",
    "record-age-ms-min",
    "record-age-ms-avg",
    "byte-count",
    "byte-rate",
    "replication-latency-ms",
    "replication-latency-ms-max",
    "replication-latency-ms-min",
    "replication-latency-ms-avg",
]


def jmx_tool_properties(text: str) -> dict[tuple[str, str], float]:
    """JmxTool's ``properties`` report: ``{(object name, attribute): value}`` (the time line left out)."""
    found = {}
    for line in text.splitlines():
        head, _, value = line.rpartition("=")
        name, _, attribute = head.rpartition(":")
        if name and ":" in name:
            found[(name, attribute)] = float(value)
    return found
