"""The low-latency mode (``mirror.spark.trigger: continuous``, docs/continuous.md): Spark's continuous processing
trigger writing straight into the mirror's sink (``writeStream.format``, no ``foreachBatch``), at least once.

Each task never ends and hands each record to the sink as it arrives (the mirror's source: a task per slot, each
reading its share of the partitions with one consumer; Spark's Kafka source: a task per partition); every
``continuous_interval_ms`` an epoch commits (each task flushes its producer, Spark checkpoints the offsets). No Python
runs per epoch on the data's path, so what the micro-batch job decides per batch is decided here when the query
starts, for the topics the source has then:

- the keep-partition decision is the planner's (``TopicPlanner.plan``, on ``profile.mirror.keeps_partitions``),
  passed to the sink as the kept-topics option, as in micro-batch mode;
- the query subscribes to exactly those topics (``subscribe``, not the pattern), so the sink never sees a topic
  nobody planned; a topic created later that matches the selection is found by :class:`NewTopicWatch`, and the job
  stops the query and starts it again with the topic planned (its target created); the checkpoint carries the
  other topics' offsets over and the source reads the new topic from its start. Partitions added to a planned topic
  are read by the source (it reconfigures itself) under the decision made for the topic.

A continuous query reports no progress (Spark 4.0's ContinuousExecution never finishes a trigger), so the figures of
an epoch come from the checkpoint's commit and offset logs and the sink's own report of the epoch (``Reports``).
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Callable

from secure_mirror.errors import EXIT_BAD_INPUT
from secure_mirror.render.job_model import JobSettings
from secure_mirror.render.spark import (
    SINK_FORMAT,
    SINK_KEPT_TOPICS,
    SINK_REPORT_KEY,
    SOURCE_FORMAT,
    with_batch_size,
)
from secure_mirror.run.job.outcome import JobRefused
from secure_mirror.run.job.sink import StreamingMirror

IGNORED_SOURCE_OPTIONS = ("subscribePattern", "maxOffsetsPerTrigger")  # the topic list replaces the pattern;
# a continuous query has no triggers to limit


class ContinuousMirror(StreamingMirror):
    continuous = True

    def __init__(
        self, spark, source_options: dict, sink_options: dict, settings: JobSettings, stop_requested=lambda: False
    ):
        super().__init__(spark, source_options, sink_options, settings, stop_requested)
        self.interval_ms = settings.continuous_interval_ms
        self.pattern = spark._jvm.java.util.regex.Pattern.compile(source_options["subscribePattern"])
        self.planned: list[str] = []
        self.keep: dict[str, bool] = {}
        self.next_epoch = 0
        self.last_commit_ms: int | None = None

    def matching_topics(self) -> list[str]:
        """The source's topics the selection takes, matched by Java's regex as Spark's Kafka source matches them."""
        names = self.planner.source.listTopics().names().get()
        return sorted(str(name) for name in names if self.pattern.matcher(name).matches())

    def new_topics(self) -> list[str]:
        return [topic for topic in self.matching_topics() if topic not in self.planned]

    def start(self, until_caught_up: bool = False, trigger_interval: str = ""):
        """Plan the topics the source has now and start the continuous query over them; None when there are none."""
        topics = self.matching_topics()
        if not topics:
            return None
        try:
            self.keep = self.planner.plan(set(topics))
            partitions = sum(count or 0 for count in self.planner.source_partitions(topics).values())
            self._check_task_slots(len(topics), partitions)
        except JobRefused as refused:
            self.refused = refused
            raise
        self.planned = topics
        self.next_epoch = self.checkpoint_files.latest_commit() + 1
        source = {k: v for k, v in self.source_options.items() if k not in IGNORED_SOURCE_OPTIONS}
        source["subscribe"] = ",".join(topics)
        stream = self.spark.readStream.format(self.settings.source_format).options(**source).load()
        kept = sorted(topic for topic, yes in self.keep.items() if yes)
        return (
            stream.writeStream.format(SINK_FORMAT)
            .options(**with_batch_size(self.sink_options, partitions))
            .option(SINK_KEPT_TOPICS, json.dumps(kept))
            .option(SINK_REPORT_KEY, self.run_id)
            .option("checkpointLocation", self.checkpoint)
            .queryName("secure-mirror")
            .trigger(continuous=f"{self.interval_ms} milliseconds")
            .start()
        )

    def start_when_topics(self, stop: Callable[[], bool], every: float = 5.0):
        """:meth:`start`, waiting while the source has no topic the selection takes; None when stopped first."""
        while not stop():
            query = self.start()
            if query is not None:
                return query
            time.sleep(every)
        return None

    def _check_task_slots(self, topics: int, partitions: int) -> None:
        """Refuse (local master) or say (executors may still come) when the query has more tasks than slots."""
        ours = self.settings.source_format == SOURCE_FORMAT
        tasks = self.source_options.get("mirror.tasks")
        message = too_few_slots(self.spark.sparkContext.defaultParallelism, ours, tasks, topics, partitions)
        if message is None:
            return
        if self.spark.sparkContext.master.startswith("local"):
            raise JobRefused(message, EXIT_BAD_INPUT)
        print(f"secure-mirror job: {message}", file=sys.stderr, flush=True)

    def epochs(self) -> list[dict]:
        """The epochs committed since the last call, each as the monitor's batch: the offsets it covered (from the
        checkpoint's offset log) and the sink's figures (records, bytes, ages; taken from ``Reports``)."""
        latest = self.checkpoint_files.latest_commit()
        done = []
        while self.next_epoch <= latest:
            epoch, self.next_epoch = self.next_epoch, self.next_epoch + 1
            report = self.spark._jvm.securemirror.sink.Reports.take(f"{self.run_id}-{epoch}")
            committed_ms = self.checkpoint_files.modified_ms(f"commits/{epoch}")
            previous, self.last_commit_ms = self.last_commit_ms, committed_ms
            done.append(
                {
                    "epoch": epoch,
                    "committed": committed_ms / 1000 if committed_ms else time.time(),
                    "duration-ms": committed_ms - previous if committed_ms and previous else None,
                    "keep": self.keep,
                    "ranges": self.batch_ranges(epoch) or {},
                    "figures": json.loads(report)["partitions"] if report else None,
                }
            )
        return done


def too_few_slots(slots: int, ours: bool, tasks: str | None, topics: int, partitions: int) -> str | None:
    """Each task of a continuous query holds a task slot for as long as the query runs; with fewer slots some
    partitions are never read and no epoch ever commits. The mirror's source (``ours``) runs ``mirror.tasks`` tasks
    (default: the slots); Spark's Kafka source one per partition. None when the slots suffice, else what to do."""
    needed = (int(tasks) if tasks else slots) if ours else partitions
    if needed <= slots:
        return None
    if ours:
        return (
            f"continuous processing runs each task of the mirror's source for as long as the query runs: "
            f"mirror.spark.tasks is {needed} and the job has {slots} task slots; give the job at least {needed} "
            f"(mirror.spark.master local[{needed}], or executor cores), or lower mirror.spark.tasks"
        )
    return (
        f"continuous processing runs each source partition as a task that never ends with Spark's Kafka source: the "
        f"{topics} topics have {partitions} partitions and the job has {slots} task slots; give the job at least "
        f"{partitions} (mirror.spark.master local[{partitions}], or executor cores), or set mirror.spark.source: "
        "mirror (its tasks each read many partitions), or mirror.spark.trigger: micro_batch"
    )


class NewTopicWatch:
    """Every ``interval`` seconds: does the source have a topic the selection takes that the query was not started
    with? Then the job restarts the query with it planned."""

    def __init__(self, mirror: ContinuousMirror, interval: float = 5.0):
        self.mirror, self.interval = mirror, interval
        self.next_check = time.monotonic() + interval
        self.found: list[str] = []

    def __call__(self) -> bool:
        if not self.found and time.monotonic() >= self.next_check:
            self.next_check = time.monotonic() + self.interval
            try:
                self.found = self.mirror.new_topics()
            except Exception:  # noqa: BLE001 - the source did not answer this time; ask again later
                return False
        return bool(self.found)
