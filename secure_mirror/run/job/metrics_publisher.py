"""The job's figures where dashboards look: each metrics line the monitor writes (``run/monitor.py``, one per batch or
continuous epoch) is also handed to the JVM (``jvm/sink`` ``securemirror.metrics.MirrorMetrics``), which keeps them
per target topic-partition as MirrorMaker 2's MBeans (``kafka.connect.mirror:type=MirrorSourceConnector,source=...,
target=...,topic=...,partition=...``) and as a source of Spark's metrics system (its JmxSink, PrometheusServlet).
docs/metrics.md has the names and how to expose them.

With ``mirror.groups`` on, the launcher's group sync (``run/groups/sync.py``, in ``secure-mirror run``'s own process)
appends a ``checkpoints`` line to the same metrics file after each pass that wrote checkpoints. The publisher reads
the lines added to the file since it last looked (:class:`CheckpointTail`, on the reporter's watch loop) and hands
their figures to the JVM as MirrorMaker 2's ``MirrorCheckpointConnector`` MBeans (tags source, target, group, topic,
partition). Where the driver cannot read the launcher's file (YARN cluster mode, a driver on another machine), those
figures stay in the metrics file only.

What is handed over is figures only, under names that hold the two cluster aliases, the target topic and the
partition: never an option, a path or a secret (the JVM checks each name's characters too). Publishing never fails the
mirror: a failure is said once on stderr and the job goes on (the metrics file still has every figure).
"""

from __future__ import annotations

import json
import os
import sys
import time

from secure_mirror.run.metrics_line import SINK_FIGURES

CHECKPOINTS_KEY = "checkpoints"  # the group sync's metrics line: {"checkpoints": {...}} (run/groups/sync.py)
CHECKPOINT_FIGURE = "checkpoint-latency-ms"
# The group sync starts before the driver: its lines of the last minutes before the driver looked are published
# too; older ones (an earlier run appending to the same --metrics-file) are not
BACKLOG_SECONDS = 600.0
CHUNK = 4 << 20  # read at most this much of the file per look (a long file is caught up over a few looks)

# Per topic-partition, what the JVM takes from a metrics line's partition row (MirrorMaker 2's names): the sink's
# figures but its own skipped-count, which MirrorMaker 2 has no name for
PUBLISHED_FIGURES = tuple(name for name in SINK_FIGURES if name != "skipped-count")


def mm2_figures(line: dict, source: str, target: str) -> dict:
    """What the JVM publishes of a metrics line: per target topic-partition the figures of ``PUBLISHED_FIGURES``
    present in its row (ages and latencies may be missing: a continuous epoch has no latency)."""
    rows = []
    for row in line.get("partitions") or []:
        figures = {name: row[name] for name in PUBLISHED_FIGURES if isinstance(row.get(name), int | float)}
        rows.append({"topic": row["target-topic"], "partition": int(row["partition"]), **figures})
    return {"source": source, "target": target, "partitions": rows}


def checkpoint_figures(line: dict, since: float) -> dict | None:
    """What the JVM publishes of a group sync's metrics line: its aliases, its time (ms) and per group, target topic
    and partition its ``checkpoint-latency-ms``; None for another line, or one written before ``since`` (seconds)."""
    checkpoints = line.get(CHECKPOINTS_KEY)
    if not isinstance(checkpoints, dict) or not isinstance(checkpoints.get("time"), int | float):
        return None
    if checkpoints["time"] < since:
        return None
    rows = [
        {key: row[key] for key in ("group", "topic", "partition", CHECKPOINT_FIGURE)}
        for row in checkpoints.get("figures") or []
        if isinstance(row, dict)
        and isinstance(row.get(CHECKPOINT_FIGURE), int | float)
        and isinstance(row.get("partition"), int)
        and isinstance(row.get("group"), str)
        and isinstance(row.get("topic"), str)
    ]
    if not rows:
        return None
    aliases = {key: str(checkpoints.get(key, "")) for key in ("source", "target")}
    return {**aliases, "time": round(checkpoints["time"] * 1000), "figures": rows}


def complete_lines(data: bytes) -> tuple[list[dict], int]:
    """The JSON objects of the whole lines in ``data`` (a line that is not one is passed over) and how many bytes
    they take: a last line without its newline is still being written, and is read next time."""
    end = data.rfind(b"\n") + 1
    lines = []
    for text in data[:end].splitlines():
        if not text.startswith(b'{"' + CHECKPOINTS_KEY.encode() + b'"'):  # the job's own lines, parsed no further
            continue
        try:
            parsed = json.loads(text)
        except ValueError:
            continue
        if isinstance(parsed, dict):
            lines.append(parsed)
    return lines, end


class CheckpointTail:
    """The group sync's lines added to the metrics file since the last :meth:`read` (from the file's start at
    first; a file that shrank is read again from its start)."""

    def __init__(self, path: str, since: float):
        self.path, self.since, self.offset = path, since, 0

    def read(self) -> list[dict]:
        """The new lines' figures (:func:`checkpoint_figures`); nothing while the file does not exist."""
        try:
            size = os.stat(self.path).st_size
        except FileNotFoundError:
            return []
        if size < self.offset:
            self.offset = 0
        if size == self.offset:
            return []
        with open(self.path, "rb") as handle:
            handle.seek(self.offset)
            data = handle.read(min(size - self.offset, CHUNK))
        lines, used = complete_lines(data)
        self.offset += used or (len(data) if len(data) == CHUNK else 0)  # a line longer than CHUNK is passed over
        return [figures for line in lines if (figures := checkpoint_figures(line, self.since)) is not None]


class MetricsPublisher:
    """Called with each metrics line (``monitor.Reporter(publish=...)``); hands its figures to the driver's JVM.
    :meth:`poll` (the reporter calls it on its watch loop) hands over the group sync's checkpoints lines of the
    metrics file. ``aliases``: (source, target), as the job's settings name them."""

    def __init__(self, jvm, aliases: tuple[str, str], stream=None):
        self.jvm = jvm
        self.aliases = aliases
        self.stream = stream or sys.stderr
        self.told = False
        self.tail: CheckpointTail | None = None

    def __call__(self, line: dict) -> None:
        payload = mm2_figures(line, *self.aliases)
        if payload["partitions"]:
            self._hand("update", payload)

    def poll(self, metrics_file: str | None) -> None:
        """Hands over the checkpoints lines added to ``metrics_file`` since the last call."""
        if not metrics_file:
            return
        if self.tail is None:
            self.tail = CheckpointTail(metrics_file, time.time() - BACKLOG_SECONDS)
        try:
            passes = self.tail.read()
        except OSError as error:  # an unreadable file: the figures stay in it
            self._tell(f"the metrics file's checkpoints were not read: {error.strerror}")
            return
        for payload in passes:
            self._hand("checkpoints", payload)

    def _hand(self, method: str, payload: dict) -> None:
        try:
            problem = getattr(self.jvm.securemirror.metrics.MirrorMetrics, method)(json.dumps(payload))
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
