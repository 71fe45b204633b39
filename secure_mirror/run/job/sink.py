"""The streaming query: read the source, write each batch to the target with the mirror's own sink (jvm/sink).

The sink takes the source's rows as they are and, in the JVM, renames the topic, keeps the partition for the topics
this module's planner says, writes key, value, headers and the source timestamp, and reports the batch's figures per
source partition (read back here for the monitor). The delivery guarantee is one of the sink's rendered options.
"""

from __future__ import annotations

import json
import sys
import time
import uuid
from collections.abc import Callable

from secure_mirror.render.job_model import JobSettings
from secure_mirror.render.spark import SINK_FORMAT, SINK_KEPT_TOPICS, SINK_REPORT_KEY, with_batch_size
from secure_mirror.run.checkpoint import initial_offsets_file, offset_log_offsets
from secure_mirror.run.job.checkpoint_access import Checkpoint
from secure_mirror.run.job.outcome import JobRefused
from secure_mirror.run.job.planning import TopicPlanner
from secure_mirror.run.job.ride import ride_in_place
from secure_mirror.run.provenance import cluster_ids


class StreamingMirror:
    def __init__(
        self,
        spark,
        source_options: dict,
        sink_options: dict,
        settings: JobSettings,
        stop_requested: Callable[[], bool] = lambda: False,
    ):
        self.spark = spark
        self.source_options = source_options
        self.sink_options = {k: v for k, v in sink_options.items() if k != "checkpointLocation"}
        self.checkpoint = sink_options.get("checkpointLocation") or settings.checkpoint_location
        self.settings = settings
        self.planner = TopicPlanner(spark._jvm, source_options, sink_options, settings)
        self.sink_options.update(cluster_ids(self.planner))  # provenance and the loop filter (run/provenance.py)
        self.checkpoint_files = Checkpoint(spark, self.checkpoint)
        self.batches: dict[int, dict] = {}  # batch id -> times, partition plan and offset ranges, read by the monitor
        self.refused: JobRefused | None = None
        # Once a stop is requested no batch starts writing: the one in flight finishes and commits, the next one
        # fails before it writes anything (Spark runs it again on resume), so a stop never leaves a written but
        # uncommitted batch behind, even when batches run back to back.
        self.stop_requested = stop_requested
        self.declined: int | None = None  # the batch not written because of a stop request
        self.run_id = uuid.uuid4().hex  # names this run's figures in the sink's Reports

    def write_batch(self, frame, batch_id: int) -> None:
        if self.stop_requested():
            self.declined = batch_id
            print(
                f"secure-mirror job: stopping; batch {batch_id} is not written and runs again on resume (Spark "
                "logs this as the query's error)",
                file=sys.stderr,
                flush=True,
            )
            raise RuntimeError(f"batch {batch_id} not written: the job is stopping (it runs again on resume)")
        started = time.time()
        ranges = self.batch_ranges(batch_id)
        reached = self._topics_reached(frame, ranges)
        try:
            keep = ride_in_place(
                self.spark._jvm,
                "target",
                f"plan batch {batch_id}'s target topics",
                self.settings.ride_through_seconds,
                lambda: self.planner.plan(*reached),
            )
        except JobRefused as refused:
            self.refused = refused
            raise
        kept = sorted(topic for topic, yes in keep.items() if yes)
        # the producer's batch size unless the profile set it: sized at the first batch, for its partitions, then kept
        self.sink_options = with_batch_size(self.sink_options, len(ranges) if ranges else None)
        report = f"{self.run_id}-{batch_id}"
        # One pass: each task reads its Kafka partition and writes it; the sink gathers the figures on the way.
        frame.write.format(SINK_FORMAT).mode("append").options(**self.sink_options).option(
            SINK_KEPT_TOPICS, json.dumps(kept)
        ).option(SINK_REPORT_KEY, report).save()
        written = time.time()
        figures = json.loads(self.spark._jvm.securemirror.sink.Reports.take(report) or '{"partitions": []}')
        self.batches[batch_id] = {
            "started": started,
            "written": written,
            "keep": keep,
            "ranges": ranges or {},
            "figures": figures["partitions"],
        }

    def batch_ranges(self, batch_id: int) -> dict[tuple[str, int], tuple[int, int]] | None:
        """(topic, partition) -> (first offset, end offset) of this batch, from the checkpoint's offset log (Spark
        writes it before it runs the batch); None when it cannot be read."""
        try:
            end_text = self.checkpoint_files.read(f"offsets/{batch_id}")
            end = offset_log_offsets(end_text) if end_text else {}
            if batch_id:
                start = offset_log_offsets(self.checkpoint_files.read(f"offsets/{batch_id - 1}") or "")
            else:
                start = initial_offsets_file(self.checkpoint_files.read("sources/0/0") or "")
        except Exception:  # noqa: BLE001 - the figures are optional; planning falls back to the data
            return None
        if not end:
            return None
        missing = [key for key in end if key not in start]
        if missing:
            start.update(self.planner.earliest(missing))
        return {key: (start.get(key, offset), offset) for key, offset in end.items()}

    def _topics_reached(self, frame, ranges) -> tuple[set[str], dict[str, int] | None]:
        """The batch's topics and, per topic, the partition count its records need (None: unknown from the offset
        log, the planner asks the source)."""
        if ranges is None:
            return self._topics(frame), None
        reach: dict[str, int] = {}
        for topic, partition in ranges:
            reach[topic] = max(reach.get(topic, 0), partition + 1)
        return set(reach), reach

    @staticmethod
    def _topics(frame) -> set[str]:
        return {row["topic"] for row in frame.select("topic").distinct().collect()}

    def start(self, until_caught_up: bool, trigger_interval: str):
        stream = self.spark.readStream.format(self.settings.source_format).options(**self.source_options).load()
        writer = (
            stream.writeStream.foreachBatch(self.write_batch)
            .option("checkpointLocation", self.checkpoint)
            .queryName("secure-mirror")
        )
        writer = (
            writer.trigger(availableNow=True) if until_caught_up else writer.trigger(processingTime=trigger_interval)
        )
        return writer.start()
