"""The faults of tests/reliability/test_three_broker_faults.py (no tests here): each a function of the three-broker
sandbox, the mirrors under load (mirror key -> harness.MirrorUnderLoad, MirrorMaker 2's included), a seeded
``random.Random`` and the fault's :class:`FaultRecord`, returning what it did in words. A fault calls
``record.end()`` the moment its last stopped broker serves again (its end, from which "first new record" is
measured), and may leave ``record.after``, what it looks at once every mirror caught up. The lists
:data:`QUICK_FAULTS` and :data:`LONG_FAULTS` are the settings' (the test module's docstring says what each does)."""

from __future__ import annotations

import json
import random
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

from secure_mirror.sandbox import procs
from secure_mirror.sandbox.waiting import wait_for

from . import open_transaction
from .conftest import LONG
from .contenders import MirrorMakerUnderLoad
from .harness import MirrorUnderLoad

GUARANTEES = ("exactly_once", "at_least_once")  # our jobs' mirror keys
NODES = (1, 2, 3)
# The in-sync replicas below min.insync.replicas on the target: longer than the producers' request timeouts (30 s),
# so that the mirrors' writes do time out
OUTAGE_SECONDS = 60.0 if LONG else 45.0
START_TIMEOUT = 300.0  # a broker's start on a loaded two-CPU machine
IN_SYNC_TIMEOUT = 300.0
# Seconds after the catch-up within which the heartbeat must be fresh again: the profile's stale_after_seconds (60)
HEARTBEAT_AGAIN = 60.0
WATCH_SECONDS = 120.0  # the transaction watcher's time to see a transaction open
CLI = [sys.executable, "-m", "secure_mirror"]


@dataclass
class FaultRecord:
    """One fault as it happened: what was done, when it started and ended, the source's ends afterwards, how long
    each mirror took to catch up, and its figures (``figures``, filled once the run is over)."""

    name: str
    done: str = ""
    seconds: float = 0.0  # the fault itself, from its start until every broker was back and in sync
    started_ms: int = 0
    ended_ms: int = 0  # the fault's end (the test module's docstring): its last stopped broker served again
    caught_ms: dict[str, int | None] = field(default_factory=dict)  # mirror -> when the target had it all (tail)
    waited_ms: int = 0  # when the wait for the catch-up ended (every mirror caught up, or the time was over)
    catch_up: dict[str, float | None] = field(default_factory=dict)  # mirror -> seconds from the fault's start
    counted: dict[str, tuple[int, int]] = field(default_factory=dict)  # mirror -> restarts and lines at the start
    restarts: dict[str, int] = field(default_factory=dict)  # ours: --supervise's; MirrorMaker 2: failed tasks
    lines: dict[str, tuple[int, int]] = field(default_factory=dict)  # ours: its run --json lines (start, end)
    marks: dict[str, dict] = field(default_factory=dict)  # mirror -> the source's ends after the fault
    observed: dict[str, dict] = field(default_factory=dict)  # guarantee -> what lag and the heartbeat showed
    after: Callable[[], None] | None = None  # what the fault looks at once every mirror caught up
    moved: tuple[int, int] | None = None  # leaders the fault moved, of the partitions it asked about
    proof: dict = field(default_factory=dict)  # the transaction coordinator's kill: the open transaction
    sampled: dict[str, dict] = field(default_factory=dict)  # group -> the offset sampler's answered spans
    figures: dict[str, dict] = field(default_factory=dict)  # mirror -> first new record, highest lag, task retries
    down: list[dict] = field(default_factory=list)  # each broker the fault stopped: side, node, from_ms, to_ms

    def end(self) -> None:
        """The fault is over (its last stopped broker serves again); only the first call counts."""
        self.ended_ms = self.ended_ms or now_ms()

    def went_down(self, side: str, node: int, at_ms: int | None = None) -> None:
        self.down.append({"side": side, "node": node, "from_ms": at_ms or now_ms(), "to_ms": None})

    def came_back(self, side: str, node: int) -> None:
        for down in self.down:
            if (down["side"], down["node"]) == (side, node) and down["to_ms"] is None:
                down["to_ms"] = now_ms()


Fault = Callable[[object, dict[str, MirrorUnderLoad], random.Random, FaultRecord], str]


def now_ms() -> int:
    return int(time.time() * 1000)


def group_of(load: MirrorUnderLoad) -> str:
    """The consumer group on the job's source topic, synced to the target by the job (``mirror.groups``)."""
    return f"{load.case.prefix}-group"


def ours_of(loads: dict[str, MirrorUnderLoad]) -> dict[str, MirrorUnderLoad]:
    return {key: load for key, load in loads.items() if key in GUARANTEES}


# ---- the faults ---------------------------------------------------------------------------------------------
def start_again(sb, side: str, node: int, record: FaultRecord | None = None) -> None:
    """Start a stopped or killed broker once its ports are free (a killed JVM can hold them for seconds on a loaded
    machine, past what the sandbox's kill waits); with ``record``, noted as back."""
    broker = sb.broker(side, node)
    ports = [p for p in (broker.port, broker.controller_port, broker.plaintext_port, broker.ssl_port) if p]
    wait_for(lambda: not any(procs.port_in_use(p) for p in ports), 120, f"{side} broker {node}'s ports", step=0.5)
    sb.start_broker(side, START_TIMEOUT, node_id=node)
    if record is not None:
        record.came_back(side, node)


def back_in_sync(sb, record: FaultRecord, side: str, node: int, *, ends: bool = True) -> None:
    """Start ``node`` again; when it ``ends`` the fault, the fault ends as it serves; then every replica in sync."""
    start_again(sb, side, node, record)
    if ends:
        record.end()
    sb.wait_in_sync(side, IN_SYNC_TIMEOUT)


def take_down(sb, record: FaultRecord, side: str, node: int, *, hard: bool) -> None:
    """Stop a broker cleanly, or kill -9 it (``hard``), noted in ``record``."""
    sb.stop_broker(side, node, hard=hard)
    record.went_down(side, node)


def rolling_restart(side: str) -> Fault:
    def apply(sb, _loads, _rng, record) -> str:
        for node in NODES:
            take_down(
                sb, record, side, node, hard=False
            )  # a clean shutdown: the broker hands its leaderships over first
            back_in_sync(sb, record, side, node, ends=node == NODES[-1])
        return f"{side} brokers 1, 2, 3 stopped cleanly and started again one at a time, each back in sync"

    return apply


def kill_busiest_target_leader(sb, loads, _rng, record) -> str:
    rows = sb.partitions("target", [load.target_topic for load in loads.values()])
    node, led = Counter(p["leader"] for p in rows if p["leader"] > 0).most_common(1)[0]
    take_down(sb, record, "target", node, hard=True)
    back_in_sync(sb, record, "target", node)
    return f"target broker {node} (leader of {led} of {len(rows)} mirrored partitions) killed -9 and started again"


def transactional_ids(sb, loads) -> tuple[str, list[dict]] | None:
    """The first exactly-once mirror (ours, else MirrorMaker 2 with exactly-once) and its transactional ids on the
    target (``sb.transactions``: id, coordinator, producer id, state), or None when none runs."""
    for key in ("exactly_once", "mm2-eos"):
        load = loads.get(key)
        if load is None:
            continue
        ids = [t for t in sb.transactions("target") if _writes_with(load, t["transactional_id"])]
        assert ids, f"{key}: none of its transactional ids is on the target"
        return key, ids
    return None


def _writes_with(load: MirrorUnderLoad, transactional_id: str) -> bool:
    """Whether ``load``'s mirror writes with ``transactional_id``: MirrorMaker 2's tasks (``<group>-...``), our
    sink's per-task ids (``<prefix>task#<job key>#<n>``) or per-partition ones (``<prefix><topic>-<n>``)."""
    if isinstance(load, MirrorMakerUnderLoad):
        return transactional_id.startswith(load.transactional_prefix)
    profile = load.profile
    return transactional_id.startswith(profile.transactional_prefix) and (
        profile.job_key in transactional_id or load.source_topic in transactional_id
    )


def kill_transaction_coordinator(sb, loads, _rng, record) -> str:
    """kill -9 of the target broker coordinating most of the exactly-once mirror's transactional ids, by the
    watcher, the moment one of them is Ongoing there (``open_transaction.kill_while_open``); afterwards
    (``record.after``) the coordinator's log on another broker must show it open at the kill. Without an exactly-once
    mirror (MirrorMaker 2 alone), the broker coordinating MirrorMaker 2's Connect group is killed instead."""
    found = transactional_ids(sb, loads)
    if found is None:
        groups = [load.group for load in loads.values() if isinstance(load, MirrorMakerUnderLoad)]
        node, count = Counter(sb.group_coordinator("target", g) for g in groups).most_common(1)[0]
        take_down(sb, record, "target", node, hard=True)
        back_in_sync(sb, record, "target", node)
        record.proof = {"none": "no mirror writes in transactions"}
        return f"target broker {node} (coordinator of {count} Connect groups; no exactly-once mirror) killed -9"
    key, ids = found
    node, count = Counter(t["coordinator"] for t in ids).most_common(1)[0]
    watched = [t["transactional_id"] for t in ids if t["coordinator"] == node]
    loads[key].wait_for_batches(1)
    record.proof = {
        "mirror": key,
        "node": node,
        **open_transaction.kill_while_open(sb, "target", node, watched, WATCH_SECONDS),
    }
    record.went_down("target", node, record.proof.get("killed_ms"))
    back_in_sync(sb, record, "target", node)

    def after() -> None:
        other = next(n for n in NODES if n != node)
        if "killed_ms" in record.proof:
            states = open_transaction.state_records(sb, "target", other, [record.proof["id"]])
            record.proof.update(open_transaction.open_at(states, record.proof["id"], record.proof["killed_ms"]))

    record.after = after
    seen = record.proof.get("id", "none of them")
    return (
        f"target broker {node} (coordinator of {count} of {key}'s {len(ids)} transactional ids) killed -9 the moment "
        f"it described {seen} as Ongoing, and started again"
    )


def elect_preferred(conf: dict, topics: list[str]) -> dict[str, str | None]:
    """A preferred-leader election of every partition of ``topics`` (Admin.electLeaders); partition -> the
    error's name, or None when its leader moved (run as the side's admin)."""
    from confluent_kafka import ElectionType, TopicPartition
    from confluent_kafka.admin import AdminClient

    admin = AdminClient(conf)
    metadata = admin.list_topics(timeout=30)
    partitions = [TopicPartition(t, p) for t in topics for p in metadata.topics[t].partitions]
    # confluent-kafka 2.8.0's elect_leaders refuses its own timeout keywords (SystemError): its defaults, then
    result = admin.elect_leaders(ElectionType.PREFERRED, partitions).result(timeout=90)
    return {f"{tp.topic}-{tp.partition}": None if e is None else error_name(e) for tp, e in result.items()}


def error_name(error) -> str:
    """A KafkaError's name, or a KafkaException's (elect_leaders answers either, whatever its documentation says)."""
    return error.name() if hasattr(error, "name") else error.args[0].name()


def preferred_leader_election(sb, loads, rng, record) -> str:
    """Every leader is its partition's preferred replica until something moves it, so an election alone moves
    none. First each source partition gets its replicas in an order whose first is not its leader (the same brokers:
    nothing is copied), then, during a batch, the preferred-leader election moves every leader there."""
    topics = [load.source_topic for load in loads.values()]
    rows = sb.partitions("source", topics)
    before = {(p["topic"], p["partition"]): p["leader"] for p in rows}
    sb.reorder_replicas(  # a JVM tool on a machine loaded by six brokers and two jobs: as long as a broker's start
        "source",
        {(p["topic"], p["partition"]): rotated_past(p["replicas"], p["leader"]) for p in rows},
        timeout=START_TIMEOUT,
    )
    next(iter(loads.values())).wait_for_batches(1)
    time.sleep(rng.uniform(0.0, 0.8))  # during a batch, not a synchronisation
    answers = sb.admin("source", elect_preferred, topics)
    record.end()
    after = {(p["topic"], p["partition"]): p["leader"] for p in sb.partitions("source", topics)}
    record.moved = (sum(before[k] != after[k] for k in before), len(before))
    answered = Counter(e or "elected" for e in answers.values())
    return (
        f"replicas of the {len(before)} source partitions reordered (Kafka's ReassignPartitionsCommand), then a "
        f"preferred-leader election: {dict(answered)}, {record.moved[0]} leaders moved"
    )


def rotated_past(replicas: list[int], leader: int) -> list[int]:
    """``replicas`` rotated until the first is the next broker after ``leader`` (the same brokers, another order)."""
    at = replicas.index(leader) + 1 if leader in replicas else 1
    return replicas[at:] + replicas[:at]


def kill_active_controllers(sb, _loads, _rng, record) -> str:
    done = []
    for side in ("source", "target"):
        node = sb.active_controller(side)
        take_down(sb, record, side, node, hard=True)
        back_in_sync(sb, record, side, node, ends=side == "target")
        done.append(f"{side} {node}")
    return f"the active KRaft controller of each side ({', '.join(done)}) killed -9 and started again"


def lag_of(load: MirrorUnderLoad) -> dict:
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


def isr_below_minimum(sb, loads, _rng, record) -> str:
    """Two target brokers stopped for OUTAGE_SECONDS, then started again together; meanwhile ``lag --json`` of each
    of our jobs again and again, in a thread of its own (what an operator sees); once every mirror caught up, ``lag``
    and the heartbeat once more (``record.after``)."""
    down = (2, 3)
    ours = ours_of(loads)
    seen = {g: {"before": lag_of(load), "during": []} for g, load in ours.items()}
    for node in down:
        take_down(sb, record, "target", node, hard=False)
    stopped, stopped_ms, over = time.monotonic(), now_ms(), threading.Event()

    def ask() -> None:
        while not over.is_set():
            for g, load in ours.items():
                seen[g]["during"].append({"second": round(time.monotonic() - stopped, 1), **lag_of(load)})
            over.wait(1.0)

    asking = threading.Thread(target=ask, name="lag-during-the-outage", daemon=True)
    asking.start()
    over.wait(OUTAGE_SECONDS)  # the outage's length is the fault
    ended_ms, lasted = now_ms(), time.monotonic() - stopped
    start_together(sb, [("target", node) for node in down], record)
    record.end()
    serving = time.monotonic() - stopped - lasted
    over.set()
    asking.join(300)
    in_sync = sb.wait_in_sync("target", IN_SYNC_TIMEOUT)

    def after() -> None:
        for g, load in ours.items():
            answer, waited = fresh_again(load, ended_ms)
            seen[g].update(after=answer, heartbeat_waited=waited, stopped_ms=stopped_ms, restored_ms=ended_ms)
            seen[g]["outage"] = outage_text(seen[g])  # of the answers above, "after" among them
        record.observed = seen

    record.after = after
    return (
        f"target brokers 2 and 3 stopped for {lasted:.0f} s (one replica in sync of min 2), then started together "
        f"(serving {serving:.0f} s later, every replica in sync {in_sync:.0f} s after that)"
    )


def fresh_again(load: MirrorUnderLoad, restored_ms: int) -> tuple[dict, float]:
    """``lag --json`` once caught up, asked again every second until its heartbeat is fresh and written after
    ``restored_ms``, for at most HEARTBEAT_AGAIN seconds: the last answer, and the seconds waited. The job's
    heartbeat producer first hands back the sends the outage failed (its delivery timeout), so the first heartbeat
    after the catch-up lands seconds after it (seen: a check at once found the last one from during the outage)."""
    asked = time.monotonic()
    while True:
        answer = lag_of(load)
        beat = answer.get("heartbeat")
        fresh = beat is not None and not beat["stale"] and beat["newest-ms"] > restored_ms
        waited = time.monotonic() - asked
        if fresh or waited > HEARTBEAT_AGAIN:
            return answer, round(waited, 1)
        time.sleep(1.0)


def start_together(sb, brokers: list[tuple[str, int]], record: FaultRecord | None = None) -> None:
    """Start stopped brokers at once (each :func:`start_again` in a thread of its own), so that the fault lasts one
    broker's start, not one after the other's; a start's failure is raised."""
    with ThreadPoolExecutor(len(brokers)) as pool:
        for started in [pool.submit(start_again, sb, side, node, record) for side, node in brokers]:
            started.result()


def outage_text(seen: dict) -> str:
    """One line of what lag and the heartbeat showed through the outage."""
    during = [s for s in seen["during"] if s["exit"] == 0]
    peak = max((s["lag"] for s in during), default=None)
    ages = [s["heartbeat"]["age-ms"] for s in during if s["heartbeat"] and s["heartbeat"]["age-ms"] is not None]
    after = seen["after"]
    beat = after.get("heartbeat") or {}
    return (
        f"lag {seen['before'].get('lag')} before, peak {peak} in {len(during)} of {len(seen['during'])} answers "
        f"during, {after.get('lag')} after catching up (unread {len(after.get('unread', []))}); heartbeat age up to "
        f"{max(ages, default=0) / 1000:.0f} s during, {(beat.get('age-ms') or 0) / 1000:.0f} s after (fresh again "
        f"{seen.get('heartbeat_waited', 0)} s after catching up)"
    )


def kill_group_coordinators(sb, loads, rng, record) -> str:
    """kill -9, at once, of the source broker coordinating most of the synced groups and of the target broker
    coordinating most of their translations, while group sync runs (a pass every 2 s) and the groups commit. Without
    our jobs (MirrorMaker 2 alone), the target broker coordinating most of MirrorMaker 2's Connect groups."""
    synced = [group_of(load) for load in ours_of(loads).values()]
    connect = [load.group for load in loads.values() if isinstance(load, MirrorMakerUnderLoad)]
    groups = {"source": synced, "target": synced or connect}
    chosen = {
        side: Counter(sb.group_coordinator(side, g) for g in names).most_common(1)[0]
        for side, names in groups.items()
        if names
    }
    time.sleep(rng.uniform(0.0, 2.0))  # somewhere between two sync passes, not a synchronisation
    for side, (node, _count) in chosen.items():
        take_down(sb, record, side, node, hard=True)
    start_together(sb, [(side, node) for side, (node, _count) in chosen.items()], record)
    record.end()
    for side in chosen:
        sb.wait_in_sync(side, IN_SYNC_TIMEOUT)
    said = ", ".join(
        f"{side} broker {node} (coordinator of {n} of the {len(groups[side])} groups)"
        for side, (node, n) in chosen.items()
    )
    return f"{said} killed -9 at once during group sync, and started again"


QUICK_FAULTS: list[tuple[str, Fault]] = [
    ("preferred-leader election on the source", preferred_leader_election),
    ("kill -9 of the transaction coordinator", kill_transaction_coordinator),
    (f"target in-sync replicas below the minimum for {OUTAGE_SECONDS:.0f} s", isr_below_minimum),
]
SIDES = ("source", "target")
# A broker's clean restart took 3-4 minutes on this machine while other suites loaded it (load average near 100 on
# two CPUs): the rolling restarts belong to the long setting. The target's (three clean restarts, about 300 s of CI's
# 800 s for this module) left the quick setting to keep CI under its time; the quick setting still moves the target's
# leaders by kill -9, the harder form, and results/three-brokers-long.* has both rolling restarts, twice each.
LONG_FAULTS: list[tuple[str, Fault]] = [
    # The quick setting's kill -9 of the transaction coordinator is a kill -9 of a target broker too (with whatever
    # it leads); this one picks the broker leading the most mirrored partitions: 145-175 s of CI on an idle machine
    ("kill -9 of the busiest target leader", kill_busiest_target_leader),
    ("rolling restart of the target", rolling_restart("target")),
    ("rolling restart of the source", rolling_restart("source")),
    ("kill -9 of the active controllers", kill_active_controllers),
    # 320 s on this machine under a load average near 100 (two brokers' restarts at once): the quick module would
    # grow by a third, so the long setting; the groups follow the mirror through the quick faults all the same
    ("kill -9 of the group coordinators during group sync", kill_group_coordinators),
]


def all_running_and_in_sync(sb) -> None:
    """Every broker running and every replica in sync: the session's other three-broker suites come after."""
    alive = sb.alive()
    for side in ("source", "target"):
        for node in NODES:
            if not alive.get(sb.pid_key(side, node)):
                start_again(sb, side, node)
    for side in ("source", "target"):
        sb.wait_in_sync(side, IN_SYNC_TIMEOUT)
