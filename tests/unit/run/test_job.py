"""The job's pure parts: exit codes and their sentences, the control folder, the options it reads, the plan-string
redaction, the checkpoint fingerprint comparison. (The streaming query itself runs in the sandbox suites.)"""

from __future__ import annotations

import json
import re
import signal
import threading
from pathlib import Path

import pytest

from secure_mirror import errors
from secure_mirror.profile.redaction import JOB_PLAN_REDACTION
from secure_mirror.render import job_file
from secure_mirror.render.job_model import JobTopicShape
from secure_mirror.run.checkpoint import fingerprint_mismatch
from secure_mirror.run.control_folder import ControlFolder
from secure_mirror.run.job import admin_answers, deleted_topics, entry, options, outcome, planning
from secure_mirror.run.job import control as job_control
from tests.support import profiles as pf


def test_exit_codes_are_those_of_errors_py():
    assert outcome.JobRefused("x").exit_code == errors.EXIT_REFUSED == 5
    assert (errors.EXIT_BAD_INPUT, errors.EXIT_FAILED, errors.EXIT_INTERRUPTED) == (2, 1, 130)


def test_missing_option_files_are_bad_input_naming_the_fix(tmp_path):
    with pytest.raises(outcome.JobRefused, match="source-options.json is missing; render the profile again") as refused:
        options.read_options(tmp_path)
    assert refused.value.exit_code == errors.EXIT_BAD_INPUT
    profile = pf.load(tmp_path)
    (tmp_path / "source-options.json").write_text(json.dumps({"a": "1"}))
    (tmp_path / "sink-options.json").write_text(json.dumps({"b": "2"}))
    (tmp_path / "job.json").write_text(job_file.job_json(profile))
    assert options.read_options(tmp_path) == ({"a": "1"}, {"b": "2"}, job_file.job_settings(profile))


@pytest.mark.parametrize(
    ("change", "said"),
    [
        (lambda d: d.pop("topic_shape"), "it has no topic_shape"),
        (lambda d: d["topic_shape"].pop("grow_partitions"), "it has no topic_shape.grow_partitions"),
        (lambda d: d.update(grows="yes"), "it has an unknown field grows"),
        (lambda d: d["identities"].append({"side": "source"}), "it has no identities.keytab, no identities.principal"),
    ],
)
def test_a_job_file_of_another_shape_is_refused_naming_the_field(tmp_path, change, said):
    for name in ("source-options.json", "sink-options.json"):
        (tmp_path / name).write_text("{}")
    data = json.loads(job_file.job_json(pf.load(tmp_path)))
    change(data)
    (tmp_path / "job.json").write_text(json.dumps(data))
    with pytest.raises(outcome.JobRefused) as refused:
        options.read_options(tmp_path)
    assert str(refused.value) == (
        f"{tmp_path / 'job.json'} is not what this secure-mirror writes: {said}; render the profile again "
        "(secure-mirror render) and run the spark-submit.sh of that folder"
    )
    assert refused.value.exit_code == errors.EXIT_BAD_INPUT


KAFKA_TRACE = """org.apache.spark.SparkException: Job aborted due to stage failure: Task 0 in stage 3.0 failed
Caused by: org.apache.kafka.common.errors.TimeoutException: Expiring 2 record(s) for src.t-0: 120001 ms has passed
\tat org.apache.kafka.clients.producer.internals.RecordAccumulator.expiredBatches(RecordAccumulator.java:1)"""


@pytest.mark.parametrize(
    ("text", "code", "sentence"),
    [
        (
            "org.apache.kafka.common.errors.TopicAuthorizationException: Not authorized to access topics: [t]",
            errors.EXIT_REFUSED,
            "a cluster refused the mirror identity access to a topic (org.apache.kafka.common.errors."
            "TopicAuthorizationException: Not authorized to access topics: [t]); grant the ACLs of the rendered acls/",
        ),
        (
            "Partition t-0's offset was changed from 78 to 0, some data may have been lost.\nSet failOnDataLoss false",
            errors.EXIT_REFUSED,
            "source records the checkpoint expects are gone (a source topic was deleted or truncated): "
            "Partition t-0's offset was changed from 78 to 0, some data may have been lost.",
        ),
        (
            KAFKA_TRACE,
            errors.EXIT_FAILED,
            "the mirror query failed: TimeoutException: Expiring 2 record(s) for src.t-0: 120001 ms has passed",
        ),
        (
            "java.lang.IllegalStateException: odd\nmore",
            errors.EXIT_FAILED,
            "the mirror query failed: java.lang.IllegalStateException: odd",
        ),
    ],
)
def test_a_failed_query_becomes_an_exit_code_and_one_sentence(text, code, sentence):
    got_code, message = outcome.classify(RuntimeError(text))
    assert got_code == code and message.startswith(sentence)


def test_the_control_folder_carries_pid_stop_and_result(tmp_path, capsys):
    control = job_control.Control(str(tmp_path))
    control.started()
    folder = ControlFolder(tmp_path)
    assert folder.pid() is not None and not control.stop_requested()
    folder.request_stop()
    assert control.stop_requested()
    assert control.result(errors.EXIT_FAILED, "failed", "broker gone") == errors.EXIT_FAILED
    assert folder.result() == {"exit_code": 1, "status": "failed", "message": "broker gone", "retryable": True}
    assert "secure-mirror job: broker gone" in capsys.readouterr().err
    control.result(errors.EXIT_REFUSED, "refused", "grant READ")
    assert folder.result()["retryable"] is False  # only a failure may be retried


def test_a_signal_is_a_stop_request_without_a_control_folder():
    control = job_control.Control(None)
    control.started()
    assert not control.stop_requested()
    control.signal = signal.SIGTERM
    assert control.stop_requested()


def test_arguments():
    args = entry.parse_args(["--options-dir", "/o", "--control-dir", "/c", "--until-caught-up"])
    assert (args.options_dir, args.control_dir, args.until_caught_up, args.trigger_interval) == (
        "/o",
        "/c",
        True,
        "5 seconds",
    )


@pytest.mark.parametrize(
    "plan",
    [
        'kafka.sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required username="m" '
        'password="p\\"w,d";',
        "kafka.ssl.truststore.password=s3cret, kafka.bootstrap.servers=b:9093",
        "ssl.keystore.key=-----BEGIN PRIVATE KEY-----\nMIIB\n-----END PRIVATE KEY-----",
        "kafka.sasl.oauthbearer.client.secret=abc}",
    ],
)
def test_plan_strings_lose_their_secrets(plan):
    redacted = re.sub(JOB_PLAN_REDACTION, "*********(redacted)", plan)
    assert not any(secret in redacted for secret in ('p\\"w', "s3cret", "MIIB", "abc"))
    assert "kafka.bootstrap.servers=b:9093" in redacted or "bootstrap" not in plan


class _Conf(dict):
    """Spark's RuntimeConfig as the job uses it: get with a default, and set."""

    def set(self, key: str, value: str) -> None:
        self[key] = value


@pytest.mark.parametrize(
    ("before", "after"),
    [
        ({}, JOB_PLAN_REDACTION),
        ({"spark.sql.redaction.string.regex": "customer-[0-9]+"}, f"{JOB_PLAN_REDACTION}|(?:customer-[0-9]+)"),
    ],
)
def test_the_jobs_plan_redaction_is_kept_beside_the_profiles(before, after):
    conf = _Conf(before)
    entry._redact_plans(conf)
    assert conf["spark.sql.redaction.string.regex"] == after
    entry._redact_plans(conf)  # once only
    assert conf["spark.sql.redaction.string.regex"] == after


def test_the_topics_read_are_those_of_the_last_progress():
    progress = {"sources": [{"endOffset": '{"a":{"0":3},"b":{"1":0}}'}, {"endOffset": None}]}
    assert deleted_topics.read_topics(progress) == {"a", "b"}
    assert deleted_topics.read_topics(None) == set()


def test_the_planner_counts_the_topic_shape_comparisons_it_made(capsys):
    """``shape_syncs`` (the status lines' topic-shape-sync-count) counts the rounds done, one per interval: not a call
    before the interval is over, nor a round the cluster did not answer (tried again at the next interval)."""
    planner = object.__new__(planning.TopicPlanner)  # no JVM: the clusters' answers are given
    planner.keep, planner.keep_mode, planner.target_counts = {"t": True}, True, {"t": 2}
    planner.shape = JobTopicShape(sync_configs=False, exclude_configs=(), grow_partitions=True, interval_seconds=30)
    planner.next_shape_sync, planner.shape_syncs, planner.lock = 0.0, 0, threading.Lock()
    answers = [{"t": 2}, TimeoutError("no answer")]

    def partition_counts(_admin, _topics):
        answer = answers.pop(0)
        if isinstance(answer, Exception):
            raise answer
        return answer

    planner.source, planner._partition_counts = None, partition_counts
    assert planner.sync_shape() is False and planner.shape_syncs == 1
    assert planner.sync_shape() is False and planner.shape_syncs == 1 and answers  # before the interval: not asked
    planner.next_shape_sync = 0.0
    assert planner.sync_shape() is False and planner.shape_syncs == 1 and not answers  # not answered: not counted
    assert "topic shape not synced this time: TimeoutError" in capsys.readouterr().err


def test_a_target_topic_missing_at_two_looks_in_a_row_stops_the_job():
    """The deleted-topic watch also looks at the target topics the job writes: missing twice in a row (a broker just
    started again may not know a topic yet), the job stops with exit 5 rather than ride on; unanswered, it asks again."""
    looks = [["tgt.b"], [], ["tgt.b"], admin_answers.KafkaUnanswered("TimeoutException", "tgt.b"), ["tgt.a", "tgt.b"]]

    class Planner:
        @staticmethod
        def gone(_topics):
            return []

        @staticmethod
        def target_gone():
            answer = looks.pop(0)
            if isinstance(answer, Exception):
                raise answer
            return answer

    class Query:
        stopped = False

        def stop(self):
            self.stopped = True

    query = Query()
    watch = deleted_topics.DeletedTopicWatch(query, Planner(), interval=0.0, topics=lambda: {"a", "b"})
    assert [watch() for _ in range(4)] == [False, False, False, False]  # gone, back, gone, unanswered
    assert not query.stopped
    assert watch() is True and watch.refused is not None and watch.refused.exit_code == errors.EXIT_REFUSED
    assert query.stopped  # at once: the batch writing the topic would not end (the stop request waits for it)
    assert str(watch.refused).startswith("the target lost a topic the job writes while it ran: tgt.b. The records")
    assert deleted_topics.confirmed_gone(["x", "y"], ["y", "z"]) == ["y"]


def test_a_sides_partition_counts_from_its_one_call_answer():
    # securemirror.driver.TopicPartitions answers counts, and [exception name, retriable] for each failed topic.
    counts = admin_answers.partition_counts(["a", "b"], {"a": 3}, {"b": ["UnknownTopicOrPartitionException", True]})
    assert counts == {"a": 3, "b": None}  # a topic the side does not have
    with pytest.raises(outcome.JobRefused, match="cannot describe topic b: TopicAuthorizationException; check the"):
        admin_answers.partition_counts(["a", "b"], {"a": 3}, {"b": ["TopicAuthorizationException", False]})
    with pytest.raises(admin_answers.KafkaUnanswered) as unanswered:  # the query fails; --supervise starts it again
        admin_answers.partition_counts(["a"], {}, {"a": ["TimeoutException", True]})
    assert admin_answers.cause_name(unanswered.value) == "TimeoutException"  # as the shape sync's line names it
    # the first failure in the order asked stops
    both = {"a": ["TimeoutException", True], "b": ["TopicAuthorizationException", False]}
    with pytest.raises(admin_answers.KafkaUnanswered):
        admin_answers.partition_counts(["a", "b"], {}, both)
    with pytest.raises(outcome.JobRefused):
        admin_answers.partition_counts(["b", "a"], {}, both)


def test_one_fingerprint_comparison_for_the_launcher_and_the_job():
    old = {"sha256": "1", "settings": {"rename_rule": "alias_prefix", "topics_include": "a.*"}}
    new = {"sha256": "2", "settings": {"rename_rule": "identity", "topics_include": "a.*"}}
    assert fingerprint_mismatch("/ck", old, {**old}) is None
    assert fingerprint_mismatch("/ck", old, new) == (
        "the checkpoint /ck belongs to a profile with other topic or rename settings (rename_rule: 'alias_prefix' "
        "-> 'identity'); resuming would skip or misroute records. Point mirror.checkpoint_location at a new folder, "
        "or restore the old settings"
    )


def test_the_job_imports_from_the_zip_cluster_mode_ships(tmp_path):
    """In YARN cluster mode the package reaches the driver as spark-submit.sh's zip (--py-files), without the
    templates: importing the job must not need them (it did, through render's filters, and the job exited 1)."""
    import subprocess
    import sys

    import secure_mirror

    package = Path(secure_mirror.__file__).parent
    archive = tmp_path / "secure_mirror.zip"
    subprocess.run([sys.executable, "-m", "zipfile", "-c", str(archive), str(package)], check=True)
    probe = (
        f"import sys; sys.path.insert(0, {str(archive)!r}); import secure_mirror.run.job.entry, secure_mirror; "
        "print(secure_mirror.__file__)"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.startswith(str(archive))
