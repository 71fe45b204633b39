"""The monitor: the figures and status line of a batch (pure), and the reporter writing them."""

import io
import json

from secure_mirror.run.metrics_line import (
    batch_figures,
    batch_line,
    epoch_line,
    parse_offsets,
    partition_metrics,
    records_behind,
)
from secure_mirror.run.monitor import Reporter
from secure_mirror.run.status_lines import epoch_status, status_text


def _line(**changes):
    line = {
        "batch": 0,
        "record-count": 500,
        "records-in-per-sec": 0.0,
        "records-out-per-sec": 250.0,
        "byte-count": 512000,
        "batch-duration-ms": 2000,
        "records-behind": 0,
    }
    return {**line, **changes}


def test_a_first_batch_has_no_input_rate_rather_than_zero():
    assert status_text(_line()) == (
        "batch 0: 500 records, in n/a, out 250/s, 250.0 KiB/s, took 2000 ms, 0 behind the source"
    )


def test_later_batches_show_the_input_rate():
    assert "in 120/s, out 250/s" in status_text(_line(batch=3, **{"records-in-per-sec": 120.4}))
    assert "0 records, in 0/s" in status_text(_line(**{"record-count": 0}))


# ---- the figures of a batch, from a query progress and what the job recorded while writing --------------------
PROGRESS = {
    "timestamp": "2026-11-22T10:00:00.000Z",
    "batchId": 4,
    "numInputRows": 30,
    "inputRowsPerSecond": 14.96,
    "processedRowsPerSecond": 20.04,
    "durationMs": {"triggerExecution": 1500},
    "sources": [{"endOffset": '{"t":{"0":20,"1":10}}', "latestOffset": {"t": {"0": 25, "1": 10, "2": 4}}}],
}
SINK_ROWS = [  # what the sink reported for the batch, per source partition (jvm/sink Figures)
    {
        "topic": "t",
        "partition": 0,
        "target-topic": "src.t",
        "partition-kept": True,
        "record-count": 20,
        "byte-count": 2000,
        "skipped-count": 0,
        "first-offset": 0,
        "last-offset": 19,
        "record-age-ms-min": 6000,
        "record-age-ms-avg": 7000,
        "record-age-ms-max": 9000,
        "replication-latency-ms-min": 8000,
        "replication-latency-ms-avg": 9000,
        "replication-latency-ms-max": 11000,
    },
    {
        "topic": "t",
        "partition": 1,
        "target-topic": "src.t",
        "partition-kept": True,
        "record-count": 10,
        "byte-count": 1000,
        "skipped-count": 0,
        "first-offset": 0,
        "last-offset": 9,
        "record-age-ms-min": 7000,
        "record-age-ms-avg": 8500,
        "record-age-ms-max": 8800,
        "replication-latency-ms-min": 9000,
        "replication-latency-ms-avg": 10500,
        "replication-latency-ms-max": 10800,
    },
]
BATCH = {
    "started": 10.0,
    "written": 12.0,
    "keep": {"t": True},
    "ranges": {("t", 0): (0, 20), ("t", 1): (0, 10), ("t", 2): (4, 4)},
    "figures": SINK_ROWS,
}


def test_parse_offsets_reads_json_text_or_a_dict_and_ignores_anything_else():
    assert parse_offsets('{"a":{"0":5,"1":7}}') == {("a", 0): 5, ("a", 1): 7}
    assert parse_offsets({"a": {"2": 1}}) == {("a", 2): 1}
    assert parse_offsets("not json") == {} and parse_offsets(None) == {} and parse_offsets({"a": 3}) == {}


def test_records_behind_is_the_latest_offset_minus_the_offset_reached_per_partition():
    assert records_behind(PROGRESS) == {("t", 0): 5, ("t", 1): 0, ("t", 2): 0}  # t-2 unknown to the batch: 0
    assert records_behind({}) == {}


def test_partition_metrics_list_the_offsets_each_partition_covered_with_the_sinks_figures():
    assert partition_metrics(BATCH, ["src.", ""]) == SINK_ROWS  # t-2 covered nothing
    assert partition_metrics({**BATCH, "figures": []}, ["src.", ""]) == [
        {
            "topic": "t",
            "partition": 0,
            "target-topic": "src.t",
            "partition-kept": True,
            "record-count": 20,
            "first-offset": 0,
            "last-offset": 19,
        },
        {
            "topic": "t",
            "partition": 1,
            "target-topic": "src.t",
            "partition-kept": True,
            "record-count": 10,
            "first-offset": 0,
            "last-offset": 9,
        },
    ]  # without the sink's figures: the offsets alone


def test_partition_metrics_count_what_the_sink_wrote_and_skipped():
    replayed = {**SINK_ROWS[0], "record-count": 0, "skipped-count": 20, "byte-count": 0}
    for name in ("record-age-ms", "replication-latency-ms"):
        for end in ("min", "avg", "max"):
            replayed.pop(f"{name}-{end}")
    rows = partition_metrics({**BATCH, "figures": [replayed]}, ["src.", ""])
    assert (rows[0]["record-count"], rows[0]["skipped-count"]) == (0, 20)
    assert batch_figures({**BATCH, "figures": [replayed]}) == {"byte-count": 0, "byte-rate": 0.0}


def test_batch_figures_carry_mirrormaker_2_names():
    figures = batch_figures(BATCH)
    assert figures == {
        "byte-count": 3000,
        "byte-rate": 1500.0,
        "record-age-ms-min": 6000,
        "record-age-ms-avg": 7500,
        "record-age-ms-max": 9000,
        "replication-latency-ms-min": 8000,
        "replication-latency-ms-avg": 9500,
        "replication-latency-ms-max": 11000,
    }
    assert batch_figures({**BATCH, "figures": []}) == {"byte-count": 0, "byte-rate": 0.0}  # nothing written: no ages


def test_batch_line_is_the_metrics_file_line():
    line = batch_line(PROGRESS, BATCH, ["src.", ""])
    assert {
        key: line[key]
        for key in (
            "batch",
            "record-count",
            "records-in-per-sec",
            "records-out-per-sec",
            "byte-count",
            "batch-duration-ms",
            "records-behind",
        )
    } == {
        "batch": 4,
        "record-count": 30,
        "records-in-per-sec": 15.0,
        "records-out-per-sec": 20.0,
        "byte-count": 3000,
        "batch-duration-ms": 1500,
        "records-behind": 5,
    }
    assert [row["records-behind"] for row in line["partitions"]] == [5, 0]
    assert line["duration-ms"] == {"triggerExecution": 1500}  # Spark's phases, as its progress has them
    assert batch_line(PROGRESS, None, ["src.", ""])["partitions"] == []  # a batch the job did not record


class _Query:
    """What Reporter.report reads from a StreamingQuery: its recent progress (dicts, as after .json)."""

    def __init__(self, *progress):
        self.recentProgress = list(progress)


class _Batches:
    def __init__(self, batches):
        self.batches = batches


def test_the_reporter_writes_each_batch_once_to_the_metrics_file_and_the_status_stream(tmp_path):
    metrics, stream = tmp_path / "metrics.jsonl", io.StringIO()
    reporter = Reporter(str(metrics), 3600.0, ["src.", ""], stream)
    empty = {**PROGRESS, "batchId": 5, "numInputRows": 0, "sources": []}
    query = _Query(PROGRESS, empty)
    reporter.report(query, _Batches({4: BATCH}))
    reporter.report(query, _Batches({}))  # the same progress again: nothing new
    reporter.finish()
    lines = [json.loads(line) for line in metrics.read_text().splitlines()]
    assert [line["batch"] for line in lines] == [4]  # batch 5 had no records: no line
    printed = stream.getvalue().splitlines()
    assert len(printed) == 1  # not a terminal: one timestamped line per batch
    assert printed[0].endswith("batch 4: 30 records, in 15/s, out 20/s, 2.0 KiB/s, took 1500 ms, 5 behind the source")


def test_the_reporter_never_writes_through_a_link_put_in_the_metrics_files_place(tmp_path, capsys):
    """The metrics file's folder may be writable by others: a symbolic link put there while the job runs is refused
    once, with a sentence, and the file it points at is left as it was; the mirror goes on."""
    victim, metrics = tmp_path / "victim", tmp_path / "metrics.jsonl"
    victim.write_text("mine\n")
    metrics.symlink_to(victim)
    reporter = Reporter(str(metrics), 3600.0, ["src.", ""], io.StringIO())
    reporter.report(_Query(PROGRESS), _Batches({4: BATCH}))
    reporter.report(_Query({**PROGRESS, "batchId": 5}), _Batches({5: BATCH}))
    assert victim.read_text() == "mine\n" and metrics.is_symlink()
    assert capsys.readouterr().err.splitlines() == [
        f"secure-mirror job: --metrics-file {metrics} is a symbolic link now, and nothing is written through one: the "
        "figures are no longer written to it (remove the link, and start the run again to have them)"
    ]


def _epoch(figures, duration=500):
    return {
        "epoch": 7,
        "committed": 1795460000.0,
        "duration-ms": duration,
        "keep": {"t": True},
        "ranges": {("t", 0): (10, 14), ("t", 1): (3, 3)},
        "figures": figures,
    }


def test_an_epoch_line_carries_the_sinks_figures_and_says_what_is_not_available():
    sink = {
        "topic": "t",
        "partition": 0,
        "record-count": 4,
        "byte-count": 400,
        "skipped-count": 0,
        "record-age-ms-min": 5,
        "record-age-ms-avg": 8,
        "record-age-ms-max": 12,
        "replication-latency-ms-min": 400,
        "replication-latency-ms-avg": 450,
        "replication-latency-ms-max": 500,
    }
    line = epoch_line(_epoch([sink]), ["src.", ""])
    assert line == {
        "time": "2026-11-23T18:53:19.500Z",
        "epoch": 7,
        "record-count": 4,
        "records-in-per-sec": None,
        "records-out-per-sec": 8.0,
        "byte-count": 400,
        "byte-rate": 800.0,
        "record-age-ms-min": 5,
        "record-age-ms-avg": 8,
        "record-age-ms-max": 12,
        "epoch-duration-ms": 500,
        "records-behind": None,
        "partitions": [
            {
                "topic": "t",
                "partition": 0,
                "target-topic": "src.t",
                "partition-kept": True,
                "record-count": 4,
                "first-offset": 10,
                "last-offset": 13,
                "byte-count": 400,
                "skipped-count": 0,
                "record-age-ms-min": 5,
                "record-age-ms-avg": 8,
                "record-age-ms-max": 12,
                "records-behind": None,
            }
        ],
    }
    assert epoch_status(line) == (
        "epoch 7: 4 records, out 8/s, 0.8 KiB/s, epoch 500 ms, behind the source n/a (secure-mirror lag)"
    )


def test_an_epoch_without_the_sinks_report_is_not_counted_as_empty():
    line = epoch_line(_epoch(None, duration=None), ["", ""])
    assert line["record-count"] is None and line["records-out-per-sec"] is None and "byte-rate" not in line
    assert epoch_status(line).startswith("epoch 7: n/a records, out n/a, n/a KiB/s, epoch n/a")
