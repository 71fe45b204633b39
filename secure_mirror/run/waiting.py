"""What the job waits for while a cluster has a bad minute (docs/ride-through.md): the judge of a failed task, the
``waiting`` line of ``run --json`` and its sentence. Pure functions and a model; the job's driver asks the JVM and
the brokers (``run/job/ride.py``) and hands the answers here.

A failed task is judged by its exception's cause chain, as the driver's kafka-clients classes it (``retriable``)
and by the words of the mirror's refusals:

- ``refused``: a refused grant, source records the checkpoint expects gone (restarting does not help: exit 5);
- ``transient``: one of Kafka's retriable exceptions (timeouts, leaders and coordinators that moved,
  ``NOT_ENOUGH_REPLICAS``, disconnections), a transactional producer's state that a retried task mends with a new
  transaction (fenced by the coordinator's timeout of a transaction open through an outage, an aborted transaction),
  or a task that failed without an exception of its own (its executor lost, killed);
- ``again``: anything else, on a task's first attempts: Spark runs it again, as a cluster's Spark always did (its
  default of :data:`SPARK_ATTEMPTS` attempts; a retired client's close, an executor's hiccup), but no wait begins;
- ``failed``: anything else on the task's last of those attempts (a bug is not a bad minute): the job stops.
"""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Literal

from pydantic import BaseModel, Field

Verdict = Literal["transient", "refused", "again", "failed"]

# attempts a cluster's Spark gives a task unless told otherwise (spark.task.maxFailures' default)
SPARK_ATTEMPTS = 4

# the words of what retrying cannot mend (run/job/outcome.py's sentences look for the same)
REFUSALS = (
    "AuthorizationException",
    "Not authorized",
    "failOnDataLoss",
    "data may have been lost",
    "records the checkpoint expects are gone",
)
# Kafka exceptions outside its RetriableException family that a retried task mends: its new attempt begins a new
# transaction (initTransactions fences what the failed attempt left open) or gets a new producer
MENDED_BY_A_RETRY = (
    "org.apache.kafka.common.errors.ProducerFencedException",
    "org.apache.kafka.common.errors.InvalidProducerEpochException",
    "org.apache.kafka.common.errors.TransactionAbortedException",
    "org.apache.kafka.common.errors.TransactionAbortableException",
    "org.apache.kafka.common.errors.InvalidTxnStateException",
    "org.apache.kafka.common.errors.UnknownProducerIdException",
    "org.apache.kafka.common.errors.OutOfOrderSequenceException",
)


def judge_failure(failure: dict) -> Verdict:
    """The verdict on one failed task attempt (a row of ``securemirror.driver.TaskFailures``)."""
    text = " ".join([str(failure.get("message") or ""), *map(str, failure.get("causes") or [])])
    if any(words in text for words in REFUSALS):
        return "refused"
    if failure.get("retriable") or any(name in MENDED_BY_A_RETRY for name in failure.get("classes") or []):
        return "transient"
    if failure.get("counts") is False:  # killed or lost, not failed (Spark does not count it either)
        return "transient"
    if failure.get("reason") not in (None, "ExceptionFailure"):  # an executor lost, a fetch or a result lost: no code
        return "transient"  # of the mirror's failed; Spark runs the task elsewhere
    if int(failure.get("attempt") or 0) + 1 < SPARK_ATTEMPTS:
        return "again"
    return "failed"


def failure_text(failure: dict) -> str:
    """The words a status line and a sentence quote of a failed task: its innermost cause's line, else its own."""
    causes = [str(c).removeprefix("Caused by: ") for c in failure.get("causes") or []]
    return (causes[-1] if causes else str(failure.get("message") or "")).strip()[:300]


class WaitingLine(BaseModel):
    """``run --json``: the job rides through a cluster's bad minute (one line per status interval while it lasts)."""

    kind: Literal["waiting"]
    time: str = Field(description="when this line was written (ISO 8601, UTC)")
    since: str = Field(description="when the wait began: the first failure, or the last batch before a stall")
    seconds: int = Field(description="how long it has waited so far")
    gives_up_in_seconds: int = Field(description="until mirror.ride_through_seconds is spent and the job fails")
    sides: list[Literal["source", "target"]] = Field(description="the clusters it waits for, as far as known")
    what: str = Field(description="what it waits to do")
    error: str | None = Field(description="the last failure's words (Kafka's), or null")
    task_retries: int = Field(description="task attempts that failed and were retried during this wait")
    unreachable: dict[str, list[str]] = Field(
        description="side -> listed brokers (host:port) that refused or did not answer a TCP connection just now"
    )
    brokers: dict[str, int] = Field(description="side -> how many brokers the profile lists")
    batch: int = Field(description="the last batch written: the checkpoint holds there, nothing past it is skipped")


def waiting_line(
    *,
    now: float,
    since: float,
    ride_seconds: int,
    sides: set[str],
    what: str,
    error: str | None,
    task_retries: int,
    unreachable: dict[str, list[str]],
    brokers: dict[str, int],
    batch: int,
) -> WaitingLine:
    """The line of a wait going on at ``now`` (seconds since the epoch), begun at ``since``."""
    waited = max(0, int(now - since))
    return WaitingLine(
        kind="waiting",
        time=_iso(now),
        since=_iso(since),
        seconds=waited,
        gives_up_in_seconds=max(0, ride_seconds - waited),
        sides=sorted(s for s in sides if s in ("source", "target")),
        what=what,
        error=error,
        task_retries=task_retries,
        unreachable={side: hosts for side, hosts in sorted(unreachable.items()) if hosts},
        brokers=dict(sorted(brokers.items())),
        batch=batch,
    )


def waiting_text(line: WaitingLine) -> str:
    """The status line's sentence, e.g. "waiting 68 s: target: 2 of 3 brokers unreachable; ..."."""
    away = [
        f"{side}: {len(hosts)} of {line.brokers.get(side, len(hosts))} brokers unreachable ({', '.join(hosts)})"
        for side, hosts in line.unreachable.items()
    ]
    where = "; ".join(away) or (f"the {' and the '.join(line.sides)}" if line.sides else "the clusters")
    retried = f", {line.task_retries} task retries" if line.task_retries else ""
    last = f", last: {line.error}" if line.error else ""
    return (
        f"waiting {line.seconds} s: {where}; {line.what}{retried}{last}; the checkpoint holds at batch {line.batch}, "
        f"nothing is skipped; gives up in {line.gives_up_in_seconds} s (mirror.ride_through_seconds)"
    )


def gave_up_text(seconds: int, ride_seconds: int, sides: set[str], error: str | None) -> str:
    """The job's sentence when a wait outlasted ``mirror.ride_through_seconds``."""
    which = " and the ".join(sorted(sides)) or "clusters"
    return (
        f"the {which} did not come back within mirror.ride_through_seconds ({ride_seconds} s; waited {seconds} s)"
        f"{': ' + error if error else ''}; the checkpoint holds at the last batch written, so nothing is lost: run "
        "it again once the cluster is back, or raise mirror.ride_through_seconds"
    )


def _iso(seconds: float) -> str:
    return datetime.fromtimestamp(seconds, timezone.utc).isoformat(timespec="seconds")
