"""Handing each metrics line to the JVM's MirrorMaker 2-named MBeans and Spark source (run/job/metrics_publisher.py):
what is handed over (figures under an alias, a target topic and a partition; never an option), that the reporter
hands every line it writes, and that a failure is told once and never stops the mirror."""

from __future__ import annotations

import io
import json

from secure_mirror.run.job.metrics_publisher import MetricsPublisher, cluster_aliases, mm2_figures
from secure_mirror.run.monitor import Reporter, batch_line
from tests.unit.run.test_monitor import BATCH, PROGRESS, _Batches, _Query

SETTINGS = {
    "source_alias": "src",
    "fingerprint": {"settings": {"source_alias": "src", "target_alias": "tgt"}},
    "target_topic_pieces": ["src.", ""],
}


class _Jvm:
    """py4j's view of the driver JVM, as far as the publisher uses it."""

    def __init__(self, answer=None, error: Exception | None = None):
        self.calls: list[dict] = []
        self.answer, self.error = answer, error
        self.securemirror = self
        self.metrics = self
        self.MirrorMetrics = self

    def update(self, text: str):
        self.calls.append(json.loads(text))
        if self.error is not None:
            raise self.error
        return self.answer


def test_the_aliases_come_from_the_job_settings_and_the_fingerprint():
    assert cluster_aliases(SETTINGS) == ("src", "tgt")
    assert cluster_aliases({**SETTINGS, "target_alias": "t2"}) == ("src", "t2")
    assert cluster_aliases({"source_alias": "src"}) is None


def test_only_figures_go_over_named_by_target_topic_and_partition():
    line = batch_line(PROGRESS, BATCH, ["src.", ""])
    line["partitions"][0]["kafka.sasl.jaas.config"] = "secret"  # whatever else a row held stays behind
    payload = mm2_figures(line, "src", "tgt")
    assert payload["source"] == "src" and payload["target"] == "tgt"
    assert payload["partitions"][0] == {
        "topic": "src.t",
        "partition": 0,
        "record-count": 20,
        "byte-count": 2000,
        "record-age-ms-min": 6000,
        "record-age-ms-avg": 7000,
        "record-age-ms-max": 9000,
        "replication-latency-ms-min": 8000,
        "replication-latency-ms-avg": 9000,
        "replication-latency-ms-max": 11000,
    }
    assert "secret" not in json.dumps(payload)
    epoch_row = {"topic": "t", "partition": 1, "target-topic": "src.t", "record-count": 4, "records-behind": None}
    assert mm2_figures({"partitions": [epoch_row]}, "src", "tgt")["partitions"] == [
        {"topic": "src.t", "partition": 1, "record-count": 4}
    ]


def test_the_reporter_hands_every_line_it_writes_to_the_publisher(tmp_path):
    jvm, stream = _Jvm(), io.StringIO()
    publisher = MetricsPublisher(jvm, SETTINGS, stream)
    reporter = Reporter(None, 3600.0, ["src.", ""], io.StringIO(), publish=publisher)  # no metrics file: still handed
    reporter.report(
        _Query(PROGRESS, {**PROGRESS, "batchId": 5, "numInputRows": 0, "sources": []}), _Batches({4: BATCH})
    )
    assert [[(row["topic"], row["partition"]) for row in call["partitions"]] for call in jvm.calls] == [
        [("src.t", 0), ("src.t", 1)]
    ]
    assert stream.getvalue() == ""


def test_a_failure_is_told_once_and_the_mirror_goes_on():
    line = batch_line(PROGRESS, BATCH, ["src.", ""])
    raising = _Jvm(error=RuntimeError("An error occurred while calling z:MirrorMetrics.update\nat ..."))
    said = {}
    for name, jvm in (("raised", raising), ("answered", _Jvm("the JMX MBean ... was not registered"))):
        stream = io.StringIO()
        publisher = MetricsPublisher(jvm, SETTINGS, stream)
        publisher(line)
        publisher(line)  # tried again, not told again
        assert len(jvm.calls) == 2
        said[name] = stream.getvalue().splitlines()
        assert len(said[name]) == 1 and said[name][0].endswith("the mirror goes on and the metrics file has them")
    assert "(RuntimeError: An error occurred while calling z:MirrorMetrics.update)" in said["raised"][0]
    assert "(the JMX MBean ... was not registered)" in said["answered"][0]


def test_a_line_without_partitions_calls_nothing_and_old_settings_are_told_once():
    jvm, stream = _Jvm(), io.StringIO()
    MetricsPublisher(jvm, SETTINGS, stream)({"partitions": []})
    assert jvm.calls == []
    publisher = MetricsPublisher(jvm, {"source_alias": "src"}, stream)
    publisher({"partitions": []})
    publisher({"partitions": []})
    assert jvm.calls == [] and len(stream.getvalue().splitlines()) == 1
