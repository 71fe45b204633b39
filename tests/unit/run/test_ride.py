"""Riding through a cluster's bad minutes (run/waiting.py, run/job/ride.py, render/spark.py): the judge of a failed
task, the waiting line and its sentence, the local master's task retries, and the driver's watch fed plain answers
as the JVM gives them (a fake JVM here: the decisions are what is tested; tests/reliability proves them live)."""

from __future__ import annotations

import io
import json
import socket

import pytest

from secure_mirror.errors import EXIT_FAILED, EXIT_REFUSED
from secure_mirror.render.spark import submitted_master, task_max_failures
from secure_mirror.run.job import ride
from secure_mirror.run.json_lines import RunLine
from secure_mirror.run.monitor import Reporter
from secure_mirror.run.waiting import judge_failure, waiting_line, waiting_text

NOT_ENOUGH = {
    "seq": 1,
    "time_ms": 1_000_000,
    "stage": 3,
    "partition": 0,
    "attempt": 0,
    "counts": True,
    "classes": ["org.apache.spark.SparkException", "org.apache.kafka.common.errors.NotEnoughReplicasException"],
    "retriable": True,
    "side": "target",
    "message": "org.apache.spark.SparkException: the sink could not write",
    "causes": ["Caused by: org.apache.kafka.common.errors.NotEnoughReplicasException: Messages are rejected"],
}


def _failure(**changes) -> dict:
    return {**NOT_ENOUGH, **changes}


# ---- the judge ------------------------------------------------------------------------------------------------
def test_a_retriable_kafka_failure_is_transient():
    assert judge_failure(NOT_ENOUGH) == "transient"


@pytest.mark.parametrize(
    "words",
    [
        "Caused by: org.apache.kafka.common.errors.TopicAuthorizationException: Not authorized to access topics: [t]",
        "Caused by: java.lang.IllegalStateException: source records the checkpoint expects are gone, data may have "
        "been lost (failOnDataLoss): t-0 is no longer on the source",
    ],
)
def test_a_refusal_wins_over_a_retriable_cause(words):
    assert judge_failure(_failure(causes=[*NOT_ENOUGH["causes"], words])) == "refused"


def test_a_fenced_transactional_producer_is_mended_by_a_retry():
    fenced = _failure(retriable=False, classes=["org.apache.kafka.common.errors.ProducerFencedException"])
    assert judge_failure(fenced) == "transient"


def test_anything_else_gets_sparks_own_attempts_then_fails():
    bug = _failure(retriable=False, classes=["java.lang.NullPointerException"], causes=[], message="NPE")
    assert [judge_failure({**bug, "attempt": n}) for n in range(5)] == ["again", "again", "again", "failed", "failed"]
    bug = {**bug, "attempt": 3}
    assert judge_failure({**bug, "counts": False}) == "transient"  # killed or lost: Spark does not count it either


# ---- the local master's retries -------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("master", "ride_seconds", "submitted"),
    [
        ("local[2]", 1800, "local[2,70]"),
        ("local", 1800, "local[1,70]"),
        ("local[*]", 600, "local[*,30]"),
        ("local[2,3]", 1800, "local[2,3]"),  # the profile's own count stays
        ("local[2]", 0, "local[2]"),  # rides nothing: Spark's default, one try
        ("yarn", 1800, "yarn"),
        ("spark://host:7077", 1800, "spark://host:7077"),
    ],
)
def test_a_local_master_gets_task_retries(master, ride_seconds, submitted):
    assert submitted_master(master, ride_seconds) == submitted


def test_the_retries_outlast_the_ride():
    """Each retry pauses at most 30 s (jvm/sink Backoff): the tries must outlast the ride, so the driver gives up."""
    for seconds in (60, 600, 1800, 7 * 24 * 3600):
        assert (task_max_failures(seconds) - 5) * 30 > seconds


# ---- the waiting line -----------------------------------------------------------------------------------------
def test_the_waiting_line_says_what_for_and_since_when():
    line = waiting_line(
        now=1068.0,
        since=1000.0,
        ride_seconds=1800,
        sides={"target", ""},
        what="writing batch 12",
        error="NotEnoughReplicasException: Messages are rejected",
        task_retries=5,
        unreachable={"target": ["kafka-2.target.test:9093", "kafka-3.target.test:9093"], "source": []},
        brokers={"target": 3, "source": 3},
        batch=11,
    )
    assert line.seconds == 68 and line.gives_up_in_seconds == 1732 and line.sides == ["target"]
    assert line.unreachable == {"target": ["kafka-2.target.test:9093", "kafka-3.target.test:9093"]}
    assert waiting_text(line) == (
        "waiting 68 s: target: 2 of 3 brokers unreachable (kafka-2.target.test:9093, kafka-3.target.test:9093); "
        "writing batch 12, 5 task retries, last: NotEnoughReplicasException: Messages are rejected; the checkpoint "
        "holds at batch 11, nothing is skipped; gives up in 1732 s (mirror.ride_through_seconds)"
    )
    assert RunLine.model_validate_json(line.model_dump_json()).root.kind == "waiting"


# ---- the driver's watch ---------------------------------------------------------------------------------------
class _Failures:
    def __init__(self):
        self.rows: list[dict] = []

    def since(self, seq: int) -> str:
        return json.dumps([r for r in self.rows if r["seq"] > seq])


class _Jvm:
    def __init__(self):
        self.failures = _Failures()
        self.open: list[dict] = []
        outer = self

        class TaskFailures:
            @staticmethod
            def register(_context):
                return outer.failures

        class Waits:
            @staticmethod
            def json() -> str:
                return json.dumps({"open": outer.open, "ridden": 0})

        self.published: list[dict] = []

        class MirrorMetrics:
            @staticmethod
            def task(figures: str) -> None:
                outer.published.append(json.loads(figures))

        self.securemirror = type("P", (), {})()
        self.securemirror.driver = type("D", (), {"TaskFailures": TaskFailures})
        self.securemirror.ride = type("R", (), {"Waits": Waits})
        self.securemirror.metrics = type("M", (), {"MirrorMetrics": MirrorMetrics})


class _Spark:
    def __init__(self):
        self._jvm = _Jvm()
        self._jsc = type("J", (), {"sc": lambda _self: None})()


class _Query:
    def __init__(self):
        self.stopped = False
        self.status = {"isTriggerActive": True}

    def stop(self):
        self.stopped = True


class _Clock:
    def __init__(self, now: float = 1000.0):
        self.now = now

    def __call__(self) -> float:
        return self.now


def _watch(ride_seconds=600, bootstraps=None):
    spark, clock, batch, stream = _Spark(), _Clock(), [5], io.StringIO()
    reporter = Reporter(None, 0.0, ["", ""], stream, json_lines=True)
    watch = ride.RideWatch(
        spark, ride_seconds, bootstraps or {}, lambda: batch[0], reporter.waiting, interval=10.0, clock=clock
    )
    return watch, spark._jvm, clock, batch, stream


def test_transient_failures_are_a_wait_that_ends_with_the_next_batch():
    watch, jvm, clock, batch, stream = _watch()
    query = _Query()
    jvm.failures.rows.append(_failure(time_ms=999_000))
    assert watch(query) is False and not query.stopped
    shown = [json.loads(line) for line in stream.getvalue().splitlines()]
    assert shown[-1]["kind"] == "waiting" and shown[-1]["task_retries"] == 1 and shown[-1]["sides"] == ["target"]
    assert shown[-1]["seconds"] == 1 and shown[-1]["batch"] == 5
    clock.now += 30
    batch[0] = 6
    assert watch(query) is False
    assert watch.wait is None and watch.ridden.as_dict() == {"waits": 1, "longest_seconds": 31, "task_retries": 1}
    # the same, as Kafka Connect's task error metrics (MirrorMetrics.task): waiting, then the wait ridden
    waiting, ridden = jvm.published
    assert waiting == {"task_retries": 1, "last_error_ms": 999_000, "waits": 0, "waiting_since_ms": 999_000}
    assert ridden == {"task_retries": 1, "last_error_ms": 999_000, "waits": 1, "waiting_since_ms": -1}


def test_a_refused_grant_stops_the_query_at_once():
    watch, jvm, _clock, _batch, _stream = _watch()
    query = _Query()
    refused = "Caused by: org.apache.kafka.common.errors.TopicAuthorizationException: Not authorized to access topics"
    jvm.failures.rows.append(_failure(causes=[refused], retriable=False))
    assert watch(query) is True and query.stopped
    code, sentence = watch.stopped
    assert code == EXIT_REFUSED and "grant the ACLs" in sentence


def test_a_wait_longer_than_the_ride_gives_up_with_a_sentence():
    watch, jvm, clock, _batch, _stream = _watch(ride_seconds=120)
    query = _Query()
    jvm.open.append({"side": "source", "what": "list the partitions' offsets", "sinceMs": 1_000_000, "tries": 3,
                     "error": "TimeoutException: Timed out waiting for a node assignment"})  # fmt: skip
    assert watch(query) is False
    clock.now += 121
    assert watch(query) is True and query.stopped
    code, sentence = watch.stopped
    assert code == EXIT_FAILED
    assert sentence.startswith("the source did not come back within mirror.ride_through_seconds (120 s; waited 121 s)")
    assert "nothing is lost" in sentence


def test_a_long_batch_is_a_wait_only_while_a_broker_is_away():
    with socket.socket() as listening:
        listening.bind(("127.0.0.1", 0))
        listening.listen()
        here = listening.getsockname()[1]
        with socket.socket() as closed:
            closed.bind(("127.0.0.1", 0))
            away = closed.getsockname()[1]  # bound, never listening: a connection is refused
            watch, _jvm, clock, _batch, stream = _watch(bootstraps={"target": f"127.0.0.1:{here}"})
            query = _Query()
            clock.now += ride.STALL_SECONDS + 1
            assert watch(query) is False and watch.wait is None  # long, but every broker answers
            watch.brokers["target"].append(("127.0.0.1", away))
            clock.now += ride.PROBE_EVERY + 1
            assert watch(query) is False and watch.wait is not None
    line = json.loads(stream.getvalue().splitlines()[-1])
    assert line["unreachable"] == {"target": [f"127.0.0.1:{away}"]} and line["brokers"] == {"target": 2}


def test_bootstrap_servers_are_read_as_host_port_pairs():
    assert ride.brokers_of("a.test:9093, [::1]:9094,noport") == [("a.test", 9093), ("::1", 9094)]


# ---- the driver's own questions, asked again in place ---------------------------------------------------------
def _py4j_error(name: str):
    """A Py4JJavaError as Py4J raises it, with a Java exception the fake JVM judges by its name."""
    from py4j.protocol import Py4JJavaError

    class Raised(Py4JJavaError):
        def __str__(self) -> str:
            return name

    raised = Raised.__new__(Raised)  # Py4J's own __init__ asks the gateway about the Java object
    Exception.__init__(raised, name)
    raised.java_exception = name
    return raised


class _TransientJvm:
    class securemirror:
        class ride:
            class Transient:
                @staticmethod
                def isTransient(java_exception) -> bool:
                    return "Timeout" in java_exception

                @staticmethod
                def describe(java_exception) -> str:
                    return f"{java_exception}: Timed out waiting for a node assignment"


def test_the_driver_asks_again_through_a_timeout_and_says_so_meanwhile():
    answers = [_py4j_error("TimeoutException"), _py4j_error("TimeoutException"), "planned"]
    pauses, seen = [], []

    def call():
        answer = answers.pop(0)
        if isinstance(answer, Exception):
            raise answer
        return answer

    def sleep(seconds):
        pauses.append(seconds)
        seen.append(dict(next(iter(ride.OPEN.values()))))

    assert ride.ride_in_place(_TransientJvm, "target", "plan batch 3", 600, call, sleep=sleep) == "planned"
    assert pauses == [1.0, 2.0] and ride.OPEN == {}
    assert seen[-1]["side"] == "target" and seen[-1]["tries"] == 2 and "node assignment" in seen[-1]["error"]


def test_the_driver_does_not_ask_again_what_no_retry_mends():
    def refused():
        raise _py4j_error("TopicAuthorizationException")

    with pytest.raises(Exception, match="TopicAuthorizationException"):
        ride.ride_in_place(_TransientJvm, "target", "plan batch 3", 600, refused, sleep=lambda _s: None)


def test_the_driver_gives_up_once_the_ride_is_spent():
    def away():
        raise _py4j_error("TimeoutException")

    clock = iter(range(0, 10_000, 100))
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(ride.time, "time", lambda: float(next(clock)))
        with pytest.raises(RuntimeError, match=r"within mirror.ride_through_seconds \(250 s; waited 300 s\)"):
            ride.ride_in_place(_TransientJvm, "target", "plan batch 3", 250, away, sleep=lambda _s: None)
    assert ride.OPEN == {}


def test_a_lost_executor_is_transient():
    lost = {"reason": "ExecutorLostFailure", "counts": True, "classes": [], "retriable": False, "causes": [],
            "message": "ExecutorLostFailure (executor 0 exited caused by one of the running tasks)"}  # fmt: skip
    assert judge_failure(lost) == "transient"


def test_a_failure_no_retry_is_known_to_mend_gets_sparks_attempts_then_stops_the_job():
    watch, jvm, _clock, _batch, _stream = _watch()
    query = _Query()
    bug = _failure(retriable=False, classes=["java.lang.NullPointerException"], causes=[], message="NPE")
    for attempt in range(3):
        jvm.failures.rows.append({**bug, "seq": attempt + 1, "attempt": attempt})
        assert watch(query) is False and not query.stopped and watch.wait is None  # no cluster is known to be away
    jvm.failures.rows.append({**bug, "seq": 4, "attempt": 3})
    assert watch(query) is True and query.stopped and watch.stopped[0] == EXIT_FAILED
    assert watch.ridden.task_retries == 3


def test_a_refused_publication_is_said_once_and_the_watch_goes_on(capsys):
    watch, jvm, clock, _batch, _stream = _watch()

    def refuse(_figures: str) -> None:
        raise RuntimeError("py4j: no such method\ntrace")

    jvm.securemirror.metrics.MirrorMetrics.task = staticmethod(refuse)
    watch.metrics = jvm.securemirror.metrics.MirrorMetrics
    query = _Query()
    jvm.failures.rows.append(_failure(time_ms=999_000))
    assert watch(query) is False and watch.wait is not None  # the wait is seen all the same
    clock.now += 1
    assert watch(query) is False
    err = capsys.readouterr().err
    assert err.count("the task's figures are not published (RuntimeError: py4j: no such method)") == 1
