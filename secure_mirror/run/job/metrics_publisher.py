"""The job's figures where dashboards look: each metrics line the monitor writes (``run/monitor.py``, one per batch or
continuous epoch) is also handed to the JVM (``jvm/sink`` ``securemirror.metrics.MirrorMetrics``), which keeps them
per target topic-partition as MirrorMaker 2's MBeans (``kafka.connect.mirror:type=MirrorSourceConnector,source=...,
target=...,topic=...,partition=...``) and as a source of Spark's metrics system (its JmxSink, PrometheusServlet).
docs/metrics.md has the names and how to expose them.

What is handed over is figures only, under names that hold the two cluster aliases, the target topic and the
partition: never an option, a path or a secret (the JVM checks each name's characters too). Publishing never fails the
mirror: a failure is said once on stderr and the job goes on (the metrics file still has every figure).
"""

from __future__ import annotations

import json
import sys

from secure_mirror.run.monitor import SINK_FIGURES

# Per topic-partition, what the JVM takes from a metrics line's partition row (MirrorMaker 2's names): the sink's
# figures but its own skipped-count, which MirrorMaker 2 has no name for
PUBLISHED_FIGURES = tuple(name for name in SINK_FIGURES if name != "skipped-count")


def cluster_aliases(settings: dict) -> tuple[str, str] | None:
    """(source alias, target alias) of the job's settings (``spark/job.json``); the target's is in the fingerprint's
    settings (a job.json of an older render may lack them: None)."""
    fingerprint = (settings.get("fingerprint") or {}).get("settings") or {}
    source = settings.get("source_alias") or fingerprint.get("source_alias")
    target = settings.get("target_alias") or fingerprint.get("target_alias")
    return (str(source), str(target)) if source and target else None


def mm2_figures(line: dict, source: str, target: str) -> dict:
    """What the JVM publishes of a metrics line: per target topic-partition the figures of ``PUBLISHED_FIGURES``
    present in its row (ages and latencies may be missing: a continuous epoch has no latency)."""
    rows = []
    for row in line.get("partitions") or []:
        figures = {name: row[name] for name in PUBLISHED_FIGURES if isinstance(row.get(name), int | float)}
        rows.append({"topic": row["target-topic"], "partition": int(row["partition"]), **figures})
    return {"source": source, "target": target, "partitions": rows}


class MetricsPublisher:
    """Called with each metrics line (``monitor.Reporter(publish=...)``); hands its figures to the driver's JVM."""

    def __init__(self, jvm, settings: dict, stream=None):
        self.jvm = jvm
        self.aliases = cluster_aliases(settings)
        self.stream = stream or sys.stderr
        self.told = False

    def __call__(self, line: dict) -> None:
        if self.aliases is None:
            self._tell("the job's settings name no cluster aliases (render the profile again)")
            return
        payload = mm2_figures(line, *self.aliases)
        if not payload["partitions"]:
            return
        try:
            problem = self.jvm.securemirror.metrics.MirrorMetrics.update(json.dumps(payload))
        except Exception as error:  # noqa: BLE001 - publishing the figures must never fail the mirror
            text = str(error).strip().splitlines()
            problem = f"{type(error).__name__}: {text[0][:300] if text else ''}"
        if problem:
            self._tell(str(problem))

    def _tell(self, problem: str) -> None:
        if not self.told:
            self.told = True
            print(
                f"secure-mirror job: the figures are not all published to JMX and Spark's metrics system ({problem}); "
                "the mirror goes on and the metrics file has them",
                file=self.stream,
                flush=True,
            )
