"""The job from its arguments to its exit code."""

from __future__ import annotations

import argparse
import signal
import sys
from pathlib import Path

from secure_mirror.errors import EXIT_BAD_INPUT, EXIT_INTERRUPTED, EXIT_OK, EXIT_REFUSED
from secure_mirror.profile.job_settings import UNTIL_CAUGHT_UP_CONTINUOUS
from secure_mirror.profile.redaction import plan_redaction
from secure_mirror.render.job_model import JobSettings
from secure_mirror.run import control_folder, monitor
from secure_mirror.run.job.checkpoint_access import Checkpoint, check_fingerprint
from secure_mirror.run.job.cluster_security import cluster_security_problem
from secure_mirror.run.job.continuous import ContinuousMirror, NewTopicWatch
from secure_mirror.run.job.control import Control
from secure_mirror.run.job.deleted_topics import DeletedTopicWatch
from secure_mirror.run.job.metrics_publisher import MetricsPublisher
from secure_mirror.run.job.options import read_options
from secure_mirror.run.job.outcome import JobRefused, classify
from secure_mirror.run.job.ride import RideWatch
from secure_mirror.run.job.sink import StreamingMirror
from secure_mirror.run.login_watch import LoginWatch, job_identities


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="secure_mirror.run.job", description="the secure-mirror Spark job")
    parser.add_argument("--options-dir", required=True)
    parser.add_argument("--until-caught-up", action="store_true", help="process what is there, then stop")
    parser.add_argument("--trigger-interval", default="5 seconds")
    parser.add_argument("--metrics-file", help="append JSON lines with per-topic-partition figures here")
    parser.add_argument("--status-interval", type=float, default=10.0, help="seconds between idle status lines")
    parser.add_argument("--json", action="store_true", help="status lines and notices as JSON lines (run --json)")
    parser.add_argument(control_folder.OPTION, help="folder for the pid, stop and result files (run/control_folder.py)")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    control = Control(args.control_dir)
    _stop_on_signals(control)
    control.started()
    try:
        source_options, sink_options, settings = read_options(Path(args.options_dir))
    except JobRefused as refused:
        return control.result(refused.exit_code, "refused", str(refused))
    if (early := _refused_before_start(settings)) is not None:  # no context yet: no executor was asked for
        return control.result(early.exit_code, "refused", str(early))
    spark = _session()
    mirror: StreamingMirror | None = None
    try:
        if settings.check_cluster_security:
            context = spark.sparkContext
            problem = cluster_security_problem(context.master, context.getConf().get)
            if problem is not None:
                raise JobRefused(problem)
        check_fingerprint(
            Checkpoint(spark, sink_options.get("checkpointLocation") or settings.checkpoint_location),
            settings.fingerprint,
        )
        if settings.trigger == "continuous":
            if args.until_caught_up:
                raise JobRefused(UNTIL_CAUGHT_UP_CONTINUOUS, EXIT_BAD_INPUT)
            mirror = ContinuousMirror(spark, source_options, sink_options, settings, control.stop_requested)
            return control.result(*_run_continuous(mirror, args, control))
        mirror = StreamingMirror(spark, source_options, sink_options, settings, control.stop_requested)
        return control.result(*_run(mirror, args, control), ridden=RIDDEN)
    except JobRefused as refused:
        return control.result(refused.exit_code, "refused", str(refused))
    except Exception as error:  # noqa: BLE001 - the query's failure, reported as one sentence
        return control.result(*_failed(error, mirror))
    finally:
        if mirror is not None:
            mirror.planner.close()
        spark.stop()


def _refused_before_start(settings: JobSettings) -> JobRefused | None:
    """The cluster-security refusal, asked of spark-submit's configuration (spark-defaults.conf merged in) before a
    Spark context exists: once one does, a standalone master starts executors, which fetch the shipped files (the
    keytabs) at their start, before any task, over the very connections the check is about."""
    if not settings.check_cluster_security:
        return None
    from pyspark import SparkConf, SparkContext

    SparkContext._ensure_initialized()  # the driver JVM's gateway, without a context: SparkConf then loads spark.*
    conf = SparkConf()
    problem = cluster_security_problem(conf.get("spark.master") or "", conf.get)
    return JobRefused(problem) if problem is not None else None


def _stop_on_signals(control: Control) -> None:
    def on_signal(signum, _frame):
        control.signal = signum

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)


def _session():
    from pyspark.sql import SparkSession

    spark = SparkSession.builder.appName("secure-mirror").getOrCreate()
    spark.sparkContext.setLogLevel("WARN")
    _redact_plans(spark.conf)
    return spark


def _redact_plans(conf) -> None:
    """Defence in depth: secret-looking "name=value" text in SQL plan strings (Spark UI, event logs). The mirror's sink
    prints none of its settings in a plan node (its table, write and factory name only the guarantee). A pattern of
    the profile or the cluster (this setting, or spark.redaction.string.regex it falls back to) is added to the job's
    own, never a replacement of it (profile/redaction.py)."""
    conf.set("spark.sql.redaction.string.regex", plan_redaction(conf.get("spark.sql.redaction.string.regex", None)))


def _run(mirror: StreamingMirror, args: argparse.Namespace, control: Control) -> tuple[int, str, str]:
    """Start the query and watch it until it is caught up, stopped or refused: (exit code, status, message)."""
    settings = mirror.settings
    query = mirror.start(args.until_caught_up, args.trigger_interval)
    reporter = monitor.Reporter(
        args.metrics_file,
        args.status_interval,
        list(settings.target_topic_pieces),
        publish=MetricsPublisher(mirror.spark._jvm, (settings.source_alias, settings.target_alias)),
        json_lines=args.json,
    )
    identities = job_identities(settings, mirror.source_options, mirror.sink_options)
    logins = LoginWatch(mirror.spark._jvm, identities, stream=reporter.notices())
    deleted = DeletedTopicWatch(query, mirror.planner)
    ride = _ride_watch(query, mirror, reporter, args.status_interval)
    try:
        stopped = (
            monitor.watch(
                query,
                mirror,
                reporter,
                lambda: (
                    control.stop_requested()
                    or logins.refused is not None
                    or (ride is not None and ride.stopped is not None)
                    or deleted()
                    or mirror.planner.sync_shape()
                ),
            )
            or mirror.declined is not None
        )
    finally:
        logins.close()
        if ride is not None:
            ride.close()
    if ride is not None:
        RIDDEN.update(ride.ridden.as_dict())
    if logins.refused is not None:  # Kafka's client would retry such a login for ever
        return EXIT_REFUSED, "refused", logins.refused
    if ride is not None and ride.stopped is not None:  # a refusal, a failure no retry mends, or the ride spent
        code, message = ride.stopped
        return code, ("refused" if code == EXIT_REFUSED else "failed"), message
    if deleted.refused is not None:
        return deleted.refused.exit_code, "refused", str(deleted.refused)
    error = query.exception()
    if error is not None and mirror.declined is None:
        return _failed(error, mirror)
    if stopped:
        return (EXIT_INTERRUPTED if control.signal == signal.SIGINT else EXIT_OK), "stopped", ""
    return EXIT_OK, "caught-up", ""


RIDDEN: dict = {}  # the run's waits (run/job/ride.py's Ridden), handed to the control folder's result


def _ride_watch(query, mirror: StreamingMirror, reporter: monitor.Reporter, interval: float) -> RideWatch | None:
    """The driver's watch over a cluster's bad minutes (run/job/ride.py); None when the profile rides none."""
    seconds = mirror.settings.ride_through_seconds
    if not seconds:
        return None
    bootstraps = {
        "source": mirror.source_options.get("kafka.bootstrap.servers", ""),
        "target": mirror.sink_options.get("kafka.bootstrap.servers", ""),
    }
    watch = RideWatch(mirror.spark, seconds, bootstraps, lambda: reporter.last_batch, reporter.waiting, interval)
    return watch.in_background(query)


def _run_continuous(mirror: ContinuousMirror, args: argparse.Namespace, control: Control) -> tuple[int, str, str]:
    """The continuous query, started again whenever the source gains a topic the selection takes (it is planned
    first); watched until stopped or refused: (exit code, status, message)."""
    reporter = monitor.Reporter(
        args.metrics_file,
        args.status_interval,
        list(mirror.settings.target_topic_pieces),
        publish=MetricsPublisher(mirror.spark._jvm, (mirror.settings.source_alias, mirror.settings.target_alias)),
        json_lines=args.json,
    )
    identities = job_identities(mirror.settings, mirror.source_options, mirror.sink_options)
    logins = LoginWatch(mirror.spark._jvm, identities, stream=reporter.notices())
    query = deleted = None
    try:
        while True:
            query = mirror.start_when_topics(lambda: control.stop_requested() or logins.refused is not None)
            if query is None:
                break
            deleted, new = _watch_continuous(
                query, mirror, reporter, lambda: control.stop_requested() or logins.refused
            )
            if query.exception() is not None or not new.found or control.stop_requested() or logins.refused:
                break
            print(
                f"secure-mirror job: {', '.join(new.found)} appeared on the source; restarting the continuous query "
                "with it planned",
                file=sys.stderr,
                flush=True,
            )
    finally:
        logins.close()
    if logins.refused is not None:
        return EXIT_REFUSED, "refused", logins.refused
    if deleted is not None and deleted.refused is not None:
        return deleted.refused.exit_code, "refused", str(deleted.refused)
    error = query.exception() if query is not None else None
    if error is not None:
        return _failed(error, mirror)
    return (EXIT_INTERRUPTED if control.signal == signal.SIGINT else EXIT_OK), "stopped", ""


def _watch_continuous(query, mirror: ContinuousMirror, reporter, stopping) -> tuple[DeletedTopicWatch, NewTopicWatch]:
    """Watch one continuous query until it fails, is stopped, loses a planned topic or the source gains one; the
    planned topics' shape is synced meanwhile, as in micro-batch mode (a kept topic's new partitions: Spark's source
    reconfigures itself to read them, and the sink's producer waits for their target partitions, up to its
    ``max.block.ms``, until the sync has grown them)."""
    deleted = DeletedTopicWatch(query, mirror.planner, topics=lambda: set(mirror.planned))
    new = NewTopicWatch(mirror)
    monitor.watch(
        query, mirror, reporter, lambda: bool(stopping()) or deleted() or new() or mirror.planner.sync_shape()
    )
    return deleted, new


def _failed(error: BaseException, mirror: StreamingMirror | None) -> tuple[int, str, str]:
    code, message = classify(error, mirror.refused if mirror is not None else None)
    return code, "failed", message
