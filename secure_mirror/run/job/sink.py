"""The streaming query: read the source, write each batch to the target with its target topic and partition."""

from __future__ import annotations

import sys
import time
from collections.abc import Callable

from secure_mirror.profile.job_settings import PROVENANCE_PREFIX
from secure_mirror.render.spark import TIMESTAMP_HEADER
from secure_mirror.run import monitor
from secure_mirror.run.checkpoint import initial_offsets_file, offset_log_offsets
from secure_mirror.run.job.checkpoint_access import Checkpoint
from secure_mirror.run.job.outcome import JobRefused
from secure_mirror.run.job.planning import TopicPlanner

HEADERS_TYPE = "array<struct<key:string,value:binary>>"


def target_topic_column(pieces: list[str]):
    """``concat('src.', topic)`` for alias_prefix: the rename rule as a Spark SQL expression."""
    from pyspark.sql import functions as F

    parts = []
    for index, piece in enumerate(pieces):
        if index:
            parts.append(F.col("topic"))
        if piece:
            parts.append(F.lit(piece))
    return F.concat(*parts) if len(parts) > 1 else parts[0]


def provenance_column(alias: str):
    """The source's headers plus ``secure-mirror.{cluster,topic,partition,offset,timestamp}``."""
    from pyspark.sql import functions as F

    def header(name, value):
        return F.struct(F.lit(PROVENANCE_PREFIX + name).alias("key"), F.encode(value, "UTF-8").alias("value"))

    extra = F.array(header("cluster", F.lit(alias)), header("topic", F.col("topic")),
                    header("partition", F.col("partition").cast("string")),
                    header("offset", F.col("offset").cast("string")),
                    header("timestamp", F.unix_millis(F.col("timestamp")).cast("string")))
    return F.concat(F.coalesce(F.col("headers"), F.expr(f"cast(array() as {HEADERS_TYPE})")), extra)


def with_source_timestamp(headers):
    """``headers`` plus the source timestamp, which the target producer's interceptor turns back into the
    record's timestamp (and removes): Spark's Kafka sink has no timestamp column of its own."""
    from pyspark.sql import functions as F

    carried = F.struct(F.lit(TIMESTAMP_HEADER).alias("key"),
                       F.encode(F.unix_millis(F.col("timestamp")).cast("string"), "UTF-8").alias("value"))
    return F.concat(F.coalesce(headers, F.expr(f"cast(array() as {HEADERS_TYPE})")), F.array(carried))


def batch_stats_columns():
    """The batch's figures, gathered while it is written: records, key+value bytes, source timestamps."""
    from pyspark.sql import functions as F

    size = F.coalesce(F.length("key"), F.lit(0)) + F.coalesce(F.length("value"), F.lit(0))
    millis = F.unix_millis(F.col("timestamp"))
    return [F.count(F.lit(1)).alias("records"), F.sum(size).alias("bytes"), F.min(millis).alias("ts_min"),
            F.max(millis).alias("ts_max"), F.avg(millis).alias("ts_avg")]


class Mirror:
    def __init__(self, spark, source_options: dict, sink_options: dict, settings: dict,
                 stop_requested: Callable[[], bool] = lambda: False):
        self.spark = spark
        self.source_options = source_options
        self.sink_options = {k: v for k, v in sink_options.items() if k != "checkpointLocation"}
        self.checkpoint = sink_options.get("checkpointLocation") or settings["checkpoint_location"]
        self.settings = settings
        self.planner = TopicPlanner(spark._jvm, source_options, sink_options, settings)
        self.checkpoint_files = Checkpoint(spark, self.checkpoint)
        self.batches: dict[int, dict] = {}  # batch id -> times, partition plan and offset ranges, read by the monitor
        self.refused: JobRefused | None = None
        # Once a stop is requested no batch starts writing: the one in flight finishes and commits, the next one
        # fails before it writes anything (Spark runs it again on resume), so a stop never leaves a written but
        # uncommitted batch behind, even when batches run back to back.
        self.stop_requested = stop_requested
        self.declined: int | None = None  # the batch not written because of a stop request

    def write_batch(self, frame, batch_id: int) -> None:
        from pyspark.sql import functions as F

        if self.stop_requested():
            self.declined = batch_id
            print(f"secure-mirror job: stopping; batch {batch_id} is not written and runs again on resume (Spark "
                  "logs this as the query's error)", file=sys.stderr, flush=True)
            raise RuntimeError(f"batch {batch_id} not written: the job is stopping (it runs again on resume)")
        started = time.time()
        ranges = self.batch_ranges(batch_id)
        try:
            keep = self.planner.plan({topic for topic, _ in ranges} if ranges is not None else self._topics(frame))
        except JobRefused as refused:
            self.refused = refused
            raise
        headers = provenance_column(self.settings["source_alias"]) if self.settings["provenance_headers"] \
            else F.col("headers")
        headers = with_source_timestamp(headers)
        columns = [F.col("key"), F.col("value"), headers.alias("headers"),
                   target_topic_column(self.settings["target_topic_pieces"]).alias("topic")]
        kept = sorted(topic for topic, yes in keep.items() if yes)
        if kept:
            columns.append(F.when(F.col("topic").isin(kept), F.col("partition"))
                           .otherwise(F.lit(None).cast("int")).alias("partition"))
        # One pass: each task reads its Kafka partition and writes it. The batch's figures are gathered on the way
        # (the stream's Dataset.observe, see start(); they arrive with the query's progress).
        frame.select(*columns).write.format("kafka").options(**self.sink_options).save()
        self.batches[batch_id] = {"started": started, "written": time.time(), "keep": keep, "ranges": ranges or {}}

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

    @staticmethod
    def _topics(frame) -> set[str]:
        return {row["topic"] for row in frame.select("topic").distinct().collect()}

    def start(self, until_caught_up: bool, trigger_interval: str):
        stream = self.spark.readStream.format("kafka").options(**self.source_options).load() \
            .observe(monitor.OBSERVED, *batch_stats_columns())
        writer = stream.writeStream.foreachBatch(self.write_batch).option("checkpointLocation", self.checkpoint) \
            .queryName("secure-mirror")
        writer = writer.trigger(availableNow=True) if until_caught_up else writer.trigger(processingTime=trigger_interval)
        return writer.start()
