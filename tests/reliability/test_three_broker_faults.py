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
(Admin.electLeaders), kill -9 of the target broker leading the most mirrored partitions, kill -9 of the broker
coordinating most of the exactly_once sink's transactional ids a moment after a batch was committed (each killed
broker started again). ``SECURE_MIRROR_RELIABILITY=long`` runs them twice over and adds, in each round, a rolling
restart of the target and then of the source (each broker stopped cleanly and started again, one at a time, each
waiting for every replica to be back in sync), kill -9 of the active KRaft controller of each side, two
target brokers stopped for 60 s (the in-sync replicas below ``min.insync.replicas``), meanwhile ``secure-mirror lag
--json`` again and again: its lag must rise, and once caught up no partition is unread, the checkpoint is past the
ends of the outage and the heartbeat is fresh again; and kill -9, at once, of the source broker coordinating the
consumer groups and of the target broker coordinating their translations while group sync runs.
``SECURE_MIRROR_THREE_BROKER_FAULTS="part|part"`` runs only the faults whose names hold one of the parts.
Every broker is running and in sync when the module ends (the session's other three-broker suites use the same
sandbox).

Consumer groups (``tests/reliability/group_watch.py``): each job's profile selects a group of its own
(``mirror.groups``, synced every 2 s), and a member of that group reads the source topic for the whole run,
committing every 2 s. An independent reader samples the translated offsets on the target every second (OffsetFetch,
by a consumer that never joins the group): none may ever move backwards. At the end the group stops, the jobs catch
up and stop, ``secure-mirror failover --group`` moves it, and its consumer on the target, from the committed offsets
to the ends, must read exactly what the group had not consumed on the source: 0 re-read, 0 skipped (exactly_once:
every record once).
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable
from contextlib import ExitStack
from dataclasses import dataclass, field

import pytest

from secure_mirror.sandbox import procs
from tests.support import seeds
from tests.support.mirror_case import wait_for, with_groups
from tests.support.sink_jar import sink_conf
from tests.support.spawned import Spawned

from . import group_watch
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
CLI = [sys.executable, "-m", "secure_mirror"]
COMMIT_EVERY = 2.0  # seconds between the source group's commits
SAMPLE_EVERY = 1.0  # seconds between two samples of the translated offsets on the target


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
    observed: dict[str, dict] = field(default_factory=dict)  # guarantee -> what lag and the heartbeat showed
    after: Callable[[], None] | None = None  # what the fault looks at once both jobs caught up
    moved: tuple[int, int] | None = None  # leaders the fault moved, of the partitions it asked about


Fault = Callable[[object, dict[str, MirrorUnderLoad], random.Random, FaultRecord], str]


def group_of(load: MirrorUnderLoad) -> str:
    """The consumer group on the job's source topic, synced to the target by the job (``mirror.groups``)."""
    return f"{load.case.prefix}-group"


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
    def apply(sb, _loads, _rng, _record) -> str:
        for node in NODES:
            sb.stop_broker(side, node)  # a clean shutdown: the broker hands its leaderships over first
            _back(sb, side, node)
        return f"{side} brokers 1, 2, 3 stopped cleanly and started again one at a time, each back in sync"

    return apply


def _kill_busiest_target_leader(sb, loads, _rng, _record) -> str:
    rows = sb.partitions("target", [load.target_topic for load in loads.values()])
    node, led = Counter(p["leader"] for p in rows if p["leader"] > 0).most_common(1)[0]
    sb.kill_broker("target", node)
    _back(sb, "target", node)
    return f"target broker {node} (leader of {led} of {len(rows)} mirrored partitions) killed -9 and started again"


def _kill_transaction_coordinator(sb, loads, rng, _record) -> str:
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


def _preferred_leader_election(sb, loads, rng, record) -> str:
    """Every leader is its partition's preferred replica until something moves it, so an election alone moves
    none. First each source partition gets its replicas in an order whose first is not its leader (the same brokers:
    nothing is copied), then, during a batch, the preferred-leader election moves every leader there."""
    topics = [load.source_topic for load in loads.values()]
    rows = sb.partitions("source", topics)
    before = {(p["topic"], p["partition"]): p["leader"] for p in rows}
    sb.reorder_replicas(  # a JVM tool on a machine loaded by six brokers and two jobs: as long as a broker's start
        "source",
        {(p["topic"], p["partition"]): _rotated_past(p["replicas"], p["leader"]) for p in rows},
        timeout=START_TIMEOUT,
    )
    next(iter(loads.values())).wait_for_batches(1)
    time.sleep(rng.uniform(0.0, 0.8))  # during a batch, not a synchronisation
    answers = sb.admin("source", _elect_preferred, topics)
    after = {(p["topic"], p["partition"]): p["leader"] for p in sb.partitions("source", topics)}
    record.moved = (sum(before[k] != after[k] for k in before), len(before))
    answered = Counter(e or "elected" for e in answers.values())
    return (
        f"replicas of the {len(before)} source partitions reordered (Kafka's ReassignPartitionsCommand), then a "
        f"preferred-leader election: {dict(answered)}, {record.moved[0]} leaders moved"
    )


def _rotated_past(replicas: list[int], leader: int) -> list[int]:
    """``replicas`` rotated until the first is the next broker after ``leader`` (the same brokers, another order)."""
    at = replicas.index(leader) + 1 if leader in replicas else 1
    return replicas[at:] + replicas[:at]


def _kill_active_controllers(sb, _loads, _rng, _record) -> str:
    done = []
    for side in ("source", "target"):
        node = sb.active_controller(side)
        sb.kill_broker(side, node)
        _back(sb, side, node)
        done.append(f"{side} {node}")
    return f"the active KRaft controller of each side ({', '.join(done)}) killed -9 and started again"


def _lag(load: MirrorUnderLoad) -> dict:
    """``secure-mirror lag PROFILE --json`` as an operator runs it: the sum of the partitions' lag, the partitions
    whose lag is unknown or whose end offset could not be read, the checkpoint's offsets and the heartbeat."""
    done = subprocess.run([*CLI, "lag", str(load.profile_path), "--json"], capture_output=True, text=True, timeout=300)
    if done.returncode != 0:
        return {"exit": done.returncode, "error": done.stderr.strip()[-300:]}
    answer = json.loads(done.stdout)
    rows = answer["partitions"]
    return {
        "exit": 0,
        "lag": sum(r["lag"] or 0 for r in rows),
        "unknown": sum(r["lag"] is None for r in rows),
        "unread": [f"{r['topic']}-{r['partition']}: {r['unread']}" for r in rows if r.get("unread")],
        "offsets": {r["partition"]: r["offset"] for r in rows},
        "heartbeat": answer["heartbeat"],
    }


def _isr_below_minimum(sb, loads, _rng, record) -> str:
    """Two target brokers stopped for OUTAGE_SECONDS; meanwhile ``lag --json`` of each job again and again (what an
    operator sees); once both jobs caught up, ``lag`` and the heartbeat once more (``record.after``)."""
    down = (2, 3)
    seen = {g: {"before": _lag(load), "during": []} for g, load in loads.items()}
    for node in down:
        sb.stop_broker("target", node)
    stopped, stopped_ms = time.monotonic(), int(time.time() * 1000)
    while time.monotonic() - stopped < OUTAGE_SECONDS:  # the outage's length is the fault
        for g, load in loads.items():
            seen[g]["during"].append({"second": round(time.monotonic() - stopped, 1), **_lag(load)})
    ended_ms, lasted = int(time.time() * 1000), time.monotonic() - stopped
    for node in down:
        _start(sb, "target", node)
    sb.wait_in_sync("target", IN_SYNC_TIMEOUT)

    def after() -> None:
        for g, load in loads.items():
            seen[g].update(after=_lag(load), stopped_ms=stopped_ms, restored_ms=ended_ms)
            seen[g]["outage"] = _outage_text(seen[g])  # of the answers above, "after" among them
        record.observed = seen

    record.after = after
    return f"target brokers 2 and 3 stopped for {lasted:.0f} s (one replica in sync of min 2), then started"


def _outage_text(seen: dict) -> str:
    """One line of what lag and the heartbeat showed through the outage."""
    during = [s for s in seen["during"] if s["exit"] == 0]
    peak = max((s["lag"] for s in during), default=None)
    ages = [s["heartbeat"]["age-ms"] for s in during if s["heartbeat"] and s["heartbeat"]["age-ms"] is not None]
    after = seen["after"]
    beat = after.get("heartbeat") or {}
    return (
        f"lag {seen['before'].get('lag')} before, peak {peak} in {len(during)} of {len(seen['during'])} answers "
        f"during, {after.get('lag')} after catching up (unread {len(after.get('unread', []))}); heartbeat age up to "
        f"{max(ages, default=0) / 1000:.0f} s during, {(beat.get('age-ms') or 0) / 1000:.0f} s after"
    )


def _kill_group_coordinators(sb, loads, rng, _record) -> str:
    """kill -9, at once, of the source broker coordinating most of the synced groups and of the target broker
    coordinating most of their translations, while group sync runs (a pass every 2 s) and the groups commit."""
    groups = [group_of(load) for load in loads.values()]
    chosen = {side: Counter(sb.group_coordinator(side, g) for g in groups).most_common(1)[0] for side in SIDES}
    time.sleep(rng.uniform(0.0, 2.0))  # somewhere between two sync passes, not a synchronisation
    for side, (node, _count) in chosen.items():
        sb.kill_broker(side, node)
    for side, (node, _count) in chosen.items():
        _start(sb, side, node)
    for side in SIDES:
        sb.wait_in_sync(side, IN_SYNC_TIMEOUT)
    said = ", ".join(
        f"{side} broker {node} (coordinator of {n} of the {len(groups)} groups)" for side, (node, n) in chosen.items()
    )
    return f"{said} killed -9 at once during group sync, and started again"


QUICK_FAULTS: list[tuple[str, Fault]] = [
    ("preferred-leader election on the source", _preferred_leader_election),
    ("kill -9 of the busiest target leader", _kill_busiest_target_leader),
    ("kill -9 of the transaction coordinator", _kill_transaction_coordinator),
]
SIDES = ("source", "target")
# A broker's clean restart took 3-4 minutes on this machine while other suites loaded it (load average near 100 on
# two CPUs): the rolling restarts belong to the long setting. The target's (three clean restarts, about 300 s of CI's
# 800 s for this module) left the quick setting to keep CI under its time; the quick setting still moves the target's
# leaders by kill -9, the harder form, and results/three-brokers-long.* has both rolling restarts, twice each.
LONG_FAULTS: list[tuple[str, Fault]] = [
    ("rolling restart of the target", _rolling_restart("target")),
    ("rolling restart of the source", _rolling_restart("source")),
    ("kill -9 of the active controllers", _kill_active_controllers),
    ("target in-sync replicas below the minimum for 60 s", _isr_below_minimum),
    # 320 s on this machine under a load average near 100 (two brokers' restarts at once): the quick module would
    # grow by a third, so the long setting; the groups follow the mirror through the quick faults all the same
    ("kill -9 of the group coordinators during group sync", _kill_group_coordinators),
]
FAULTS = [f for _ in range(ROUNDS) for f in QUICK_FAULTS + (LONG_FAULTS if LONG else [])]
# SECURE_MIRROR_THREE_BROKER_FAULTS="part|part": only the faults, of either setting, whose names contain one of the
# parts (to repeat one fault's failure quickly); said in the results' case lines
SELECTED = os.environ.get("SECURE_MIRROR_THREE_BROKER_FAULTS", "")
if SELECTED:
    FAULTS = [
        (n, f)
        for _ in range(ROUNDS)
        for n, f in QUICK_FAULTS + LONG_FAULTS
        if any(part and part in n for part in SELECTED.split("|"))
    ]


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
                load = MirrorUnderLoad(
                    sb,
                    folder,
                    partitions=PARTITIONS,
                    rate=RATE,
                    transactional_rate=RATE,
                    profile_hook=_profile_hook(g, folder),
                    name=g.replace("_", "-"),
                )
                with_groups(load.case, group_of(load))  # the job syncs the group; an alias of the case's own
                loads[g] = stack.enter_context(load)
            stack.callback(_all_running_and_in_sync, sb)  # before the cases revoke their grants, delete their topics
            members = {g: _member(stack, sb, load) for g, load in loads.items()}
            for load in loads.values():
                load.start_job(supervise=True, max_restarts=20)
            for load in loads.values():
                load.wait_for_batches(2, timeout=300)
            groups = {group_of(load): load.target_topic for load in loads.values()}
            sampler = Spawned(
                sb, "target", group_watch.sample_loop, groups, PARTITIONS, SAMPLE_EVERY, name="offset-sampler"
            )
            stack.callback(sampler.kill)
            for g in groups:  # group sync has translated each group once: the sampler sees them from here on
                wait_for(
                    lambda g=g: sb.admin("target", group_watch.committed_offsets, g),
                    300,
                    f"{g} on the target",
                    step=3.0,
                )
            for name, fault in FAULTS:
                record = FaultRecord(name)
                before = {g: load.supervised_restarts_so_far() for g, load in loads.items()}
                fault_started = time.monotonic()
                record.done = fault(sb, loads, rng, record)
                record.seconds = round(time.monotonic() - fault_started, 1)
                _wait_caught_up(loads, record, fault_started)
                if record.after is not None:
                    record.after()
                record.restarts = {g: load.supervised_restarts_so_far() - before[g] for g, load in loads.items()}
                records.append(record)
                print(f"\n{name}: {record.done} in {record.seconds} s; caught up after {record.catch_up} s")
            member_answers = {g: member.stop() for g, member in members.items()}  # the source groups stop reading
            for g, load in loads.items():
                outcomes[g] = load.finish()
                windows[g] = _per_fault(load, records, g)
            failovers = {g: _failover(sb, load, member_answers[g]) for g, load in loads.items()}
            sampled = sampler.stop()
    finally:
        _all_running_and_in_sync(sb)
    STATS["bounces"] += len(records)
    for g in GUARANTEES:
        _report(g, seed, records, outcomes[g], windows[g], _groups_text(failovers[g], sampled, group_of(loads[g])))
    return {
        "seed": seed,
        "records": records,
        "outcomes": outcomes,
        "windows": windows,
        "failovers": failovers,
        "sampled": sampled,
        "groups": {g: group_of(load) for g, load in loads.items()},
        "seconds": round(time.monotonic() - started),
    }


def _member(stack: ExitStack, sb, load: MirrorUnderLoad) -> Spawned:
    member = Spawned(
        sb, "source", group_watch.member_loop, group_of(load), load.source_topic, COMMIT_EVERY, name=group_of(load)
    )
    stack.callback(member.kill)
    return member


def _failover(sb, load: MirrorUnderLoad, member: dict) -> dict:
    """``secure-mirror failover --group`` once the group stopped on the source and the job caught up and stopped;
    then the group's consumer on the target, judged against where the group stood on the source."""
    group = group_of(load)
    done = subprocess.run(
        [*CLI, "failover", str(load.profile_path), "--group", group], capture_output=True, text=True, timeout=300
    )
    (load.folder / "failover.out").write_text(done.stdout + done.stderr)
    assert done.returncode == 0, (
        f"failover of {group} ended with {done.returncode}:\n{done.stdout}{done.stderr[-3000:]}"
    )
    committed = sb.admin("source", group_watch.committed_offsets, group)
    translated = sb.admin("target", group_watch.committed_offsets, group)
    read = sb.admin("target", group_watch.read_as_group, group, load.target_topic, PARTITIONS)
    figures = group_watch.failover_figures(load.source_positions, committed, read)
    return {"member": member, "source_committed": committed, "target_committed": translated, **figures}


def _groups_text(failover: dict, sampled: dict, group: str) -> str:
    member = failover["member"]
    backwards = [b for b in sampled["backwards"] if b["group"] == group]
    return (
        f"group: {member['read']} records read and {member['commits']} commits on the source (failed: "
        f"{member['failed_commits'] or 0}); translated offsets sampled {sampled['samples'].get(group, 0)} times on the "
        f"target, {sampled['forward'].get(group, 0)} moves forward, {len(backwards)} backwards; after failover: "
        f"{failover['unread']} unread on the source, {failover['read']} read on the target, {failover['re_read']} "
        f"re-read, {failover['skipped']} skipped"
    )


def _report(
    guarantee: str, seed: int, records: list[FaultRecord], outcome: Outcome, windows: list[dict], groups: str
) -> None:
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
            "observed": record.observed.get(guarantee, {}).get("outage", ""),
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
            "observed": groups,
        }
    )
    FIGURES.extend(rows)
    lines = [f"three brokers, {guarantee}, {r.name}: {r.done}" for r in records]
    lines.append(f"three brokers, {guarantee}, whole run (seed {seed}): {outcome.text()}")
    lines.append(f"three brokers, {guarantee}, {groups}")
    if SELECTED:
        lines.append(
            f"three brokers, {guarantee}: only the faults SECURE_MIRROR_THREE_BROKER_FAULTS={SELECTED!r} selects"
        )
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


def test_the_election_moved_the_leaders(three_broker_faults):
    """The election is a fault only if leaders move: each one it asked about is led by another broker afterwards."""
    elections = [r for r in three_broker_faults["records"] if "election" in r.name]
    if not elections:
        pytest.skip(f"no election among the selected faults ({SELECTED!r})")
    for record in elections:
        assert record.moved is not None and record.moved[0] == record.moved[1] > 0, record.done


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


# ---- consumer groups: group sync through the faults, then a failover -------------------------------------------
def test_translated_offsets_never_move_backwards(three_broker_faults):
    sampled = three_broker_faults["sampled"]
    assert sampled["backwards"] == [], f"translated offsets moved backwards on the target: {sampled['backwards'][:10]}"
    for g, group in three_broker_faults["groups"].items():
        assert sampled["samples"].get(group, 0) > 0 and sampled["forward"].get(group, 0) > 0, (g, sampled)


@pytest.mark.parametrize("guarantee", GUARANTEES)
def test_failover_after_the_faults_is_exact(three_broker_faults, guarantee):
    """The group's consumer on the target starts where the group stood on the source: nothing it had consumed is
    read again, nothing it had not is skipped (at_least_once: its duplicates on the target may be read twice)."""
    failover = three_broker_faults["failovers"][guarantee]
    assert failover["unread"] > 0 and failover["member"]["read"] > 0, failover
    assert failover["skipped"] == 0, failover
    assert failover["re_read"] == 0, failover
    if guarantee == "exactly_once":
        assert failover["read"] == failover["unread"] and failover["read_twice"] == 0, failover


@pytest.mark.skipif(not LONG, reason="the target below min.insync.replicas is in the long setting")
@pytest.mark.parametrize("guarantee", GUARANTEES)
def test_lag_and_the_heartbeat_show_the_outage(three_broker_faults, guarantee):
    """Through the 60 s below min.insync.replicas, ``lag --json`` answers and its lag rises above what it was
    before; once caught up, the checkpoint is past every end offset the source had when the outage was over, no
    partition is unread, and the heartbeat is fresh again, written after the brokers were back."""
    outages = [r for r in three_broker_faults["records"] if r.observed]
    assert outages, "no outage observed"
    for record in outages:
        seen = record.observed[guarantee]
        during = [s for s in seen["during"] if s["exit"] == 0]
        assert during, seen["during"]
        assert max(s["lag"] for s in during) > seen["before"]["lag"], seen
        after = seen["after"]
        assert after["exit"] == 0 and after["unread"] == [] and after["unknown"] == 0, after
        ends = {tp[1]: high for tp, (_low, high) in record.marks[guarantee].items()}
        assert all(after["offsets"][p] >= high for p, high in ends.items() if high > 0), (after, ends)
        beat = after["heartbeat"]
        assert beat is not None and not beat["stale"] and beat["newest-ms"] > seen["restored_ms"], beat
