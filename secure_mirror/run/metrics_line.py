"""The metrics file's line of a batch or a continuous query's epoch, from Spark's progress and the sink's figures.

Each line is one batch. Its figures carry MirrorMaker 2's names where they apply: ``record-count``, ``byte-count``,
``byte-rate``, ``record-age-ms-{min,avg,max}`` (how old a record was when the sink took it) and
``replication-latency-ms-{min,avg,max}`` (from the record's timestamp to the target's acknowledgement), all
gathered by the mirror's sink while it writes (no second pass over the data, no ``observe``). Under ``partitions``,
per topic-partition: the offsets the batch covered, the sink's figures for it (``record-count``, ``byte-count``,
``skipped-count`` - records an exactly_once replay found already on the target, or that came from the target
(the loop filter, docs/provenance.md) - ages and latencies), and
``records-behind`` (the source's end offset minus the offset the batch reached). The monitor (:mod:`.monitor`) adds
the heartbeat's age and the topic shape's sync count.
"""

from __future__ import annotations

import json
import time


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
        "time": iso_time(timed["started"]),  # the epoch's start (the previous commit), as a batch's progress has it
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


def iso_time(seconds: float) -> str:
    """Spark's progress time format: ``2026-11-23T19:06:33.123Z``."""
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(seconds)) + f".{int(seconds * 1000) % 1000:03d}Z"
