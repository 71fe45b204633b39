"""Issues 40 (point 3) and 58 (points 3 and 6): mirrors through the faults a three-broker cluster has every week.

The contenders (``tests/reliability/contenders.py``; ``SECURE_MIRROR_THREE_BROKER_CONTENDERS="ours|mm2|mm2-eos"``,
default ``ours``) run at once on the session's three-broker sandbox (``three_brokers``: three brokers a side, a
three-voter KRaft quorum, replication factor 3, ``min.insync.replicas`` 2), each over a topic of its own of 4
partitions: ``ours`` is two secure_mirror jobs, one exactly_once and one at_least_once, each ``secure-mirror run
--json`` WITHOUT ``--supervise``: a job rides through a fault in place or the case fails (its log tail in the
failure); ``mm2`` and ``mm2-eos`` are MirrorMaker 2 without and with exactly-once (KIP-618), from the mm2.properties
render writes. On each source topic one idempotent producer and one transactional producer (every 5th transaction
aborted) write for the whole run. The faults come one after another; after each one every contender must catch up by
itself. At the end an independent read_committed reader (``harness.sequence_positions``, not secure_mirror's verify)
reads each source and target topic to its partitions' ends: produced (what the source holds committed), on the
target, lost (held by the source or acknowledged by a producer, missing on the target), duplicated, and the records of
aborted transactions on the target. Each record is put to the fault during or after which it was produced (by its
offset on the source against the ends taken after each fault), so each fault has its own figures.

Per fault and mirror (FIGURES and the contenders' results file), beside lost and duplicated:

- **restarts**: our job's (``--supervise`` is off, so 0, or the job ended and the case failed); MirrorMaker 2's failed
  tasks (Connect's words for a task that failed, contenders.FAILED: it stays failed until restarted by hand). A
  fault's restarts and task retries are those from its start to the next fault's start (the last: to the end).
- **task retries** (ours): the Spark task attempts the job ran again, as its ``run --json`` lines said: per fault the
  ``waiting`` lines printed from its start to the next fault's start (the highest ``task_retries`` of each wait,
  summed), for the whole run the ``outcome`` line's; a line without the field is "not said" (empty), never 0, but
  for a fault without a waiting line when the outcome said 0 for the whole run.
- **caught up**: seconds from the fault's start until an independent read_committed reader of the target had
  received every record the source held when the fault was over (``tail.caught_up_at``; for ours the job's
  checkpoint must also have committed them).
- **first new record**: seconds from the fault's END until that reader of the target received the first record
  produced after the end: the first record whose timestamp as read on the target (the producers' CreateTime, which our
  sink and MirrorMaker 2 both copy) lies after the end (``tail.first_new``). A fault's end is the moment its last
  stopped broker served again (before its replicas were back in sync; for the election, when the election answered).
  0 s means the mirror was writing new records when the fault ended.
- **highest lag**: from the fault's start until its catch-up, the most records an independent reader of the source
  had received that the reader of the target had not (``tail.highest_lag``), the same judge for every contender.
  A MirrorMaker 2 that has not caught up :data:`CATCH_UP_TIMEOUT` after a fault (a failed task) is not waited for
  again; its "caught up" is empty from then on, its highest lag is taken until the wait ended.

The faults prove themselves (issue 58, point 6): kill -9 of the transaction coordinator is done by a watcher
(``open_transaction.py``, ``TransactionWatch.java``) the moment the coordinator describes one of the exactly-once
mirror's transactions as Ongoing, and afterwards the coordinator's own log (``__transaction_state`` on another broker)
must show that transaction's last state written before the kill as Ongoing; each transactional producer aborted
transactions (so "no aborted record mirrored" means something); the independent sampler of the translated offsets
answered in at least half of each fault's 5-second spans in which the target's KRaft quorum was whole
(:data:`SAMPLED_SHARE`, :data:`SAMPLED_SPAN`: why those);
the election moved every leader it asked about.

Quick setting (``-m reliability``; CI leaves the module out for its time, see ``pytestmark``), in this order: a
preferred-leader election of the source partitions during a batch (Admin.electLeaders), kill -9 of the broker
coordinating most of the exactly_once sink's transactional ids while one of them is open, and two target brokers
stopped for ``broker_faults.OUTAGE_SECONDS`` (45 s; the in-sync replicas below ``min.insync.replicas``, and the target's
KRaft quorum down to one voter of three, so no leader moves; longer than the producers' 30 s request timeouts), then
started together, meanwhile ``secure-mirror lag --json`` again and again: its lag must rise, and once
caught up no partition is unread, the checkpoint is past the ends of the outage and the heartbeat is fresh again (each
killed or stopped broker started again). ``SECURE_MIRROR_RELIABILITY=long`` runs them twice over (the outage 60 s)
and adds, in each round, kill -9 of the target broker leading the most mirrored partitions, a rolling restart of
the target and then of the source (each broker stopped cleanly and
started again, one at a time, each waiting for every replica to be back in sync), kill -9 of the active KRaft
controller of each side, and kill -9, at once, of the source broker coordinating the consumer groups and of the
target broker coordinating their translations while group sync runs.
``SECURE_MIRROR_THREE_BROKER_FAULTS="part|part"`` runs only the faults whose names hold one of the parts.
Every broker is running and in sync when the module ends (the session's other three-broker suites use the same
sandbox).

Consumer groups (ours; ``tests/reliability/group_watch.py``): each job's profile selects a group of its own
(``mirror.groups``, synced every 2 s), and a member of that group reads the source topic for the whole run,
committing every 2 s. An independent reader samples the translated offsets on the target every second (OffsetFetch,
by a consumer that never joins the group): none may ever move backwards. At the end the group stops, the jobs catch
up and stop, ``secure-mirror failover --group`` moves it, and its consumer on the target, from the committed offsets
to the ends, must read exactly what the group had not consumed on the source: 0 re-read, 0 skipped (exactly_once:
every record once).

The comparison with MirrorMaker 2 (one results file, ``tests/reliability/results/three-brokers-contenders.{json,md}``,
one table per fault and guarantee: our exactly_once beside MirrorMaker 2 with exactly-once, our at_least_once beside
MirrorMaker 2). Each invocation replaces the rows of the contenders it ran and keeps the others', each with its own
commit, date and command (``contender_results.py``). On a set-up clone, with a three-broker sandbox
(``.venv/bin/secure-mirror sandbox up --brokers 3 --dir DIR``)::

    export SECURE_MIRROR_TEST_THREE_BROKERS=DIR
    export SECURE_MIRROR_THREE_BROKER_CONTENDERS_RESULTS=tests/reliability/results/three-brokers-contenders.json
    T="tests/reliability/test_three_broker_faults.py -q -s -m reliability"
    SECURE_MIRROR_THREE_BROKER_CONTENDERS=ours .venv/bin/python -m pytest $T
    SECURE_MIRROR_THREE_BROKER_CONTENDERS="mm2|mm2-eos" .venv/bin/python -m pytest $T

(with ``SECURE_MIRROR_RELIABILITY=long`` before each for the long setting; its rows are kept apart from the quick
setting's).
"""

from __future__ import annotations

import os
import random
import subprocess
import time
from collections import Counter
from collections.abc import Callable
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path

import pytest

from benchmarks.harness import provenance
from secure_mirror.sandbox.sink_jar import sink_conf
from secure_mirror.sandbox.waiting import wait_for
from tests.support import seeds
from tests.support.mirror_case import with_groups
from tests.support.spawned import Spawned

from . import contender_results, contenders, group_watch, tail
from .broker_faults import (
    CLI,
    GUARANTEES,
    LONG_FAULTS,
    NODES,
    QUICK_FAULTS,
    Fault,
    FaultRecord,
    all_running_and_in_sync,
    group_of,
    now_ms,
)
from .conftest import DETAILS, FIGURES, LONG, STATS
from .contenders import MirrorMakerUnderLoad
from .harness import MirrorUnderLoad, Outcome, task_retries, waited_retries

# CI leaves the module out (slow): its quick setting took 19 to 22 minutes of CI's 90 on this machine (broker
# restarts of 2 to 4 minutes each under the load of six brokers and two jobs), CI as a whole an estimated 94. Run it
# with -m reliability (quick) or SECURE_MIRROR_RELIABILITY=long (long); the results files name each run's commit.
pytestmark = [pytest.mark.reliability, pytest.mark.sandbox, pytest.mark.spark, pytest.mark.slow]

CONTENDERS = contenders.selected()
MIRRORS = contenders.mirrors(CONTENDERS)  # the load keys: our guarantees, "mm2", "mm2-eos"
OURS = [key for key in MIRRORS if key in GUARANTEES]
PARTITIONS = 4
RATE = 60.0 if LONG else 30.0  # records/s of each producer (two a mirror)
ROUNDS = 2 if LONG else 1
CATCH_UP_TIMEOUT = 600.0
COMMIT_EVERY = 2.0  # seconds between the source group's commits
SAMPLE_EVERY = 1.0  # seconds between two samples of the translated offsets on the target
# The translated offsets' sampler must have answered (each group's) in SAMPLED_SHARE of each fault's spans of
# SAMPLED_SPAN seconds, from the fault's start to its end, leaving out the spans in which two or more of the target's
# three brokers were down at once. A span, not a second: a sample's round trip on this loaded two-CPU machine took
# seconds by itself, and an unanswered one waits group_watch.SAMPLE_TIMEOUT (5 s). The spans left out are what such
# an outage does not promise: the target's KRaft quorum (combined mode, 3 voters) has lost its majority and no
# coordinator moves. Seen: under a load average near 100, no OffsetFetch answered for 160 s and 180 s of it (25 and
# 20 unanswered samples, one group coordinated by the broker left running); on an idle machine every sample was
# answered through it. A kill -9 of one broker is not left out: the quorum moves its groups' coordinators once the
# controller fences it (its session timeout, 9 s); in the kill faults the sampler went at most 38 s without an
# answer, all but a few spans answered.
SAMPLED_SPAN = 5.0
SAMPLED_SHARE = 0.5
_LOADED: dict[str, MirrorUnderLoad] = {}  # the module's mirrors, for its report
_LOADS: list[float] = []  # the machine's 1-minute load average at each fault's start (other sessions load it too)


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


def _load(sb, key: str, folder) -> MirrorUnderLoad:
    """The mirror ``key`` under load (not entered yet): one of our jobs (with its synced group) or a MirrorMaker 2."""
    if key not in GUARANTEES:
        return MirrorMakerUnderLoad(sb, folder, key, partitions=PARTITIONS, rate=RATE, transactional_rate=RATE)
    load = MirrorUnderLoad(
        sb,
        folder,
        partitions=PARTITIONS,
        rate=RATE,
        transactional_rate=RATE,
        profile_hook=_profile_hook(key, folder),
        name=key.replace("_", "-"),
    )
    with_groups(load.case, group_of(load))  # the job syncs the group; an alias of its own
    return load


@dataclass
class Readers:
    """The independent readers of every mirror's source and target topics (tests/reliability/tail.py)."""

    source: tail.Tail
    target: tail.Tail
    processes: list[Spawned]

    def update(self) -> None:
        self.source.update()
        self.target.update()


def _readers(stack: ExitStack, sb, loads: dict[str, MirrorUnderLoad], folder: Path) -> Readers:
    processes = []
    for side, topics in (
        ("source", [load.source_topic for load in loads.values()]),
        ("target", [load.target_topic for load in loads.values()]),
    ):
        reader = Spawned(sb, side, tail.tail_loop, topics, str(folder / f"{side}.tail"), name=f"{side}-tail")
        stack.callback(reader.kill)
        processes.append(reader)
    return Readers(tail.Tail(folder / "source.tail"), tail.Tail(folder / "target.tail"), processes)


@pytest.fixture(scope="module")
def three_broker_faults(three_brokers, tmp_path_factory):
    sb = three_brokers
    seed = seeds.draw_seed("three-broker faults")
    print(f"\nthree-broker faults: seed {seed} (repeat with {seeds.ENV}={seed}); contenders {CONTENDERS}")
    rng = random.Random(seed)
    build = provenance.build()
    _LOADS.append(os.getloadavg()[0])
    records: list[FaultRecord] = []
    outcomes: dict[str, Outcome] = {}
    windows: dict[str, list[dict]] = {}
    failovers: dict[str, dict] = {}
    sampled: dict = {"samples": {}, "forward": {}, "backwards": [], "outcomes": {}}
    started = time.monotonic()
    try:
        with ExitStack() as stack:
            loads = {
                key: stack.enter_context(_load(sb, key, tmp_path_factory.mktemp(f"three-{key}"))) for key in MIRRORS
            }
            _LOADED.update(loads)
            stack.callback(all_running_and_in_sync, sb)  # before the cases revoke their grants, delete their topics
            readers = _readers(stack, sb, loads, tmp_path_factory.mktemp("three-readers"))
            members = {g: _member(stack, sb, loads[g]) for g in OURS}
            for load in loads.values():
                load.start_job(json_lines=True)  # run --json (MirrorMaker 2 has no lines: its own log)
            for key, load in loads.items():
                load.wait_for_batches(2 if key in GUARANTEES else 1, timeout=300)
            groups = {group_of(loads[g]): loads[g].target_topic for g in OURS}
            sampler = None
            if groups:
                sampler = Spawned(
                    sb, "target", group_watch.sample_loop, groups, PARTITIONS, SAMPLE_EVERY, name="offset-sampler"
                )
                stack.callback(sampler.kill)
            for g in groups:  # group sync has translated each group once: the sampler sees them from here on
                wait_for(  # a group waits for its job to be past its offsets: minutes when other sessions load us
                    lambda g=g: sb.admin("target", group_watch.committed_offsets, g),
                    600,
                    f"{g} on the target",
                    step=3.0,
                )
            for name, fault in FAULTS:
                records.append(_run_fault(sb, loads, readers, rng, name, fault))
            _attribute(records, loads)
            member_answers = {g: member.stop() for g, member in members.items()}  # the source groups stop reading
            for key, load in loads.items():
                outcomes[key] = load.finish()
                windows[key] = _per_fault(load, records, key)
            failovers = {g: _failover(sb, loads[g], member_answers[g]) for g in OURS}
            if sampler is not None:
                sampled = sampler.stop()
            for reader in readers.processes:
                reader.stop()
            readers.update()
            _figures(records, loads, readers, sampled)
    finally:
        all_running_and_in_sync(sb)
    STATS["bounces"] += len(records)
    for key in MIRRORS:
        failover = failovers.get(key)
        groups_line = _groups_text(failover, sampled, group_of(loads[key])) if failover else ""
        _report(key, seed, records, outcomes[key], windows[key], groups_line)
    _write_contenders(build, seed, records, outcomes, windows)
    return {
        "seed": seed,
        "records": records,
        "outcomes": outcomes,
        "windows": windows,
        "failovers": failovers,
        "sampled": sampled,
        "groups": {g: group_of(loads[g]) for g in OURS},
        "seconds": round(time.monotonic() - started),
    }


def _run_fault(sb, loads, readers: Readers, rng, name: str, fault: Fault) -> FaultRecord:
    """One fault, then every mirror's catch-up, then what the fault looks at afterwards."""
    record = FaultRecord(name)
    record.counted = {key: (load.supervised_restarts_so_far(), len(load.run_lines())) for key, load in loads.items()}
    _LOADS.append(os.getloadavg()[0])
    fault_started = time.monotonic()
    record.started_ms = now_ms()
    record.done = fault(sb, loads, rng, record)
    record.end()  # a fault that said nothing ended when it returned
    record.seconds = round(time.monotonic() - fault_started, 1)
    _wait_caught_up(loads, readers, record)
    if record.after is not None:
        record.after()
    print(f"\n{name}: {record.done} in {record.seconds} s; caught up after {record.catch_up} s")
    return record


def _attribute(records: list[FaultRecord], loads: dict[str, MirrorUnderLoad]) -> None:
    """Each fault's restarts (MirrorMaker 2's failed tasks) and its job's lines: those from its start to the next
    fault's start (the last: to now), so that none falls between two faults."""
    now = {key: (load.supervised_restarts_so_far(), len(load.run_lines())) for key, load in loads.items()}
    for record, following in zip(records, [*records[1:], None], strict=True):
        until = now if following is None else following.counted
        record.restarts = {key: until[key][0] - record.counted[key][0] for key in loads}
        record.lines = {key: (record.counted[key][1], until[key][1]) for key in OURS}


def _wait_caught_up(loads: dict[str, MirrorUnderLoad], readers: Readers, record: FaultRecord) -> None:
    """Until the independent reader of the target has every record the source held when the fault was over (and,
    for our jobs, the checkpoint committed them: the job commits a batch once it is on the target). Our job ending
    fails the case; a MirrorMaker 2 that does not catch up in time is recorded (``stalled``), not waited for again."""
    record.marks = {key: load.source_marks() for key, load in loads.items()}
    deadline = time.monotonic() + CATCH_UP_TIMEOUT
    waiting = {key for key, load in loads.items() if not getattr(load, "stalled", False)}
    while waiting:
        readers.update()
        for key in sorted(waiting):
            load = loads[key]
            ended = load.job is None or load.job.poll() is not None
            assert not ended, f"{key}: the mirror ended after {record.name}:\n{load.log_tail()}"
            ends = {tp[1]: high for tp, (_low, high) in record.marks[key].items()}
            at = tail.caught_up_at(readers.source, readers.target, load.source_topic, load.target_topic, ends)
            if at is not None and (key not in GUARANTEES or load.caught_up_to(record.marks[key])):
                record.caught_ms[key] = at
                record.catch_up[key] = round((at - record.started_ms) / 1000, 1)
                waiting.discard(key)
        if waiting and time.monotonic() > deadline:
            behind = {
                key: tail.missing_below(
                    readers.source,
                    readers.target,
                    loads[key].source_topic,
                    loads[key].target_topic,
                    {tp[1]: high for tp, (_low, high) in record.marks[key].items()},
                )
                for key in waiting
            }
            ours = sorted(set(waiting) & set(GUARANTEES))
            assert not ours, f"{ours} not caught up {CATCH_UP_TIMEOUT:.0f} s after {record.name}: missing {behind}"
            for key in waiting:
                loads[key].stalled = True
                record.caught_ms[key] = record.catch_up[key] = None
                print(f"\n{key}: not caught up {CATCH_UP_TIMEOUT:.0f} s after {record.name}, {behind[key]} missing")
            break
        time.sleep(2.0)
    record.waited_ms = now_ms()


def _figures(records: list[FaultRecord], loads, readers: Readers, sampled: dict) -> None:
    """Each fault's figures per mirror from the independent readers' complete files (first new record, highest lag),
    our jobs' task retries from their lines, and the offset sampler's answered seconds per group."""
    for key, load in loads.items():
        events = tail.lag_events(
            readers.source.first.get(load.source_topic, {}), readers.target.first.get(load.target_topic, {})
        )
        lines = load.run_lines()
        whole = task_retries(lines) if key in GUARANTEES else None
        for record in records:
            until = record.caught_ms.get(key) or record.waited_ms
            first = tail.first_new(readers.target, load.target_topic, record.ended_ms)
            start, stop = record.lines.get(key, (0, 0))
            record.figures[key] = {
                "first_new_record_seconds": None if first is None else round((first - record.ended_ms) / 1000, 1),
                "highest_lag": tail.highest_lag(events, record.started_ms, until),
                "task_retries": _fault_retries(lines[start:stop], whole) if key in GUARANTEES else None,
            }
    for record in records:
        record.sampled = {
            group: tail.sampled_spans(
                times, record.started_ms, record.ended_ms, int(SAMPLED_SPAN * 1000), _quorum_lost(record)
            )
            for group, times in sampled.get("outcomes", {}).items()
        }


def _quorum_lost(record: FaultRecord) -> list[tuple[int, int]]:
    """When the fault had two or more of the target's three brokers down at once: its KRaft quorum (combined mode)
    had lost its majority, so no leader or coordinator moved (tail.quorum_lost over ``record.down``)."""
    return tail.quorum_lost(
        [(d["from_ms"], d["to_ms"] or record.ended_ms) for d in record.down if d["side"] == "target"], len(NODES)
    )


def _fault_retries(lines: list[dict], whole: int | None) -> int | None:
    """The task retries the job's ``waiting`` lines of a fault said; without such a line, 0 when the job said 0 for
    its whole run (no fault can have had one), else not said (None)."""
    said = waited_retries(lines)
    return 0 if said is None and whole == 0 else said


def _per_fault(load: MirrorUnderLoad, records: list[FaultRecord], key: str) -> list[dict]:
    """Each record of the source put to the fault during or after which it was produced: the first fault whose
    ends lie past its offset (the last window: after the last fault, until the end)."""
    windows = [{"produced": 0, "on_target": 0, "lost": 0, "duplicated": 0} for _ in range(len(records) + 1)]
    cuts = [{tp[1]: high for tp, (_low, high) in r.marks[key].items()} for r in records]
    for seq, at in load.source_positions.items():
        partition, offset = at[0]
        w = next((i for i, cut in enumerate(cuts) if offset < cut.get(partition, 0)), len(records))
        held = load.target_counts.get(seq, 0)
        windows[w]["produced"] += 1
        windows[w]["on_target"] += held
        windows[w]["lost"] += held == 0
        windows[w]["duplicated"] += max(0, held - len(at))
    return windows


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


def _rows(key: str, records: list[FaultRecord], outcome: Outcome, windows: list[dict], seed: int) -> list[dict]:
    """A row per fault and one for the whole run, the same columns in each (FIGURES, the contenders' file)."""
    rounds: Counter = Counter()
    rows = [
        {
            "mirror": contenders.LABELS[key],
            "guarantee": contenders.GUARANTEE[key],
            "case": record.name,
            "round": rounds.update([record.name]) or rounds[record.name],
            "fault_seconds": record.seconds,
            "caught_up_seconds": record.catch_up.get(key),
            **w,
            "restarts": record.restarts[key],
            "task_retries": record.figures.get(key, {}).get("task_retries"),
            "first_new_record_seconds": record.figures.get(key, {}).get("first_new_record_seconds"),
            "highest_lag": record.figures.get(key, {}).get("highest_lag"),
            "aborted_on_target": "",
            "exit_codes": "",
            "observed": record.observed.get(key, {}).get("outage", ""),
        }
        for record, w in zip(records, windows, strict=False)
    ]
    rows.append(
        {
            "mirror": contenders.LABELS[key],
            "guarantee": contenders.GUARANTEE[key],
            "case": f"whole run ({len(records)} faults, seed {seed})",
            "round": "",
            "fault_seconds": round(sum(r.seconds for r in records), 1),
            "caught_up_seconds": "",
            "produced": outcome.produced,
            "on_target": outcome.on_target,
            "lost": outcome.lost,
            "duplicated": outcome.duplicated,
            "restarts": outcome.restarts,
            "task_retries": outcome.task_retries,
            "first_new_record_seconds": "",
            "highest_lag": "",
            "aborted_on_target": outcome.aborted_on_target,
            "exit_codes": outcome.exit_codes,
            "observed": "",
        }
    )
    return rows


def _report(key: str, seed: int, records: list[FaultRecord], outcome: Outcome, windows: list[dict], groups: str):
    """A line per fault and one for the whole run (DETAILS), and the same as rows of numbers (FIGURES)."""
    rows = _rows(key, records, outcome, windows, seed)
    if groups:
        rows[-1]["observed"] = groups
    for row in rows:  # the results' Markdown shows a cell as str(value): what was not said is said so
        row["task_retries"] = "not said" if row["task_retries"] is None and key in GUARANTEES else row["task_retries"]
        row.update({k: "" for k, v in row.items() if v is None})
    FIGURES.extend(rows)
    label = contenders.LABELS[key]
    lines = [f"three brokers, {label}, {r.name}: {r.done}" for r in records]
    lines.append(f"three brokers, {label}, whole run (seed {seed}): {outcome.text()}")
    if groups:
        lines.append(f"three brokers, {label}, {groups}")
    for record in records:
        if record.proof.get("mirror") == key:
            lines.append(f"three brokers, {label}, {record.name}: {_proof_text(record.proof)}")
        seen = record.sampled.get(group_of(loaded)) if (loaded := _LOADED.get(key)) is not None else None
        if seen:
            lines.append(
                f"three brokers, {label}, {record.name}: the translated offsets' sampler answered in {seen['covered']} "
                f"of the fault's {seen['spans']} spans of {SAMPLED_SPAN:.0f} s with the target's quorum whole "
                f"({seen['left_out']} left out while it was not; {seen['succeeded']} samples answered, "
                f"{seen['failed']} not; at most {seen['longest_gap_seconds']} s without an answer)"
            )
    if SELECTED:
        lines.append(f"three brokers, {label}: only the faults SECURE_MIRROR_THREE_BROKER_FAULTS={SELECTED!r} selects")
    DETAILS.extend(lines)
    print("\n" + "\n".join(lines + [str(row) for row in rows]))


def _proof_text(proof: dict) -> str:
    if "killed_ms" not in proof:
        return f"no transaction seen Ongoing, nothing proven ({proof.get('none', '')})"
    killed = proof["killed_ms"]
    before, after, ended = proof.get("before") or {}, proof.get("after") or {}, proof.get("ended") or {}
    return (
        f"{proof['id']} Ongoing at its coordinator when it was killed (the watcher's ask {proof['asks']}); in "
        f"__transaction_state its last state written before the kill: {before.get('state')} "
        f"({killed - before.get('written_ms', killed)} ms before), the next: {after.get('state')} "
        f"({after.get('written_ms', killed) - killed} ms after); the transaction ended: {ended.get('state')} "
        f"({ended.get('written_ms', killed) - killed} ms after the kill, epoch {ended.get('epoch')})"
    )


def _write_contenders(build: dict, seed: int, records, outcomes, windows) -> None:
    """The rows of this run into the contenders' results file, when ``SECURE_MIRROR_THREE_BROKER_CONTENDERS_RESULTS``
    names it (contender_results.py merges them with the other contenders' rows there)."""
    path = os.environ.get(contender_results.ENV)
    if not path:
        return
    run = {
        "setting": "long" if LONG else "quick",
        # the machine's 1-minute load average at the start, at each fault's start and at the end
        "load_average": [round(x, 1) for x in [*_LOADS, os.getloadavg()[0]]],
        "contenders": CONTENDERS,
        "faults_selected": SELECTED or None,
        "seed": seed,
        "build": build,
        "command": contender_results.command(),
        "rows": [
            {"key": key, **row} for key in MIRRORS for row in _rows(key, records, outcomes[key], windows[key], seed)
        ],
        "proofs": [r.proof for r in records if r.proof],
    }
    written = contender_results.write(Path(path), run)
    print(f"\ncontenders' results written to {written[0]} and {written[1]}")


def _ours_or_skip() -> None:
    if not OURS:
        pytest.skip(f"our jobs are not among the contenders ({contenders.SELECTOR}={'|'.join(CONTENDERS)})")


# ---- the verdicts -------------------------------------------------------------------------------------------
def test_every_fault_ran_and_both_jobs_rode_through_without_a_restart(three_broker_faults):
    _ours_or_skip()
    records = three_broker_faults["records"]
    assert [r.name for r in records] == [name for name, _ in FAULTS]
    for record in records:
        assert all(record.catch_up.get(g) is not None for g in OURS), record
        assert all(record.restarts[g] == 0 for g in OURS), (record.name, record.restarts)
    for g in OURS:
        outcome = three_broker_faults["outcomes"][g]
        assert outcome.exit_codes == [0], f"{g}: {outcome.exit_codes}"  # stopped by SIGTERM once caught up
        assert outcome.restarts == 0, f"{g}: {outcome.text()}"
        assert outcome.committed_not_on_source == 0, f"{g}: a producer's check failed: {outcome.text()}"


def test_the_election_moved_the_leaders(three_broker_faults):
    """The election is a fault only if leaders move: each one it asked about is led by another broker afterwards."""
    elections = [r for r in three_broker_faults["records"] if "election" in r.name]
    if not elections:
        pytest.skip(f"no election among the selected faults ({SELECTED!r})")
    for record in elections:
        assert record.moved is not None and record.moved[0] == record.moved[1] > 0, record.done


def test_the_coordinator_was_killed_with_a_transaction_open(three_broker_faults):
    """The kill of the transaction coordinator is a fault of an open transaction only if one was open: the
    coordinator's own log shows the watched transaction's last state before the kill as Ongoing."""
    kills = [r for r in three_broker_faults["records"] if "transaction coordinator" in r.name]
    if not kills or all(r.proof.get("none") == "no mirror writes in transactions" for r in kills):
        pytest.skip("no kill of an exactly-once mirror's transaction coordinator among the selected faults")
    for record in kills:
        assert "killed_ms" in record.proof, f"no transaction was seen Ongoing: {record.proof}"
        assert record.proof.get("open"), f"not open at the kill in __transaction_state: {record.proof}"


@pytest.mark.parametrize("key", MIRRORS)
def test_each_transactional_producer_aborted_transactions(three_broker_faults, key):
    """Every 5th transaction of the test's transactional producer is aborted, so that "no aborted record on the
    target" says something: it must have aborted some, and counted their records."""
    outcome = three_broker_faults["outcomes"][key]
    assert outcome.aborted_transactions and outcome.aborted_transactions > 0, outcome.text()
    assert outcome.aborted_records and outcome.aborted_records > 0, outcome.text()


def test_the_offset_sampler_answered_through_each_fault(three_broker_faults):
    """The translated offsets "never moved backwards" only where they were sampled: in every fault, each group's
    sampler had an answer in at least SAMPLED_SHARE of the fault's spans of SAMPLED_SPAN seconds."""
    _ours_or_skip()
    for record in three_broker_faults["records"]:
        assert set(record.sampled) == set(three_broker_faults["groups"].values()), record.sampled
        for group, seen in record.sampled.items():
            assert seen["covered"] >= SAMPLED_SHARE * seen["spans"], (record.name, group, seen)


@pytest.mark.parametrize("guarantee", GUARANTEES)
def test_nothing_is_lost_and_no_aborted_record_is_mirrored(three_broker_faults, guarantee):
    _ours_or_skip()
    outcome = three_broker_faults["outcomes"][guarantee]
    assert outcome.produced > 0 and outcome.on_target >= outcome.produced - outcome.lost
    assert outcome.lost == 0, f"records of the source missing on the target, e.g. {outcome.lost_examples}"
    assert outcome.aborted_on_target == 0
    assert all(w["lost"] == 0 for w in three_broker_faults["windows"][guarantee])
    assert outcome.verify_missing == 0 and outcome.verify_extra == 0


def test_exactly_once_duplicates_nothing(three_broker_faults):
    _ours_or_skip()
    outcome = three_broker_faults["outcomes"]["exactly_once"]
    assert outcome.duplicated == 0, "records on the target more than once (read_committed count)"
    assert outcome.on_target == outcome.produced
    assert outcome.verify_ok


def test_at_least_once_counts_its_duplicates(three_broker_faults):
    _ours_or_skip()
    outcome = three_broker_faults["outcomes"]["at_least_once"]
    windows = three_broker_faults["windows"]["at_least_once"]
    assert outcome.on_target == outcome.produced + outcome.duplicated
    assert sum(w["duplicated"] for w in windows) == outcome.duplicated
    assert outcome.verify_duplicated == outcome.duplicated


# ---- consumer groups: group sync through the faults, then a failover -------------------------------------------
def test_translated_offsets_never_move_backwards(three_broker_faults):
    _ours_or_skip()
    sampled = three_broker_faults["sampled"]
    assert sampled["backwards"] == [], f"translated offsets moved backwards on the target: {sampled['backwards'][:10]}"
    for g, group in three_broker_faults["groups"].items():
        assert sampled["samples"].get(group, 0) > 0 and sampled["forward"].get(group, 0) > 0, (g, sampled)


@pytest.mark.parametrize("guarantee", GUARANTEES)
def test_failover_after_the_faults_is_exact(three_broker_faults, guarantee):
    """The group's consumer on the target starts where the group stood on the source: nothing it had consumed is
    read again, nothing it had not is skipped (at_least_once: its duplicates on the target may be read twice)."""
    _ours_or_skip()
    failover = three_broker_faults["failovers"][guarantee]
    assert failover["unread"] > 0 and failover["member"]["read"] > 0, failover
    assert failover["skipped"] == 0, failover
    assert failover["re_read"] == 0, failover
    if guarantee == "exactly_once":
        assert failover["read"] == failover["unread"] and failover["read_twice"] == 0, failover


@pytest.mark.parametrize("guarantee", GUARANTEES)
def test_lag_and_the_heartbeat_show_the_outage(three_broker_faults, guarantee):
    """Through the outage below min.insync.replicas, ``lag --json`` answers and its lag rises above what it was
    before; once caught up, the checkpoint is past every end offset the source had when the outage was over, no
    partition is unread, and the heartbeat is fresh again, written after the brokers were back, within
    ``broker_faults.HEARTBEAT_AGAIN`` (the profile's stale-after, 60 s) of the catch-up."""
    _ours_or_skip()
    outages = [r for r in three_broker_faults["records"] if r.observed]
    if not outages:
        pytest.skip(f"no outage among the selected faults ({SELECTED!r})")
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
