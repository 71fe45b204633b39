"""What the monitor prints: a status line per batch or epoch (or per interval when idle), and the job's notices.

With ``run --json`` (the job's ``--json``) a status line is a JSON object instead (:class:`StatusLine`: the metrics
line's figures without its partitions, which stay in the metrics file), and so is a notice (:class:`NoticeLine`).
"""

from __future__ import annotations

import time
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from secure_mirror.run.heartbeats import age_text
from secure_mirror.run.metrics_line import iso_time


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
        StatusLine.model_validate({"kind": "status", **line, "time": line.get("time") or iso_time(time.time())})
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
