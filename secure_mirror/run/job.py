"""The mirror job: a Spark Structured Streaming query from the source Kafka cluster to the target one.

Run by the rendered ``spark/spark-submit.sh`` (``job.py --options-dir DIR``); ``secure-mirror run`` launches that
same script. DIR holds ``source-options.json`` and ``sink-options.json`` (each with its own identity in
``kafka.sasl.jaas.config``) and ``job.json`` (rename rule, partition policy, provenance, profile fingerprint).

Each micro-batch: the records (key, value, headers) get the renamed target topic, built with Spark SQL
expressions; missing target topics are created with the source's partition count; the partition is kept when
asked (or, with ``auto``, when both topics have the same number of partitions); the batch is written with the
no-data-loss producer settings of ``sink-options.json``. Offsets are committed to the checkpoint only after the
write succeeded (at least once). SIGTERM, SIGINT or a ``stop`` file in ``--control-dir`` stop the query
between two batches.

Exit codes: 0 caught up or stopped on request (SIGTERM, stop file), 1 the query failed, 2 refused
(checkpoint of another profile, missing job settings), 5 refused by a cluster (authorization, topic missing and
not creatable, source data lost): restarting does not help, 130 interrupted (SIGINT).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import signal
import sys
import time
from collections.abc import Callable
from pathlib import Path

if __package__ in (None, ""):  # run as a script by spark-submit: make the package importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from secure_mirror.errors import EXIT_BAD_INPUT, EXIT_FAILED, EXIT_INTERRUPTED, EXIT_OK, EXIT_REFUSED  # noqa: E402
from secure_mirror.profile.job_settings import (  # noqa: E402
    FINGERPRINT_FILE,
    JOB_FILE,
    PROVENANCE_PREFIX,
    SINK_OPTIONS_FILE,
    SOURCE_OPTIONS_FILE,
)
from secure_mirror.profile.models import keeps_partitions, too_few_partitions  # noqa: E402
from secure_mirror.render.spark import TIMESTAMP_HEADER  # noqa: E402
from secure_mirror.run import (
    control_folder,  # noqa: E402
    monitor,  # noqa: E402
)
from secure_mirror.run.checkpoint import fingerprint_mismatch, initial_offsets_file, offset_log_offsets  # noqa: E402
from secure_mirror.run.control_folder import ControlFolder  # noqa: E402
from secure_mirror.run.login_watch import LoginWatch, job_identities  # noqa: E402

HEADERS_TYPE = "array<struct<key:string,value:binary>>"
# Secrets in plan strings: a password/secret/token setting or JAAS option (quoted or up to the next comma) and
# PEM private keys (ssl.keystore.key); Spark replaces the matches with *********(redacted).
PLAN_REDACTION = (r'(?i)(password|secret|token)[^=\s]*=("(?:[^"\\]|\\.)*"|[^,\s}]*)'
                  r"|-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?-----END [A-Z ]*PRIVATE KEY-----")


class JobRefused(Exception):
    """The job cannot (or must not) go on, and starting it again would not help."""

    def __init__(self, message: str, exit_code: int = EXIT_REFUSED):
        super().__init__(message)
        self.exit_code = exit_code


# ---- options ---------------------------------------------------------------------------------------------
def read_options(options_dir: Path) -> tuple[dict, dict, dict]:
    def load(name: str) -> dict:
        path = options_dir / name
        if not path.exists():
            raise JobRefused(f"{path} is missing; render the profile again (secure-mirror render) and run the "
                             "spark-submit.sh of that folder", EXIT_BAD_INPUT)
        return json.loads(path.read_text(encoding="utf-8"))

    return load(SOURCE_OPTIONS_FILE), load(SINK_OPTIONS_FILE), load(JOB_FILE)


def kafka_properties(jvm, options: dict):
    """java.util.Properties of a Kafka client from ``kafka.``-prefixed Spark options."""
    props = jvm.java.util.Properties()
    for key, value in options.items():
        if key.startswith("kafka."):
            props.setProperty(key[len("kafka."):], str(value))
    return props


# ---- the checkpoint's fingerprint ------------------------------------------------------------------------
class Checkpoint:
    """The checkpoint folder through Hadoop's FileSystem (a local path, hdfs://, s3a:// ...)."""

    def __init__(self, spark, location: str):
        self.jvm = spark._jvm
        self.location = location.rstrip("/")
        self.path = self.jvm.org.apache.hadoop.fs.Path(self.location)
        self.fs = self.path.getFileSystem(spark._jsc.hadoopConfiguration())

    def _child(self, name: str):
        return self.jvm.org.apache.hadoop.fs.Path(self.location + "/" + name)

    def has_offsets(self) -> bool:
        offsets = self._child("offsets")
        return bool(self.fs.exists(offsets)) and len(self.fs.listStatus(offsets)) > 0

    def read(self, name: str) -> str | None:
        path = self._child(name)
        if not self.fs.exists(path):
            return None
        stream = self.fs.open(path)
        try:
            return self.jvm.org.apache.commons.io.IOUtils.toString(stream, "UTF-8")
        finally:
            stream.close()

    def write(self, name: str, text: str) -> None:
        self.fs.mkdirs(self.path)
        stream = self.fs.create(self._child(name), True)
        try:
            stream.write(bytearray(text.encode("utf-8")))
        finally:
            stream.close()


def check_fingerprint(checkpoint: Checkpoint, expected: dict) -> None:
    """Refuse a checkpoint written for other topics or another rename rule; stamp a new one."""
    stored_text = checkpoint.read(FINGERPRINT_FILE)
    if stored_text is None:
        if checkpoint.has_offsets():
            raise JobRefused(f"the checkpoint {checkpoint.location} holds offsets but no {FINGERPRINT_FILE}, so it "
                             "may belong to another job; point mirror.checkpoint_location at a new folder",
                             EXIT_BAD_INPUT)
        checkpoint.write(FINGERPRINT_FILE, json.dumps(expected, indent=2, sort_keys=True) + "\n")
        return
    problem = fingerprint_mismatch(checkpoint.location, json.loads(stored_text), expected)
    if problem is not None:
        raise JobRefused(problem, EXIT_BAD_INPUT)


# ---- target topics ---------------------------------------------------------------------------------------
def _cause(error):
    java = getattr(error, "java_exception", None)
    while java is not None and java.getCause() is not None and \
            java.getClass().getSimpleName() in ("ExecutionException", "CompletionException"):
        java = java.getCause()
    return java


def _cause_name(error) -> str:
    java = _cause(error)
    return java.getClass().getSimpleName() if java is not None else type(error).__name__


def _retriable(error) -> bool:
    """A Kafka ``RetriableException`` (a broker that did not answer in time ...): trying again later may work."""
    java = _cause(error)
    kind = java.getClass() if java is not None else None
    while kind is not None:
        if kind.getName() == "org.apache.kafka.common.errors.RetriableException":
            return True
        kind = kind.getSuperclass()
    return False


class TopicPlanner:
    """Decides, once per source topic, the target name and whether partitions are kept; creates missing topics."""

    def __init__(self, jvm, source_options: dict, sink_options: dict, settings: dict):
        self.jvm = jvm
        admin = jvm.org.apache.kafka.clients.admin.Admin
        self.source = admin.create(kafka_properties(jvm, source_options))
        self.target = admin.create(kafka_properties(jvm, sink_options))
        self.pieces = settings["target_topic_pieces"]
        self.keep_mode = settings["keep_partition"]
        self.keep: dict[str, bool] = {}

    def target_name(self, topic: str) -> str:
        return topic.join(self.pieces)

    def _java_list(self, items):
        out = self.jvm.java.util.ArrayList()
        for item in items:
            out.add(item)
        return out

    def _partition_counts(self, admin, topics: list[str]) -> dict[str, int | None]:
        from py4j.protocol import Py4JJavaError

        futures = admin.describeTopics(self._java_list(topics)).topicNameValues()
        counts: dict[str, int | None] = {}
        for topic in topics:
            try:
                counts[topic] = futures.get(topic).get().partitions().size()
            except Py4JJavaError as error:
                if _cause_name(error) == "UnknownTopicOrPartitionException":
                    counts[topic] = None
                    continue
                if _retriable(error):
                    raise  # the query fails; --supervise starts it again
                raise JobRefused(f"cannot describe topic {topic}: {_cause_name(error)}; check the DESCRIBE ACL "
                                 "of the mirror identity") from None
        return counts

    def _create(self, topic: str, partitions: int) -> None:
        from py4j.protocol import Py4JJavaError

        optional = self.jvm.java.util.Optional
        new = self.jvm.org.apache.kafka.clients.admin.NewTopic(topic, optional.of(partitions), optional.empty())
        try:
            self.target.createTopics(self._java_list([new])).all().get()
        except Py4JJavaError as error:
            name = _cause_name(error)
            if name == "TopicExistsException":
                return
            if name in ("TopicAuthorizationException", "ClusterAuthorizationException"):
                raise JobRefused(f"target topic {topic} does not exist and the target identity may not create it "
                                 f"({name}): create it with {partitions} partitions, or grant CREATE on it "
                                 "(see acls/target.acls.json of the rendered profile)") from None
            if _retriable(error):
                raise  # the query fails; --supervise starts it again
            raise JobRefused(f"could not create target topic {topic}: {name}") from None

    def plan(self, topics: set[str]) -> dict[str, bool]:
        new = sorted(t for t in topics if t not in self.keep)
        if new:
            sources = self._partition_counts(self.source, new)
            targets = self._partition_counts(self.target, [self.target_name(t) for t in new])
            for topic in new:
                wanted, have = sources[topic], targets[self.target_name(topic)]
                if have is None:
                    self._create(self.target_name(topic), wanted)
                    have = wanted
                if too_few_partitions(self.keep_mode, wanted, have):
                    raise JobRefused(f"keep_partition is true but target topic {self.target_name(topic)} has {have} "
                                     f"partitions and {topic} has {wanted}; add partitions to the target topic")
                self.keep[topic] = keeps_partitions(self.keep_mode, wanted, have)
        return {t: self.keep[t] for t in topics}

    def gone(self, topics: set[str]) -> list[str]:
        """Those of ``topics`` the source cluster no longer has."""
        counts = self._partition_counts(self.source, sorted(topics)) if topics else {}
        return sorted(topic for topic, count in counts.items() if count is None)

    def earliest(self, partitions: list[tuple[str, int]]) -> dict[tuple[str, int], int]:
        """The first offsets the source still has for ``partitions`` (those new since the previous batch)."""
        jvm = self.jvm
        request = jvm.java.util.HashMap()
        keys = {}
        for topic, partition in partitions:
            keys[(topic, partition)] = jvm.org.apache.kafka.common.TopicPartition(topic, partition)
            request.put(keys[(topic, partition)], jvm.org.apache.kafka.clients.admin.OffsetSpec.earliest())
        found = self.source.listOffsets(request).all().get()
        return {key: found.get(tp).offset() for key, tp in keys.items()}

    def close(self) -> None:
        for admin in (self.source, self.target):
            admin.close()


# ---- the streaming query ---------------------------------------------------------------------------------
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


# ---- running it ------------------------------------------------------------------------------------------
KAFKA_ERROR = re.compile(r"org\.apache\.kafka\.[\w.]+\.(\w+(?:Exception|Error): [^\n]{1,300})")
SOURCE_GONE = ("source records the checkpoint expects are gone (a source topic was deleted or truncated): {}. "
               "Nothing was skipped; to go on, recreate the topic or start over with a new checkpoint location")


class DeletedTopicWatch:
    """Spark's Kafka source plans no batch once none of its topics is left, so ``failOnDataLoss`` never fires when
    the last source topic is deleted and the query would wait for ever. Every ``interval`` seconds this checks that
    the topics the query has read from still exist on the source; ``refused`` says which one is gone."""

    def __init__(self, query, planner: TopicPlanner, interval: float = 10.0):
        self.query, self.planner, self.interval = query, planner, interval
        self.next_check = time.monotonic() + interval
        self.refused: JobRefused | None = None

    def __call__(self) -> bool:
        """True when the query must stop."""
        if self.refused is None and time.monotonic() >= self.next_check:
            self.next_check = time.monotonic() + self.interval
            try:
                gone = self.planner.gone(_read_topics(self.query.lastProgress))
            except JobRefused as refused:
                self.refused = refused
            except Exception:  # noqa: BLE001 - the source did not answer this time; ask again later
                return False
            else:
                if gone:
                    verb = "is" if len(gone) == 1 else "are"
                    self.refused = JobRefused(SOURCE_GONE.format(f"{', '.join(gone)} {verb} no longer on the source"))
        return self.refused is not None


def _read_topics(progress) -> set[str]:
    """The topics in the offsets the query has reached (its last progress's ``endOffset``)."""
    if progress is not None and hasattr(progress, "json"):
        progress = json.loads(progress.json)
    return {topic for source in (progress or {}).get("sources") or []
            for topic, _ in monitor.parse_offsets(source.get("endOffset"))}


def _classify(error: BaseException, mirror: Mirror | None) -> tuple[int, str]:
    if mirror is not None and mirror.refused is not None:
        return mirror.refused.exit_code, str(mirror.refused)
    text = str(error)
    if "TopicAuthorizationException" in text or "Not authorized to access topics" in text:
        return EXIT_REFUSED, ("a cluster refused the mirror identity access to a topic "
                                      f"({_first_line(text, 'uthoriz')}); grant the ACLs of the rendered acls/ folder")
    if "failOnDataLoss" in text or "data may have been lost" in text or "UnknownTopicOrPartition" in text:
        return EXIT_REFUSED, SOURCE_GONE.format(_first_line(text, "lost"))
    kafka = KAFKA_ERROR.search(text)  # the Kafka client's own words, rather than Spark's wrapping of them
    return EXIT_FAILED, f"the mirror query failed: {kafka.group(1) if kafka else _first_line(text, 'Exception')}"


def _first_line(text: str, needle: str) -> str:
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    for line in lines:
        if needle in line:
            return line[:400]
    return (lines[0] if lines else text)[:400]


class Control:
    """Where ``secure-mirror run`` and the job meet (``--control-dir``): pid, stop request, final result."""

    def __init__(self, folder: str | None):
        self.folder = ControlFolder(folder) if folder else None
        self.signal: int | None = None

    def started(self) -> None:
        if self.folder:
            self.folder.write_pid(os.getpid())

    def stop_requested(self) -> bool:
        return self.signal is not None or bool(self.folder and self.folder.stop_requested())

    def result(self, code: int, status: str, message: str) -> int:
        if self.folder:
            retryable = code == EXIT_FAILED
            self.folder.write_result({"exit_code": code, "status": status, "message": message, "retryable": retryable})
        if message:
            print(f"secure-mirror job: {message}", file=sys.stderr)
        return code


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="job.py", description="the secure-mirror Spark job")
    parser.add_argument("--options-dir", required=True)
    parser.add_argument("--until-caught-up", action="store_true", help="process what is there, then stop")
    parser.add_argument("--trigger-interval", default="5 seconds")
    parser.add_argument("--metrics-file", help="append JSON lines with per-topic-partition figures here")
    parser.add_argument("--status-interval", type=float, default=10.0, help="seconds between idle status lines")
    parser.add_argument(control_folder.OPTION, help="folder for the pid, stop and result files (run/control_folder.py)")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    control = Control(args.control_dir)

    def on_signal(signum, _frame):
        control.signal = signum

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    control.started()
    try:
        source_options, sink_options, settings = read_options(Path(args.options_dir))
    except JobRefused as refused:
        return control.result(refused.exit_code, "refused", str(refused))
    from pyspark.sql import SparkSession

    spark = SparkSession.builder.appName("secure-mirror").getOrCreate()
    spark.sparkContext.setLogLevel("WARN")
    # Defence in depth: secret-looking "name=value" text in SQL plan strings (Spark UI, event logs). The write goes
    # through Kafka's V1 sink on purpose: the V2 one prints every producer setting (KafkaWrite) in its plan node.
    if not spark.conf.get("spark.sql.redaction.string.regex", None):
        spark.conf.set("spark.sql.redaction.string.regex", PLAN_REDACTION)
    mirror = None
    try:
        check_fingerprint(Checkpoint(spark, sink_options.get("checkpointLocation") or settings["checkpoint_location"]),
                          settings["fingerprint"])
        mirror = Mirror(spark, source_options, sink_options, settings, control.stop_requested)
        query = mirror.start(args.until_caught_up, args.trigger_interval)
        reporter = monitor.Reporter(args.metrics_file, args.status_interval, settings["target_topic_pieces"])
        logins = LoginWatch(spark._jvm, job_identities(settings, source_options, sink_options))
        deleted = DeletedTopicWatch(query, mirror.planner)
        try:
            stopped = monitor.watch(query, mirror, reporter, lambda: control.stop_requested() or
                                    logins.refused is not None or deleted()) or mirror.declined is not None
        finally:
            logins.close()
        if logins.refused is not None:  # Kafka's client would retry such a login for ever
            return control.result(EXIT_REFUSED, "refused", logins.refused)
        if deleted.refused is not None:
            return control.result(deleted.refused.exit_code, "refused", str(deleted.refused))
        error = query.exception()
        if error is not None and mirror.declined is None:
            code, message = _classify(error, mirror)
            return control.result(code, "failed", message)
        if stopped:
            code = EXIT_INTERRUPTED if control.signal == signal.SIGINT else EXIT_OK
            return control.result(code, "stopped", "")
        return control.result(EXIT_OK, "caught-up", "")
    except JobRefused as refused:
        return control.result(refused.exit_code, "refused", str(refused))
    except Exception as error:  # noqa: BLE001 - the query's failure, reported as one sentence
        code, message = _classify(error, mirror)
        return control.result(code, "failed", message)
    finally:
        if mirror is not None:
            mirror.planner.close()
        spark.stop()


if __name__ == "__main__":
    sys.exit(main())
