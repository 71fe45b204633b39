"""Watching the mirror query: a status line per batch (or per interval when idle, :mod:`.status_lines`) and a
JSON-lines metrics file (a line per batch, :mod:`.metrics_line`).

With heartbeats on, each line and status line also has the age of the newest heartbeat the target acknowledged
(``heartbeat-age-ms``, docs/heartbeats.md), and the loop that watches the query tells the heartbeat writer when the
query proved alive. Each line and status line also counts the comparisons of the target topics' shape with the
source's done since the job started (``topic-shape-sync-count``, one every ``mirror.topic_shape.interval_seconds``,
docs/replica.md).
"""

from __future__ import annotations

import errno
import json
import sys
import threading
import time
from collections.abc import Callable

from secure_mirror import folders
from secure_mirror.run.metrics_line import batch_line, epoch_line
from secure_mirror.run.status_lines import (
    NoticeStream,
    epoch_status,
    json_line,
    status_json,
    status_text,
    with_heartbeat,
)
from secure_mirror.run.waiting import WaitingLine, waiting_text

# A symbolic link put in the metrics file's place while the job runs (its folder may be writable by others)
METRICS_LINK = (
    "--metrics-file {} is a symbolic link now, and nothing is written through one: the figures are no longer "
    "written to it (remove the link, and start the run again to have them)"
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
