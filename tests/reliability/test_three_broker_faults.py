"""Issue 40, point 3: the mirror through the faults a three-broker cluster has every week, in both guarantees.

Two mirror jobs run at once on the session's three-broker sandbox (``three_brokers``: three brokers a side, a
three-voter KRaft quorum, replication factor 3, ``min.insync.replicas`` 2), one exactly_once and one at_least_once,
each ``--supervise``d, each over a topic of its own of 4 partitions. On each source topic one idempotent producer
and one transactional producer (every 5th transaction aborted) write for the whole run. The faults come one after
another while both jobs run; after each one both jobs must catch up by themselves (the checkpoint commits every
record the source held when the fault was over; the job commits a batch once it is on the target), and the
seconds from the start of the fault until then are recorded. At the end an independent read_committed reader
(``harness.sequence_positions``, not secure_mirror's verify) reads the source and the target to their partitions'
ends: produced (what the source holds committed), on the target, lost (held by the source or acknowledged by a
producer, missing on the target), duplicated, and the records of aborted transactions on the target. Each record
is put to the fault during or after which it was produced (by its offset on the source against the ends taken
after each fault), so each fault has its own figures; so have the job's restarts (``--supervise``'s restart lines
during the fault) and the exit codes of ``secure-mirror run``.

Quick setting (CI), in this order: a preferred-leader election of the source partitions during a batch
(Admin.electLeaders), a rolling restart of the target (each broker stopped cleanly and started again, one at a time,
each waiting for every replica to be back in sync), kill -9 of the target broker leading the most mirrored
partitions, kill -9 of the broker coordinating most of the exactly_once sink's transactional ids a moment after a
batch was committed (each killed broker started again). ``SECURE_MIRROR_RELIABILITY=long`` runs them twice over and
adds, in each round, the rolling restart of the source, kill -9 of the active KRaft controller of each side, and
two target brokers stopped for 60 s (the in-sync replicas below ``min.insync.replicas``). Every broker is running
and in sync when the module ends (the session's other three-broker suites use the same sandbox).
"""

from __future__ import annotations

import random
import time
from collections import Counter
from collections.abc import Callable
from contextlib import ExitStack
from dataclasses import dataclass, field

import pytest

from secure_mirror.sandbox import procs
from tests.support import seeds
from tests.support.mirror_case import wait_for
from tests.support.sink_jar import sink_conf

from .conftest import DETAILS, FIGURES, LONG, STATS
from .harness import MirrorUnderLoad, Outcome

pytestmark = [pytest.mark.reliability, pytest.mark.sandbox, pytest.mark.spark]

GUARANTEES = ("exactly_once", "at_least_once")
NODES = (1, 2, 3)
PARTITIONS = 4
RATE = 60.0 if LONG else 30.0  # records/s of each producer (two a job)
ROUNDS = 2 if LONG else 1
OUTAGE_SECONDS = 60.0  # the in-sync replicas below min.insync.replicas on the target (long setting)
START_TIMEOUT = 300.0  # a broker's start on a loaded two-CPU machine
IN_SYNC_TIMEOUT = 300.0
CATCH_UP_TIMEOUT = 600.0


@dataclass
class FaultRecord:
    """One fault as it happened: what was done, when it started and ended, the source's ends afterwards, how long
    each job took to catch up, and each job's restarts meanwhile."""

    name: str
    done: str = ""
    seconds: float = 0.0  # the fault itself, from its start until every broker was back and in sync
    catch_up: dict[str, float] = field(default_factory=dict)  # guarantee -> seconds from the fault's start
    restarts: dict[str, int] = field(default_factory=dict)
    marks: dict[str, dict] = field(default_factory=dict)  # guarantee -> the source's ends after the fault


Fault = Callable[[object, dict[str, MirrorUnderLoad], random.Random], str]


# ---- the faults ---------------------------------------------------------------------------------------------
def _start(sb, side: str, node: int) -> None:
    """Start a stopped or killed broker once its ports are free (a killed JVM can hold them for seconds on a loaded
    machine, past what the sandbox's kill waits)."""
    broker = sb.broker(side, node)
    ports = [p for p in (broker.port, broker.controller_port, broker.plaintext_port, broker.ssl_port) if p]
    wait_for(lambda: not any(procs.port_in_use(p) for p in ports), 120, f"{side} broker {node}'s ports", step=0.5)
    sb.start_broker(side, START_TIMEOUT, node_id=node)


def _back(sb, side: str, node: int) -> None:
    _start(sb, side, node)
    sb.wait_in_sync(side, IN_SYNC_TIMEOUT)


def _rolling_restart(side: str) -> Fault:
    def apply(sb, _loads, _rng) -> str:
        for node in NODES:
            sb.stop_broker(side, node)  # a clean shutdown: the broker hands its leaderships over first
            _back(sb, side, node)
        return f"{side} brokers 1, 2, 3 stopped cleanly and started again one at a time, each back in sync"

    return apply


def _kill_busiest_target_leader(sb, loads, _rng) -> str:
    rows = sb.partitions("target", [load.target_topic for load in loads.values()])
    node, led = Counter(p["leader"] for p in rows if p["leader"] > 0).most_common(1)[0]
    sb.kill_broker("target", node)
    _back(sb, "target", node)
    return f"target broker {node} (leader of {led} of {len(rows)} mirrored partitions) killed -9 and started again"


def _kill_transaction_coordinator(sb, loads, rng) -> str:
    eos = loads["exactly_once"]
    prefix = eos.profile.transactional_prefix
    ours = [t for t in sb.transactions("target") if t["transactional_id"].startswith(prefix)]
    assert ours, f"no transactional id under {prefix} on the target"
    node, count = Counter(t["coordinator"] for t in ours).most_common(1)[0]
    eos.wait_for_batches(1)  # a batch was just committed: the next one opens its transactions within its trigger
    pause = rng.uniform(0.2, 1.2)
    time.sleep(pause)  # somewhere in the next batch, not a synchronisation
    sb.kill_broker("target", node)
    _back(sb, "target", node)
    return (
        f"target broker {node} (coordinator of {count} of the sink's {len(ours)} transactional ids) killed -9 "
        f"{pause:.1f} s after a batch was committed, and started again"
    )


def _elect_preferred(conf: dict, topics: list[str]) -> dict[str, str | None]:
    """A preferred-leader election of every partition of ``topics`` (Admin.electLeaders); partition -> the
    error's name, or None when its leader moved (run as the side's admin)."""
    from confluent_kafka import ElectionType, TopicPartition
    from confluent_kafka.admin import AdminClient

    admin = AdminClient(conf)
    metadata = admin.list_topics(timeout=30)
    partitions = [TopicPartition(t, p) for t in topics for p in metadata.topics[t].partitions]
    # confluent-kafka 2.8.0's elect_leaders refuses its own timeout keywords (SystemError): its defaults, then
    result = admin.elect_leaders(ElectionType.PREFERRED, partitions).result(timeout=90)
    return {f"{tp.topic}-{tp.partition}": None if e is None else _error_name(e) for tp, e in result.items()}


def _error_name(error) -> str:
    """A KafkaError's name, or a KafkaException's (elect_leaders answers either, whatever its documentation says)."""
    return error.name() if hasattr(error, "name") else error.args[0].name()


def _preferred_leader_election(sb, loads, rng) -> str:
    topics = [load.source_topic for load in loads.values()]
    before = {(p["topic"], p["partition"]): p["leader"] for p in sb.partitions("source", topics)}
    next(iter(loads.values())).wait_for_batches(1)
    time.sleep(rng.uniform(0.0, 0.8))  # during a batch, not a synchronisation
    answers = sb.admin("source", _elect_preferred, topics)
    after = {(p["topic"], p["partition"]): p["leader"] for p in sb.partitions("source", topics)}
    moved = sum(before[k] != after[k] for k in before)
    answered = Counter(e or "elected" for e in answers.values())
    return f"preferred-leader election of the {len(before)} source partitions: {dict(answered)}, {moved} leaders moved"


def _kill_active_controllers(sb, _loads, _rng) -> str:
    done = []
    for side in ("source", "target"):
        node = sb.active_controller(side)
        sb.kill_broker(side, node)
        _back(sb, side, node)
        done.append(f"{side} {node}")
    return f"the active KRaft controller of each side ({', '.join(done)}) killed -9 and started again"


def _isr_below_minimum(sb, _loads, _rng) -> str:
    down = (2, 3)
    for node in down:
        sb.stop_broker("target", node)
    time.sleep(OUTAGE_SECONDS)  # the outage's length is the fault
    for node in down:
        _start(sb, "target", node)
    sb.wait_in_sync("target", IN_SYNC_TIMEOUT)
    return f"target brokers 2 and 3 stopped for {OUTAGE_SECONDS:.0f} s (one replica in sync of min 2), then started"


QUICK_FAULTS: list[tuple[str, Fault]] = [
    ("preferred-leader election on the source", _preferred_leader_election),
    ("rolling restart of the target", _rolling_restart("target")),
    ("kill -9 of the busiest target leader", _kill_busiest_target_leader),
    ("kill -9 of the transaction coordinator", _kill_transaction_coordinator),
]
# A broker's clean restart took 3-4 minutes on this machine while other suites loaded it (load average near 100 on
# two CPUs): the source's rolling restart (three more) belongs to the long setting.
LONG_FAULTS: list[tuple[str, Fault]] = [
    ("rolling restart of the source", _rolling_restart("source")),
    ("kill -9 of the active controllers", _kill_active_controllers),
    ("target in-sync replicas below the minimum for 60 s", _isr_below_minimum),
]
FAULTS = [f for _ in range(ROUNDS) for f in QUICK_FAULTS + (LONG_FAULTS if LONG else [])]


# ---- the run ------------------------------------------------------------------------------------------------
def _profile_hook(guarantee: str, folder) -> Callable[[dict], None]:
    def apply(data: dict) -> None:
        data["mirror"].setdefault("delivery", {})["guarantee"] = guarantee
        data["mirror"]["spark"].setdefault("conf", {}).update(sink_conf(folder))

    return apply


def _wait_caught_up(loads: dict[str, MirrorUnderLoad], record: FaultRecord, started: float) -> None:
    """Each job's checkpoint at or past the source's ends as they were when the fault was over (polled)."""
    record.marks = {g: load.source_marks() for g, load in loads.items()}
    deadline = time.monotonic() + CATCH_UP_TIMEOUT
    while len(record.catch_up) < len(loads):
        for g, load in loads.items():
            if g in record.catch_up:
                continue
            ended = load.job is None or load.job.poll() is not None
            assert not ended, f"{g}: secure-mirror run ended after {record.name}:\n{load.log_tail()}"
            if load.caught_up_to(record.marks[g]):
                record.catch_up[g] = round(time.monotonic() - started, 1)
        if time.monotonic() > deadline:
            behind = sorted(set(loads) - set(record.catch_up))
            raise AssertionError(f"{behind} not caught up {CATCH_UP_TIMEOUT:.0f} s after {record.name}")
        time.sleep(1.0)


def _per_fault(load: MirrorUnderLoad, records: list[FaultRecord], guarantee: str) -> list[dict]:
    """Each record of the source put to the fault during or after which it was produced: the first fault whose
    ends lie past its offset (the last window: after the last fault, until the end)."""
    windows = [{"produced": 0, "on_target": 0, "lost": 0, "duplicated": 0} for _ in range(len(records) + 1)]
    cuts = [{tp[1]: high for tp, (_low, high) in r.marks[guarantee].items()} for r in records]
    for seq, at in load.source_positions.items():
        partition, offset = at[0]
        w = next((i for i, cut in enumerate(cuts) if offset < cut.get(partition, 0)), len(records))
        held = load.target_counts.get(seq, 0)
        windows[w]["produced"] += 1
        windows[w]["on_target"] += held
        windows[w]["lost"] += held == 0
        windows[w]["duplicated"] += max(0, held - len(at))
    return windows


@pytest.fixture(scope="module")
def three_broker_faults(three_brokers, tmp_path_factory):
    sb = three_brokers
    seed = seeds.draw_seed("three-broker faults")
    rng = random.Random(seed)
    records: list[FaultRecord] = []
    outcomes: dict[str, Outcome] = {}
    windows: dict[str, list[dict]] = {}
    started = time.monotonic()
    try:
        with ExitStack() as stack:
            loads = {}
            for g in GUARANTEES:
                folder = tmp_path_factory.mktemp(f"three-{g}")
                loads[g] = stack.enter_context(
                    MirrorUnderLoad(
                        sb,
                        folder,
                        partitions=PARTITIONS,
                        rate=RATE,
                        transactional_rate=RATE,
                        profile_hook=_profile_hook(g, folder),
                        name=g.replace("_", "-"),
                    )
                )
            stack.callback(_all_running_and_in_sync, sb)  # before the cases revoke their grants, delete their topics
            for load in loads.values():
                load.start_job(supervise=True, max_restarts=20)
            for load in loads.values():
                load.wait_for_batches(2, timeout=300)
            for name, fault in FAULTS:
                record = FaultRecord(name)
                before = {g: load.supervised_restarts_so_far() for g, load in loads.items()}
                fault_started = time.monotonic()
                record.done = fault(sb, loads, rng)
                record.seconds = round(time.monotonic() - fault_started, 1)
                _wait_caught_up(loads, record, fault_started)
                record.restarts = {g: load.supervised_restarts_so_far() - before[g] for g, load in loads.items()}
                records.append(record)
                print(f"\n{name}: {record.done} in {record.seconds} s; caught up after {record.catch_up} s")
            for g, load in loads.items():
                outcomes[g] = load.finish()
                windows[g] = _per_fault(load, records, g)
    finally:
        _all_running_and_in_sync(sb)
    STATS["bounces"] += len(records)
    for g in GUARANTEES:
        _report(g, seed, records, outcomes[g], windows[g])
    return {
        "seed": seed,
        "records": records,
        "outcomes": outcomes,
        "windows": windows,
        "seconds": round(time.monotonic() - started),
    }


def _report(guarantee: str, seed: int, records: list[FaultRecord], outcome: Outcome, windows: list[dict]) -> None:
    """A line per fault and one for the whole run (DETAILS), and the same as rows of numbers (FIGURES)."""
    rows = [
        {
            "guarantee": guarantee,
            "case": record.name,
            "fault_seconds": record.seconds,
            "caught_up_seconds": record.catch_up[guarantee],
            **w,
            "restarts": record.restarts[guarantee],
            "exit_codes": "",
        }
        for record, w in zip(records, windows, strict=False)
    ]
    rows.append(
        {
            "guarantee": guarantee,
            "case": f"whole run ({len(records)} faults, seed {seed})",
            "fault_seconds": round(sum(r.seconds for r in records), 1),
            "caught_up_seconds": "",
            "produced": outcome.produced,
            "on_target": outcome.on_target,
            "lost": outcome.lost,
            "duplicated": outcome.duplicated,
            "restarts": outcome.restarts,
            "exit_codes": outcome.exit_codes,
        }
    )
    FIGURES.extend(rows)
    lines = [f"three brokers, {guarantee}, {r.name}: {r.done}" for r in records]
    lines.append(f"three brokers, {guarantee}, whole run (seed {seed}): {outcome.text()}")
    DETAILS.extend(lines)
    print("\n" + "\n".join(lines + [str(row) for row in rows]))


def _all_running_and_in_sync(sb) -> None:
    """Every broker running and every replica in sync: the session's other three-broker suites come after."""
    alive = sb.alive()
    for side in ("source", "target"):
        for node in NODES:
            if not alive.get(sb.pid_key(side, node)):
                _start(sb, side, node)
    for side in ("source", "target"):
        sb.wait_in_sync(side, IN_SYNC_TIMEOUT)


# ---- the verdicts -------------------------------------------------------------------------------------------
def test_every_fault_ran_and_both_jobs_caught_up_by_themselves(three_broker_faults):
    records = three_broker_faults["records"]
    assert [r.name for r in records] == [name for name, _ in FAULTS]
    for record in records:
        assert set(record.catch_up) == set(GUARANTEES), record
    for g, outcome in three_broker_faults["outcomes"].items():
        assert outcome.exit_codes == [0], f"{g}: {outcome.exit_codes}"  # stopped by SIGTERM once caught up
        assert outcome.committed_not_on_source == 0, f"{g}: a producer's check failed: {outcome.text()}"


@pytest.mark.parametrize("guarantee", GUARANTEES)
def test_nothing_is_lost_and_no_aborted_record_is_mirrored(three_broker_faults, guarantee):
    outcome = three_broker_faults["outcomes"][guarantee]
    assert outcome.produced > 0 and outcome.on_target >= outcome.produced - outcome.lost
    assert outcome.lost == 0, f"records of the source missing on the target, e.g. {outcome.lost_examples}"
    assert outcome.aborted_on_target == 0
    assert all(w["lost"] == 0 for w in three_broker_faults["windows"][guarantee])
    assert outcome.verify_missing == 0 and outcome.verify_extra == 0


def test_exactly_once_duplicates_nothing(three_broker_faults):
    outcome = three_broker_faults["outcomes"]["exactly_once"]
    assert outcome.duplicated == 0, "records on the target more than once (read_committed count)"
    assert outcome.on_target == outcome.produced
    assert outcome.verify_ok


def test_at_least_once_counts_its_duplicates(three_broker_faults):
    outcome = three_broker_faults["outcomes"]["at_least_once"]
    windows = three_broker_faults["windows"]["at_least_once"]
    assert outcome.on_target == outcome.produced + outcome.duplicated
    assert sum(w["duplicated"] for w in windows) == outcome.duplicated
    assert outcome.verify_duplicated == outcome.duplicated
