"""Watching the mirror query: a status line per batch (or per interval when idle) and a JSON-lines metrics file.

Each line is one batch. Its figures carry MirrorMaker 2's names where they apply: ``record-count``, ``byte-count``,
``byte-rate``, ``record-age-ms-{min,avg,max}`` (how old a record was when the sink took it) and
``replication-latency-ms-{min,avg,max}`` (from the record's timestamp to the target's acknowledgement), all
gathered by the mirror's sink while it writes (no second pass over the data, no ``observe``). Under ``partitions``,
per topic-partition: the offsets the batch covered, the sink's figures for it (``record-count``, ``byte-count``,
``skipped-count`` - records an exactly_once replay found already on the target, or that came from the target
(the loop filter, docs/provenance.md) - ages and latencies), and
``records-behind`` (the source's end offset minus the offset the batch reached). With heartbeats on, each line and
status line also has the age of the newest heartbeat the target acknowledged (``heartbeat-age-ms``, docs/heartbeats.md),
and the loop that watches the query tells the heartbeat writer when the query proved alive. Each line and status line
also counts the comparisons of the target topics' shape with the source's done since the job started
(``topic-shape-sync-count``, one every ``mirror.topic_shape.interval_seconds``, docs/replica.md).

With ``run --json`` (the job's ``--json``) a status line is a JSON object instead (:class:`StatusLine`: the metrics
line's figures without its partitions, which stay in the metrics file), and so is a notice (:class:`NoticeLine`).
"""

from __future__ import annotations

import errno
import json
import sys
import threading
import time
from collections.abc import Callable
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from secure_mirror import folders
from secure_mirror.run.heartbeats import age_text
from secure_mirror.run.waiting import WaitingLine, waiting_text


def records_behind(progress: dict) -> dict[tuple[str, int], int]:
    """(topic, partition) -> source end offset minus the offset the batch reached, from a query progress."""
    behind: dict[tuple[str, int], int] = {}
    for source in progress.get("sources") or []:
        end, latest = parse_offsets(source.get("endOffset")), parse_offsets(source.get("latestOffset"))
        for key, offset in latest.items():
            behind[key] = max(0, offset - end.get(key, offset))
    return behind


def parse_offsets(value) -> dict[tuple[str, int], int]:
    """(topic, partition) -> offset of a Kafka source offset in a query progress (JSON text or its dict)."""
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            return {}
    if not isinstance(value, dict):
        return {}
    return {
        (topic, int(p)): int(o) for topic, parts in value.items() if isinstance(parts, dict) for p, o in parts.items()
    }


# A symbolic link put in the metrics file's place while the job runs (its folder may be writable by others)
METRICS_LINK = (
    "--metrics-file {} is a symbolic link now, and nothing is written through one: the figures are no longer "
    "written to it (remove the link, and start the run again to have them)"
)
SINK_FIGURES = (
    "record-count",
    "byte-count",
    "skipped-count",
    "record-age-ms-min",
    "record-age-ms-avg",
    "record-age-ms-max",
    "replication-latency-ms-min",
    "replication-latency-ms-avg",
    "replication-latency-ms-max",
)


def partition_metrics(batch: dict, target_pieces: list[str]) -> list[dict]:
    """Per topic-partition: the offsets the batch covered (from the checkpoint's offset log), with the figures the
    sink reported for it (records and bytes written, skipped, age and latency). Without the sink's figures
    ``record-count`` is the number of offsets, which is the number of records except in compacted or transactional
    topics."""
    written = {(row["topic"], row["partition"]): row for row in batch.get("figures") or []}
    rows = []
    for (topic, partition), (start, end) in sorted(batch.get("ranges", {}).items()):
        if end <= start and (topic, partition) not in written:
            continue
        row = {
            "topic": topic,
            "partition": partition,
            "target-topic": topic.join(target_pieces),
            "partition-kept": batch["keep"].get(topic, False),
            "record-count": end - start,
            "first-offset": start,
            "last-offset": end - 1,
        }
        row.update({key: value for key, value in written.get((topic, partition), {}).items() if key in SINK_FIGURES})
        rows.append(row)
    return rows


def _weighted(rows: list[dict], name: str) -> int:
    return round(sum(row[name] * row["record-count"] for row in rows) / sum(row["record-count"] for row in rows))


def batch_figures(batch: dict) -> dict:
    """The batch's MirrorMaker 2-named figures from the sink's, over all partitions: ``byte-count``, ``byte-rate``
    (key and value bytes per second of the write), ``record-age-ms-{min,avg,max}`` (how old a record was when the
    sink took it) and ``replication-latency-ms-{min,avg,max}`` (from the record's timestamp to the target's
    acknowledgement)."""
    rows = [row for row in batch.get("figures") or [] if row.get("record-count")]
    size = sum(row.get("byte-count", 0) for row in rows)
    figures = {"byte-count": size, "byte-rate": round(size / max(batch["written"] - batch["started"], 1e-3), 1)}
    for name in ("record-age-ms", "replication-latency-ms"):
        if rows and all(f"{name}-min" in row for row in rows):
            figures.update(
                {
                    f"{name}-min": min(row[f"{name}-min"] for row in rows),
                    f"{name}-avg": _weighted(rows, f"{name}-avg"),
                    f"{name}-max": max(row[f"{name}-max"] for row in rows),
                }
            )
    return figures


def batch_line(progress: dict, batch: dict | None, target_pieces: list[str]) -> dict:
    behind = records_behind(progress)
    partitions = partition_metrics(batch, target_pieces) if batch else []
    for row in partitions:
        row["records-behind"] = behind.get((row["topic"], row["partition"]), 0)
    return {
        "time": progress.get("timestamp"),
        "batch": progress.get("batchId"),
        "record-count": progress.get("numInputRows", 0),
        "records-in-per-sec": round(progress.get("inputRowsPerSecond") or 0.0, 1),
        "records-out-per-sec": round(progress.get("processedRowsPerSecond") or 0.0, 1),
        "byte-count": 0,
        **(batch_figures(batch) if batch else {}),
        "batch-duration-ms": (progress.get("durationMs") or {}).get("triggerExecution"),
        # Spark's phases of the batch (latestOffset, queryPlanning, getBatch, addBatch, walCommit, commitOffsets, ...)
        "duration-ms": dict(progress.get("durationMs") or {}),
        "records-behind": sum(behind.values()),
        "partitions": partitions,
    }


LATENCY_FIGURES = ("replication-latency-ms-min", "replication-latency-ms-avg", "replication-latency-ms-max")


def epoch_line(batch: dict, target_pieces: list[str]) -> dict:
    """A continuous query's epoch (``run/job/continuous.py``): the sink's figures and the offsets it covered. Spark
    reports no progress for a continuous query, so the rates come from the epoch's span in the commit log, and what
    has no source is ``None`` (not available): the input rate and the records behind the source (``lag`` has them).
    The sink acknowledges a whole epoch when it ends, so its replication latency would be the epoch's length, not
    the records': it is left out (the records' age when the sink took them is kept)."""
    figures = batch.get("figures")
    span = batch.get("duration-ms")
    count = sum(row.get("record-count", 0) for row in figures) if figures is not None else None
    seconds = span / 1000 if span else None
    timed = {**batch, "started": batch["committed"] - (seconds or 0), "written": batch["committed"]}
    partitions = partition_metrics(timed, target_pieces)
    for row in partitions:
        row["records-behind"] = None
        for name in LATENCY_FIGURES:
            row.pop(name, None)
    whole = {k: v for k, v in batch_figures(timed).items() if k not in LATENCY_FIGURES} if figures is not None else {}
    if not seconds:
        whole.pop("byte-rate", None)
    return {
        "time": _iso(timed["started"]),  # the epoch's start (the previous commit), as a batch's progress has it
        "epoch": batch["epoch"],
        "record-count": count,
        "records-in-per-sec": None,
        "records-out-per-sec": round(count / seconds, 1) if count is not None and seconds else None,
        "byte-count": None,
        **whole,
        "epoch-duration-ms": span,
        "records-behind": None,
        "partitions": partitions,
    }


def _iso(seconds: float) -> str:
    """Spark's progress time format: ``2026-11-23T19:06:33.123Z``."""
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(seconds)) + f".{int(seconds * 1000) % 1000:03d}Z"


def epoch_status(line: dict) -> str:
    def shown(value, unit=""):
        return "n/a" if value is None else f"{value:.0f}{unit}"

    rate = line.get("byte-rate")
    return (
        f"epoch {line['epoch']}: {shown(line['record-count'])} records, out {shown(line['records-out-per-sec'], '/s')}, "
        f"{'n/a' if rate is None else f'{rate / 1024:.1f}'} KiB/s, epoch {shown(line['epoch-duration-ms'], ' ms')}, "
        "behind the source n/a (secure-mirror lag)"
    )


def with_heartbeat(text: str, line: dict) -> str:
    """``text`` and the heartbeat's age when the line has one (heartbeats on)."""
    return f"{text}, {age_text(line['heartbeat-age-ms'])}" if "heartbeat-age-ms" in line else text


class StatusLine(BaseModel):
    """``run --json``: a status line, the figures of the metrics file's line (its names; without ``partitions`` and
    Spark's phases). A micro-batch's line has ``batch`` and ``batch-duration-ms``, a continuous query's epoch
    ``epoch`` and ``epoch-duration-ms`` (null: not available); an idle line ``idle`` and the last batch or epoch."""

    model_config = ConfigDict(populate_by_name=True)

    kind: Literal["status"]
    time: str = Field(description="UTC, ISO 8601: the batch's (epoch's) start, or when an idle line was printed")
    batch: int | None = None
    epoch: int | None = None
    idle: bool = Field(False, description="no new records since the last status line")
    record_count: int | None = Field(None, alias="record-count")
    records_in_per_sec: float | None = Field(None, alias="records-in-per-sec")
    records_out_per_sec: float | None = Field(None, alias="records-out-per-sec")
    byte_count: int | None = Field(None, alias="byte-count")
    byte_rate: float | None = Field(None, alias="byte-rate", description="key and value bytes per second")
    batch_duration_ms: int | None = Field(None, alias="batch-duration-ms")
    epoch_duration_ms: int | None = Field(None, alias="epoch-duration-ms")
    records_behind: int | None = Field(None, alias="records-behind", description="records behind the source's end")
    record_age_ms_min: int | None = Field(None, alias="record-age-ms-min")
    record_age_ms_avg: int | None = Field(None, alias="record-age-ms-avg")
    record_age_ms_max: int | None = Field(None, alias="record-age-ms-max")
    replication_latency_ms_min: int | None = Field(None, alias="replication-latency-ms-min")
    replication_latency_ms_avg: int | None = Field(None, alias="replication-latency-ms-avg")
    replication_latency_ms_max: int | None = Field(None, alias="replication-latency-ms-max")
    heartbeat_age_ms: int | None = Field(
        None, alias="heartbeat-age-ms", description="age of the newest heartbeat (heartbeats on; null: none yet)"
    )
    topic_shape_sync_count: int | None = Field(
        None,
        alias="topic-shape-sync-count",
        description="comparisons of the target topics' configs and partitions with the source's since the job started",
    )


class NoticeLine(BaseModel):
    """``run --json``: a notice of the job's (a KDC that does not answer, tickets too short-lived), as its sentence."""

    kind: Literal["notice"]
    message: str


def json_line(line: BaseModel) -> str:
    """A line of ``run --json``: only the fields that apply (a batch's status line has no epoch)."""
    return line.model_dump_json(by_alias=True, exclude_unset=True)


def status_json(line: dict) -> str:
    """A metrics line (or an idle line) as ``run --json`` prints it."""
    return json_line(
        StatusLine.model_validate({"kind": "status", **line, "time": line.get("time") or _iso(time.time())})
    )


def status_text(line: dict) -> str:
    seconds = max((line["batch-duration-ms"] or 0) / 1000, 1e-3)
    # Spark's input rate spans the time since the previous batch: a first (or only) batch has none, not 0/s
    incoming = (
        "n/a" if line["record-count"] and not line["records-in-per-sec"] else f"{line['records-in-per-sec']:.0f}/s"
    )
    return (
        f"batch {line['batch']}: {line['record-count']} records, in {incoming}, "
        f"out {line['records-out-per-sec']:.0f}/s, {line['byte-count'] / seconds / 1024:.1f} KiB/s, "
        f"took {line['batch-duration-ms']} ms, {line['records-behind']} behind the source"
    )


class Reporter:
    def __init__(
        self,
        metrics_file: str | None,
        interval: float,
        target_pieces: list[str],
        stream=None,
        publish: Callable[[dict], None] | None = None,
        json_lines: bool = False,
    ):
        self.metrics_file = metrics_file
        self.publish = publish  # also hands each line's figures on (run/job/metrics_publisher.py); never raises
        self.interval = interval
        self.pieces = target_pieces
        self.stream = stream or sys.stdout
        self.json_lines = json_lines  # run --json: StatusLine objects, one per line
        self.tty = self.stream.isatty() and not json_lines
        self.last_batch = -1
        self.last_print = 0.0
        self.last_text = ""
        self.heart = None  # a run.heartbeat_writer.HeartbeatWriter, set by watch() when heartbeats are on
        self.shape = None  # the job's run.job.planning.TopicPlanner (its shape_syncs), set by watch()
        self.printing = threading.Lock()

    def report(self, query, mirror) -> None:
        if (poll := getattr(self.publish, "poll", None)) is not None:  # lines the group sync appends to the file
            poll(self.metrics_file)
        if getattr(mirror, "continuous", False):
            self.report_epochs(mirror)
            return
        for progress in query.recentProgress:
            progress = json.loads(progress.json) if hasattr(progress, "json") else dict(progress)
            if progress.get("batchId", -1) <= self.last_batch:
                continue
            self.last_batch = progress["batchId"]
            self._alive()
            line = self._stamped(batch_line(progress, mirror.batches.pop(self.last_batch, None), self.pieces))
            if line["record-count"] or line["partitions"]:
                self._write(line)
                self._show(line, status_text)
        if time.monotonic() - self.last_print > self.interval and self.last_text:
            self._idle("batch")

    def _alive(self) -> None:
        if self.heart is not None:
            self.heart.alive()

    def _stamped(self, line: dict) -> dict:
        """``line`` with ``heartbeat-age-ms`` when heartbeats are on, and ``topic-shape-sync-count``."""
        if self.heart is not None and self.heart.enabled:
            line["heartbeat-age-ms"] = self.heart.age_ms()
        if self.shape is not None:
            line["topic-shape-sync-count"] = self.shape.shape_syncs
        return line

    def report_epochs(self, mirror) -> None:
        for batch in mirror.epochs():
            self.last_batch = batch["epoch"]
            self._alive()  # an epoch committed
            line = self._stamped(epoch_line(batch, self.pieces))
            if line["record-count"] is None or line["record-count"] or line["partitions"]:
                self._write(line)
                self._show(line, epoch_status)
        if time.monotonic() - self.last_print > self.interval and self.last_text:
            self._idle("epoch")

    def _idle(self, unit: str) -> None:
        line = self._stamped({unit: self.last_batch, "idle": True})
        self._show(line, lambda _line: f"{unit} {self.last_batch}: idle, waiting for new records")

    def waiting(self, line: WaitingLine) -> None:
        """A wait through a cluster's bad minute (run/job/ride.py): its line, in the metrics file too."""
        self._append(json_line(line))
        self._print(json_line(line) if self.json_lines else waiting_text(line))

    def _show(self, line: dict, text: Callable[[dict], str]) -> None:
        """One status line: ``line`` as JSON (``run --json``), else ``text(line)`` with the heartbeat's age."""
        self._print(status_json(line) if self.json_lines else with_heartbeat(text(line), line))

    def _write(self, line: dict) -> None:
        if self.publish is not None:
            self.publish(line)
        self._append(json.dumps(line))

    def _append(self, text: str) -> None:
        if self.metrics_file:
            try:
                folders.append(self.metrics_file, (text + "\n").encode("utf-8"))
            except OSError as exc:
                if exc.errno != errno.ELOOP:
                    raise
                print(f"secure-mirror job: {METRICS_LINK.format(self.metrics_file)}", file=sys.stderr, flush=True)
                self.metrics_file = None  # said once; the mirror goes on

    def _print(self, text: str) -> None:
        with self.printing:  # the ride watch's waiting lines come from a thread of their own (run/job/ride.py)
            self._print_now(text)

    def _print_now(self, text: str) -> None:
        self.last_text, self.last_print = text, time.monotonic()
        if self.json_lines:
            self.stream.write(text + "\n")
        elif self.tty:
            self.stream.write("\r\033[K" + text)
        else:
            self.stream.write(time.strftime("%H:%M:%S ") + text + "\n")
        self.stream.flush()

    def notices(self) -> NoticeStream | None:
        """Where the job's notices go with ``run --json`` (``LoginWatch(stream=...)``); None: the status lines'
        stream as it is."""
        return NoticeStream(self.stream) if self.json_lines else None

    def finish(self) -> None:
        if self.tty and self.last_text:
            self.stream.write("\n")
            self.stream.flush()


class NoticeStream:
    """A text stream that writes each line written to it as a :class:`NoticeLine` (``run --json``)."""

    def __init__(self, stream):
        self.stream = stream

    def write(self, text: str) -> int:
        for sentence in text.splitlines():
            if sentence.strip():
                self.stream.write(json_line(NoticeLine(kind="notice", message=sentence.strip())) + "\n")
        return len(text)

    def flush(self) -> None:
        self.stream.flush()


def _stop_between_batches(query, timeout: float = 600.0) -> None:
    deadline = time.monotonic() + timeout
    while query.isActive and query.status.get("isTriggerActive") and time.monotonic() < deadline:
        time.sleep(0.05)
    query.stop()


def _heartbeat_writer(mirror):
    """The driver's heartbeat writer for ``mirror`` (None without the sink's options or when they are off)."""
    from secure_mirror.run.heartbeat_writer import HeartbeatWriter

    options = getattr(mirror, "sink_options", None)
    spark = getattr(mirror, "spark", None)
    if not isinstance(options, dict) or spark is None:
        return None
    writer = HeartbeatWriter(spark._jvm, options)
    return writer if writer.enabled else None


def _beat(query, mirror, reporter: Reporter) -> None:
    """Tell the heartbeat writer whether the query waits between triggers (the last one completed), then let it beat.
    A continuous query's trigger never ends: its epochs tell (``report_epochs``)."""
    heart = reporter.heart
    if heart is None:
        return
    if not getattr(mirror, "continuous", False) and not (query.status or {}).get("isTriggerActive", True):
        heart.alive()
    heart.tick()


def watch(query, mirror, reporter: Reporter, stop_requested: Callable[[], bool]) -> bool:
    """Report progress until the query ends; True when it was stopped on request."""
    from pyspark.errors import StreamingQueryException

    stopped = False
    reporter.heart = _heartbeat_writer(mirror)
    reporter.shape = getattr(mirror, "planner", None)
    try:
        while query.isActive:
            if stop_requested():
                # a continuous query has no gap between batches: stopping drops the epoch in flight, which the
                # resumed query reads again from the last committed epoch (at least once)
                query.stop() if getattr(mirror, "continuous", False) else _stop_between_batches(query)
                stopped = True
                break
            try:
                query.awaitTermination(0.5)
            except StreamingQueryException:
                break
            reporter.report(query, mirror)
            _beat(query, mirror, reporter)
        reporter.report(query, mirror)
        if reporter.heart is not None and not stopped and query.exception() is None:
            reporter.heart.tick(force=True)  # caught up (--until-caught-up): the flow was alive to its end
    finally:
        reporter.finish()
        if reporter.heart is not None:
            reporter.heart.close()
    return stopped
