"""Handing each metrics line to the JVM's MirrorMaker 2-named MBeans and Spark source (run/job/metrics_publisher.py):
what is handed over (figures under an alias, a target topic and a partition; never an option), that the reporter
hands every line it writes, and that a failure is told once and never stops the mirror; and the group sync's checkpoints
lines read from the metrics file (as run/groups/sync.py writes them) and handed over as MirrorCheckpointConnector
figures."""

from __future__ import annotations

import io
import json
import time

from secure_mirror.run.groups.checkpoints import Checkpoint
from secure_mirror.run.groups.sync import latency_line
from secure_mirror.run.job.metrics_publisher import (
    CheckpointTail,
    MetricsPublisher,
    checkpoint_figures,
    complete_lines,
    mm2_figures,
)
from secure_mirror.run.metrics_line import batch_line
from secure_mirror.run.monitor import Reporter
from tests.unit.run.test_monitor import BATCH, PROGRESS, _Batches, _Query

ALIASES = ("src", "tgt")


class _Jvm:
    """py4j's view of the driver JVM, as far as the publisher uses it."""

    def __init__(self, answer=None, error: Exception | None = None):
        self.calls: list[dict] = []
        self.checkpoint_calls: list[dict] = []
        self.answer, self.error = answer, error
        self.securemirror = self
        self.metrics = self
        self.MirrorMetrics = self

    def update(self, text: str):
        self.calls.append(json.loads(text))
        if self.error is not None:
            raise self.error
        return self.answer

    def checkpoints(self, text: str):
        self.checkpoint_calls.append(json.loads(text))
        return self.answer


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
    publisher = MetricsPublisher(jvm, ALIASES, stream)
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
        publisher = MetricsPublisher(jvm, ALIASES, stream)
        publisher(line)
        publisher(line)  # tried again, not told again
        assert len(jvm.calls) == 2
        said[name] = stream.getvalue().splitlines()
        assert len(said[name]) == 1 and said[name][0].endswith("the mirror goes on and the metrics file has them")
    assert "(RuntimeError: An error occurred while calling z:MirrorMetrics.update)" in said["raised"][0]
    assert "(the JMX MBean ... was not registered)" in said["answered"][0]


def test_a_line_without_partitions_calls_nothing():
    jvm, stream = _Jvm(), io.StringIO()
    MetricsPublisher(jvm, ALIASES, stream)({"partitions": []})
    assert jvm.calls == [] and stream.getvalue() == ""


WRITTEN = [Checkpoint("app", "src.t", 0, 40, 38), Checkpoint("app", "src.t", 1, 7, 7)]


def _sync_line(acknowledged: float, written=WRITTEN) -> dict:
    """A group sync pass's metrics line, as run/groups/sync.py writes it (0.25 s from asking to acknowledgement)."""
    return latency_line(written, acknowledged - 0.25, acknowledged, "src", "tgt")


def test_a_checkpoints_line_gives_mm2s_tags_and_latency_only():
    now = time.time()
    payload = checkpoint_figures(_sync_line(now), since=now - 1)
    assert payload == {
        "source": "src",
        "target": "tgt",
        "time": round(now * 1000),
        "figures": [
            {"group": "app", "topic": "src.t", "partition": 0, "checkpoint-latency-ms": 250},
            {"group": "app", "topic": "src.t", "partition": 1, "checkpoint-latency-ms": 250},
        ],
    }  # the offsets stay in the file: MirrorMaker 2 has no metric for them
    assert checkpoint_figures(_sync_line(now - 5), since=now - 1) is None  # an earlier run's
    assert checkpoint_figures(batch_line(PROGRESS, BATCH, ["src.", ""]), since=0) is None  # the job's own line
    assert checkpoint_figures(_sync_line(now, written=[]), since=0) is None
    odd = _sync_line(now)
    odd["checkpoints"]["figures"][0]["checkpoint-latency-ms"] = "fast"
    assert [row["partition"] for row in checkpoint_figures(odd, since=0)["figures"]] == [1]


def test_only_whole_checkpoints_lines_are_taken():
    sync, batch = json.dumps(_sync_line(1.0)).encode(), json.dumps(batch_line(PROGRESS, BATCH, ["src.", ""])).encode()
    data = b"\n".join([batch, sync, b'{"checkpoints": not json', sync]) + b"\n" + sync[:20]
    lines, used = complete_lines(data)
    assert lines == [_sync_line(1.0), _sync_line(1.0)]
    assert used == len(data) - 20  # the line being written is read next time
    assert complete_lines(b"") == ([], 0)


def test_the_tail_reads_each_new_line_once_and_starts_again_when_the_file_shrinks(tmp_path):
    path, now = tmp_path / "metrics.jsonl", time.time()
    tail = CheckpointTail(str(path), since=now - 60)
    assert tail.read() == []  # no file yet
    old, first, second = (json.dumps(_sync_line(t)) for t in (now - 120, now - 2, now - 1))
    batch = json.dumps(batch_line(PROGRESS, BATCH, ["src.", ""]))
    path.write_text(f"{old}\n{batch}\n{first}\n{second[:30]}")
    assert [p["time"] for p in tail.read()] == [round((now - 2) * 1000)]
    assert tail.read() == []
    with open(path, "a") as handle:
        handle.write(second[30:] + "\n")
    assert [p["time"] for p in tail.read()] == [round((now - 1) * 1000)]
    path.write_text(first + "\n")  # a new file in its place
    assert [p["time"] for p in tail.read()] == [round((now - 2) * 1000)]


def test_the_reporter_hands_the_sync_lines_of_its_metrics_file_over(tmp_path):
    metrics, jvm, stream = tmp_path / "metrics.jsonl", _Jvm(), io.StringIO()
    metrics.write_text(json.dumps(_sync_line(time.time())) + "\n")
    reporter = Reporter(
        str(metrics), 3600.0, ["src.", ""], io.StringIO(), publish=MetricsPublisher(jvm, ALIASES, stream)
    )
    reporter.report(_Query(PROGRESS), _Batches({4: BATCH}))  # its own line goes to the file too, not as checkpoints
    reporter.report(_Query(PROGRESS), _Batches({}))
    assert [(c["source"], c["target"], len(c["figures"])) for c in jvm.checkpoint_calls] == [("src", "tgt", 2)]
    assert len(jvm.calls) == 1 and stream.getvalue() == ""


def test_a_refused_checkpoint_is_told_once_and_the_mirror_goes_on(tmp_path):
    metrics, stream = tmp_path / "metrics.jsonl", io.StringIO()
    metrics.write_text(json.dumps(_sync_line(time.time())) + "\n")
    publisher = MetricsPublisher(_Jvm("a checkpoint's figures were not published: ..."), ALIASES, stream)
    publisher.poll(str(metrics))
    with open(metrics, "a") as handle:
        handle.write(json.dumps(_sync_line(time.time())) + "\n")
    publisher.poll(str(metrics))
    publisher.poll(None)  # no metrics file: nothing to read
    said = stream.getvalue().splitlines()
    assert said == [
        "secure-mirror job: the figures are not all published to JMX and Spark's metrics system (a checkpoint's "
        "figures were not published: ...); the mirror goes on and the metrics file has them"
    ]
