"""The job's driver riding through a cluster's bad minutes (docs/ride-through.md).

Spark retries a failed task (``spark.task.maxFailures``, a local master's ``local[N,F]``; render/spark.py), the
mirror's source pauses each retry, and the driver's own questions to the source are asked again in place
(jvm/sink ``securemirror.ride.Waits``). :class:`RideWatch` is what decides, once a second, from plain answers:

- the failed task attempts the scheduler saw (``securemirror.driver.TaskFailures``), each judged by
  :func:`~secure_mirror.run.waiting.judge_failure`: a refusal stops the query at once (exit 5), any other failure is
  left to Spark's own attempts and stops the query on the last (exit 1), a transient one starts (or continues) a wait;
- the driver's open waits (``Waits.json``);
- a batch that has run long without a failure, with a listed broker that does not answer: a wait too.

A wait ends when a batch completes with no driver wait open. While one lasts, a ``waiting`` line every status interval
says what for and since when, naming the brokers that do not answer a TCP connection; once it has lasted
``mirror.ride_through_seconds``, the query is stopped and the job fails with a sentence (exit 1).
"""

from __future__ import annotations

import json
import socket
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TypeVar

from secure_mirror.errors import EXIT_FAILED, EXIT_REFUSED
from secure_mirror.run.job.outcome import classify
from secure_mirror.run.waiting import WaitingLine, failure_text, gave_up_text, judge_failure, waiting_line

ASK_EVERY = 1.0  # seconds between two looks at the failures and waits
STALL_SECONDS = 60.0  # a batch running this long with a broker away is a wait
PROBE_EVERY = 10.0  # seconds between two TCP probes of the listed brokers while waiting
PROBE_TIMEOUT = 2.0
T = TypeVar("T")


def brokers_of(bootstrap: str) -> list[tuple[str, int]]:
    """``host:port`` pairs of a ``bootstrap.servers`` value (an address without a port is left out)."""
    found = []
    for item in bootstrap.split(","):
        host, _, port = item.strip().rpartition(":")
        if host and port.isdigit():
            found.append((host.strip("[]"), int(port)))
    return found


def unreachable(brokers: list[tuple[str, int]], timeout: float = PROBE_TIMEOUT) -> list[str]:
    """The brokers that refuse or do not answer a TCP connection now (no login: only whether one is there)."""
    away = []
    for host, port in brokers:
        try:
            with socket.create_connection((host, port), timeout=timeout):
                pass
        except OSError:
            away.append(f"{host}:{port}")
    return away


OPEN: dict[str, dict] = {}  # the driver's Python waits (:func:`ride_in_place`), read by RideWatch beside the JVM's


def ride_in_place(jvm, side: str, what: str, seconds: int, call: Callable[[], T], sleep=time.sleep) -> T:
    """``call()``, asked again through a cluster's bad minute: a Py4J error whose Java cause chain is transient
    (``securemirror.ride.Transient``) is retried after a pause (1 s, doubling, at most 30 s) for up to ``seconds``
    from the first failure, meanwhile an open wait (:data:`OPEN`); then a sentence naming the ride. Anything else is
    raised at once. The driver's planning of a batch (run/job/sink.py) asks through it."""
    from py4j.protocol import Py4JJavaError

    key, first, tries = f"{side}: {what} #{threading.get_ident()}", 0.0, 0
    try:
        while True:
            try:
                return call()
            except Py4JJavaError as error:
                if not (seconds > 0 and jvm.securemirror.ride.Transient.isTransient(error.java_exception)):
                    raise
                now = time.time()
                first, tries = (first or now), tries + 1
                said = str(jvm.securemirror.ride.Transient.describe(error.java_exception))
                if now - first >= seconds:
                    raise RuntimeError(gave_up_text(int(now - first), seconds, {side}, said)) from None
                OPEN[key] = {"side": side, "what": what, "sinceMs": first * 1000, "tries": tries, "error": said}
                sleep(min(2.0 ** (tries - 1), 30.0, max(0.001, first + seconds - now)))
    finally:
        OPEN.pop(key, None)


@dataclass
class Ridden:
    """The waits of the run so far: how many ended well, the longest, the task retries they took."""

    waits: int = 0
    longest_seconds: int = 0
    task_retries: int = 0

    def as_dict(self) -> dict:
        return {"waits": self.waits, "longest_seconds": self.longest_seconds, "task_retries": self.task_retries}


@dataclass
class _Wait:
    since: float
    sides: set[str] = field(default_factory=set)
    retries: int = 0
    error: str | None = None
    what: str = ""


class RideWatch:
    """Called with the query in the driver's watch loop (``monitor.watch``'s stop test): True once the query must stop,
    with :attr:`stopped` the exit code and sentence. ``show`` prints a :class:`WaitingLine` (the reporter's)."""

    def __init__(
        self,
        spark,
        ride_seconds: int,
        bootstraps: dict[str, str],
        last_batch: Callable[[], int],
        show: Callable[[WaitingLine], None],
        interval: float,
        clock: Callable[[], float] = time.time,
    ):
        jvm = spark._jvm
        self.failures = jvm.securemirror.driver.TaskFailures.register(spark._jsc.sc())
        self.waits = jvm.securemirror.ride.Waits
        self.metrics = jvm.securemirror.metrics.MirrorMetrics
        self.metrics_said = False
        self.last_error_ms = 0
        self.ride_seconds = ride_seconds
        self.brokers = {side: brokers_of(servers) for side, servers in bootstraps.items() if servers}
        self.last_batch = last_batch
        self.show = show
        self.interval = interval
        self.clock = clock
        self.seq = 0
        self.batch = last_batch()
        self.progressed_at = clock()
        self.wait: _Wait | None = None
        self.ridden = Ridden()
        self.stopped: tuple[int, str] | None = None
        self.next_show = 0.0
        self.next_probe = 0.0
        self.away: dict[str, list[str]] = {}
        self.closed = threading.Event()
        self.thread: threading.Thread | None = None

    def in_background(self, query) -> RideWatch:
        """Look once a second on a thread of its own until :meth:`close` or the query ends: the driver's watch loop
        may itself wait on a cluster that is away (a topic-shape pass, a heartbeat), and the waits must still be
        seen and said. The loop asks :attr:`stopped`."""

        def loop() -> None:
            while not self.closed.wait(ASK_EVERY) and query.isActive:
                try:
                    if self(query):
                        return
                except Exception as error:  # noqa: BLE001 - the JVM going away at the job's end; never the mirror's
                    if not self.closed.is_set():
                        print(f"secure-mirror job: the ride watch stopped looking: {error}", file=sys.stderr)
                    return

        self.thread = threading.Thread(target=loop, name="secure-mirror ride watch", daemon=True)
        self.thread.start()
        return self

    def close(self) -> None:
        self.closed.set()
        if self.thread is not None:
            self.thread.join(timeout=10)

    def __call__(self, query) -> bool:
        """Look once (the background thread does so every :data:`ASK_EVERY` s): True once the query must stop
        (:attr:`stopped`)."""
        now = self.clock()
        if self.stopped is not None:
            return True
        failures = json.loads(str(self.failures.since(self.seq)))
        open_waits = json.loads(str(self.waits.json()))["open"] + list(OPEN.values())
        self._progress(now, failures, open_waits)
        for failure in failures:
            self.seq = max(self.seq, int(failure["seq"]))
            failed_at = failure.get("time_ms", now * 1000) / 1000
            self.last_error_ms = max(self.last_error_ms, int(failed_at * 1000))
            verdict = judge_failure(failure)
            if verdict == "again":  # Spark runs it again; no cluster is known to be away
                self.ridden.task_retries += 1
                continue
            if verdict != "transient":
                return self._stop(query, verdict, failure)
            wait = self._waiting(failed_at)
            wait.retries += 1
            self.ridden.task_retries += 1
            wait.error = failure_text(failure)
            wait.sides.add(failure.get("side") or "")
            wait.what = f"writing batch {self.batch + 1} (its failed tasks are retried with a pause)"
        for held in open_waits:
            wait = self._waiting(held["sinceMs"] / 1000)
            wait.sides.add(held["side"])
            wait.error = held["error"]
            wait.what = f"to {held['what']} (asked again with a pause)"
        self._stalled(now, query)
        self._publish()
        if self.wait is None:
            return False
        waited = now - self.wait.since
        if waited > self.ride_seconds:
            self.stopped = (EXIT_FAILED, gave_up_text(int(waited), self.ride_seconds, self.wait.sides, self.wait.error))
            query.stop()
            return True
        if now >= self.next_show:
            self.next_show = now + self.interval
            self.show(self._line(now))
        return False

    def _publish(self) -> None:
        """The retries and the wait as Kafka Connect's task error metrics of a MirrorMaker 2 task (docs/metrics.md)."""
        figures = {
            "task_retries": self.ridden.task_retries,
            "last_error_ms": self.last_error_ms,
            "waits": self.ridden.waits,
            "waiting_since_ms": -1 if self.wait is None else int(self.wait.since * 1000),
        }
        try:
            problem = self.metrics.task(json.dumps(figures))
        except Exception as error:  # noqa: BLE001 - the JVM refused the call: the watch goes on looking all the same
            problem = f"{type(error).__name__}: {str(error).splitlines()[0] if str(error) else ''}"
        if problem is not None and not self.metrics_said:  # publishing never fails the mirror, nor this watch
            self.metrics_said = True
            print(
                f"secure-mirror job: the task's figures are not published ({problem}); the mirror goes on",
                file=sys.stderr,
            )

    def _waiting(self, since: float) -> _Wait:
        if self.wait is None:
            self.wait = _Wait(since=since)
            self.next_show = self.next_probe = 0.0
        else:
            self.wait.since = min(self.wait.since, since)
        return self.wait

    def _progress(self, now: float, failures: list, open_waits: list) -> None:
        """A batch completed since the last look: the wait (if any) is over, unless something still fails."""
        batch = self.last_batch()
        if batch <= self.batch:
            return
        self.batch, self.progressed_at = batch, now
        if self.wait is not None and not failures and not open_waits:
            self.ridden.waits += 1
            self.ridden.longest_seconds = max(self.ridden.longest_seconds, int(now - self.wait.since))
            self.wait = None

    def _stalled(self, now: float, query) -> None:
        """A batch running for :data:`STALL_SECONDS` while a listed broker does not answer is a wait (a producer or
        consumer retrying inside Kafka's client shows no failure until its own timeout)."""
        if self.wait is None and now - self.progressed_at < STALL_SECONDS:
            return
        if now >= self.next_probe:
            self.next_probe = now + PROBE_EVERY
            self.away = {side: unreachable(brokers) for side, brokers in self.brokers.items()}
        if self.wait is None and any(self.away.values()) and (query.status or {}).get("isTriggerActive", True):
            wait = self._waiting(self.progressed_at)
            wait.what = f"writing batch {self.batch + 1}, running for {int(now - self.progressed_at)} s"
        if self.wait is not None:
            self.wait.sides.update(side for side, hosts in self.away.items() if hosts)

    def _line(self, now: float) -> WaitingLine:
        assert self.wait is not None
        return waiting_line(
            now=now,
            since=self.wait.since,
            ride_seconds=self.ride_seconds,
            sides=self.wait.sides,
            what=self.wait.what,
            error=self.wait.error,
            task_retries=self.wait.retries,
            unreachable=self.away,
            brokers={side: len(brokers) for side, brokers in self.brokers.items()},
            batch=self.batch,
        )

    def _stop(self, query, verdict: str, failure: dict) -> bool:
        text = "\n".join([str(failure.get("message") or ""), *map(str, failure.get("causes") or [])])
        code, sentence = classify(RuntimeError(text))
        if verdict == "refused" and code != EXIT_REFUSED:
            code = EXIT_REFUSED
        self.stopped = (code, sentence)
        query.stop()
        return True
