"""Issue 58: the job rides through the target cluster going away, in place, without ``--supervise``.

On the session's one-broker sandbox, two jobs run at once without ``--supervise`` (``run --json``), one exactly_once
and one at_least_once, each over a topic of its own under an idempotent and a transactional producer (every 5th
transaction aborted). The target's only broker is stopped for :data:`OUTAGE_SECONDS`, longer than the sink's producer
may wait for a record (``mirror.delivery.delivery_timeout_ms`` set to :data:`DELIVERY_TIMEOUT_MS` here, so that
tasks do fail and are retried inside the outage: what a longer outage does with the default), and started again.
Meanwhile the whole target cluster is away: its partitions' leaders, the sink's transaction coordinator and the
groups' coordinator.

Each job must:
- still run when the target is back (no exit, no restart), and catch up by itself;
- have said it waited while the target was away (``waiting`` lines naming the target), and, at its end, what it rode
  through (the outcome line's ``ridden``: the task retries Spark ran);
- have lost nothing (independent read_committed count of the target), exactly_once duplicated nothing, and no
  record of an aborted source transaction is on the target (and the producer did abort some).
The fault is shown to have happened: the broker's port refused connections during the outage.
"""

from __future__ import annotations

import socket
import time
from contextlib import ExitStack

import pytest

from secure_mirror.sandbox.sink_jar import sink_conf
from secure_mirror.sandbox.waiting import wait_for

from .conftest import DETAILS, LONG
from .harness import MirrorUnderLoad

pytestmark = [
    pytest.mark.reliability,
    pytest.mark.sandbox,
    pytest.mark.spark,
    pytest.mark.slow,
    # superseded in CI by the three-broker suite's outage below min.insync.replicas (the target not writable, both
    # guarantees, unsupervised) and, in the long setting, by test_long_outages.py (every target broker away 300 s)
    pytest.mark.skipif(not LONG, reason="the long setting's (SECURE_MIRROR_RELIABILITY=long)"),
]

GUARANTEES = ("exactly_once", "at_least_once")
OUTAGE_SECONDS = 150.0 if LONG else 75.0
DELIVERY_TIMEOUT_MS = 35_000  # more than the producer's request timeout (30 s) and linger, as Kafka requires
CATCH_UP_TIMEOUT = 600.0


def _profile_hook(guarantee: str, folder):
    def apply(data: dict) -> None:
        delivery = data["mirror"].setdefault("delivery", {})
        delivery.update(guarantee=guarantee, delivery_timeout_ms=DELIVERY_TIMEOUT_MS)
        data["mirror"]["spark"].setdefault("conf", {}).update(sink_conf(folder))

    return apply


def _refuses(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=2.0):
            return False
    except OSError:
        return True


@pytest.fixture(scope="module")
def target_away(sandbox, tmp_path_factory):
    loads: dict[str, MirrorUnderLoad] = {}
    seen: dict = {"refused": [], "caught_up": {}}
    with ExitStack() as stack:
        for g in GUARANTEES:
            folder = tmp_path_factory.mktemp(f"ride-{g}")
            load = MirrorUnderLoad(
                sandbox,
                folder,
                partitions=3,
                rate=40.0,
                transactional_rate=40.0,
                profile_hook=_profile_hook(g, folder),
                name=f"ride-{g.replace('_', '-')}",
            )
            loads[g] = stack.enter_context(load)
        for load in loads.values():
            load.start_job(json_lines=True)
        for load in loads.values():
            load.wait_for_batches(2, timeout=300)
        port = sandbox.broker("target").port
        sandbox.stop_broker("target")
        stopped = time.monotonic()
        try:
            while time.monotonic() - stopped < OUTAGE_SECONDS:
                seen["refused"].append(_refuses(port))
                for g, load in loads.items():
                    assert load.job.poll() is None, f"{g}: the job ended during the outage:\n{load.log_tail()}"
                time.sleep(5.0)
            seen["lasted"] = round(time.monotonic() - stopped)
        finally:
            sandbox.start_broker("target")
        back = time.monotonic()
        for g, load in loads.items():
            marks = load.source_marks()
            wait_for(
                lambda load=load, marks=marks: load.caught_up_to(marks) or load._fail_if_ended("it caught up"),
                CATCH_UP_TIMEOUT,
                f"{g} caught up after the outage",
                step=2.0,
            )
            seen["caught_up"][g] = round(time.monotonic() - back, 1)
        seen["lines"] = {g: load.run_lines() for g, load in loads.items()}
        seen["outcomes"] = {g: load.finish() for g, load in loads.items()}
        seen["final_lines"] = {g: load.run_lines() for g, load in loads.items()}
    for g in GUARANTEES:
        waits = [line for line in seen["lines"][g] if line.get("kind") == "waiting"]
        DETAILS.append(
            f"ride through, {g}: the target's only broker stopped for {seen['lasted']} s (delivery timeout "
            f"{DELIVERY_TIMEOUT_MS} ms), caught up {seen['caught_up'][g]} s after it was back, {len(waits)} waiting "
            f"lines, longest {max((w['seconds'] for w in waits), default=0)} s: {seen['outcomes'][g].text()}"
        )
    return seen


def test_the_target_was_away(target_away):
    assert target_away["refused"] and all(target_away["refused"]), "the target broker answered during the outage"


@pytest.mark.parametrize("guarantee", GUARANTEES)
def test_the_job_rode_through_without_a_restart(target_away, guarantee):
    outcome = target_away["outcomes"][guarantee]
    assert outcome.restarts == 0 and outcome.exit_codes == [0], outcome.text()
    outcome_line = [line for line in target_away["final_lines"][guarantee] if line.get("kind") == "outcome"][-1]
    assert outcome_line["ridden"]["task_retries"] > 0, outcome_line  # tasks failed inside the outage and were retried
    assert outcome_line["ridden"]["waits"] >= 1, outcome_line


@pytest.mark.parametrize("guarantee", GUARANTEES)
def test_it_said_it_waited_for_the_target(target_away, guarantee):
    waits = [line for line in target_away["lines"][guarantee] if line.get("kind") == "waiting"]
    assert waits, "no waiting line while the target was away"
    assert any("target" in line["sides"] for line in waits), waits[-1]
    assert any(line["unreachable"].get("target") for line in waits), waits[-1]
    assert max(line["seconds"] for line in waits) >= 30, waits[-1]


@pytest.mark.parametrize("guarantee", GUARANTEES)
def test_nothing_was_lost_and_no_aborted_record_mirrored(target_away, guarantee):
    outcome = target_away["outcomes"][guarantee]
    assert outcome.produced > 0 and outcome.lost == 0, outcome.text()
    assert outcome.aborted_transactions, "the transactional producer aborted nothing: the check below means nothing"
    assert outcome.aborted_on_target == 0, outcome.text()
    if guarantee == "exactly_once":
        assert outcome.duplicated == 0 and outcome.verify_ok, outcome.text()
