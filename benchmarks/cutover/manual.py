"""MirrorMaker 2's manual cut-over, as Kafka's documentation and KIP-382 have an operator do it, each step timed in
monotonic seconds from the first (:func:`procedure`): the producers' WRITE grants removed on the source, the target
holding every record, one checkpoint and one sync interval waited (and when the synced offsets last changed, what an
oracle would know), MirrorMaker 2 stopped, the producers and the readers granted on the target."""

from __future__ import annotations

import json
import subprocess
import time
from typing import TYPE_CHECKING

from benchmarks.cutover.scenario import last_change, manual_steps
from benchmarks.failover.scenario import MM2_INTERVALS
from benchmarks.harness import admin, cli, reading
from benchmarks.harness.launch import stop
from secure_mirror.kafka import admin_ops
from secure_mirror.kafka.acl import Acl
from secure_mirror.sandbox.waiting import wait_for

if TYPE_CHECKING:
    from benchmarks.cutover.contender import Contender

log = cli.prefixed("cutover")


def procedure(c: Contender, proc: subprocess.Popen) -> dict:
    """MirrorMaker 2's procedure on contender ``c``'s scenario, MirrorMaker 2 running as ``proc``."""
    groups = sorted(c.committed_source)
    targets = {c.model.target_topic(t): n for t, n in c.topics.items()}
    marks: dict[str, float] = {}
    t0 = time.monotonic()
    fence(c)
    marks["fence"] = time.monotonic() - t0
    drain(c, targets)
    marks["drain"] = drained = time.monotonic() - t0
    settled = synced(c, groups, t0, drained)
    marks["sync_operator"] = time.monotonic() - t0
    stop(proc)
    marks["stop"] = time.monotonic() - t0
    c.grant("target", producer_grants(c))
    marks["grant_producers"] = time.monotonic() - t0
    c.grant("target", reader_grants(c))
    marks["grant_consumers"] = end = time.monotonic() - t0
    stop_and_grant = end - marks["sync_operator"]
    log(f"mirrormaker2: {json.dumps(marks)}; offsets settled at {settled:.1f} s")
    return {
        "marks_seconds": marks,
        "offsets_settled_seconds": settled,
        "after_drain": {
            "operator": end - drained,
            "oracle": settled - drained + stop_and_grant,
        },
        "intervals": MM2_INTERVALS,
        "steps_by_hand": manual_steps(len(c.producer_topics), len(c.reader_grants)),
    }


def fence(c: Contender) -> None:
    """The producers' WRITE grants removed on the source."""
    c.sb.admin(
        "source",
        admin_ops.delete_acls,
        [a for a in c.granted["source"] if a.operation == "WRITE" and a.principal != "User:mirror"],
    )


def drain(c: Contender, targets: dict[str, int]) -> None:
    """Until the producers are refused and the target topics' end offsets are the source's."""
    for thread in c.threads:  # the producers are refused
        thread.join(120)
    source_ends = reading.ends_of(c.conf["source"], c.topics)
    wait_for(
        lambda: all(
            reading.ends_of(c.conf["target"], targets)[c.model.target_topic(t)] == source_ends[t] for t in c.topics
        ),
        600,
        "MirrorMaker 2 to copy every record",
        step=1.0,
    )


def synced(c: Contender, groups: list[str], t0: float, drained: float) -> float:
    """Checkpoints and sync: the target's offsets read every 2 s for one checkpoint and one sync interval after the
    drain; when they last changed (seconds from ``t0``)."""
    wait = MM2_INTERVALS["emit.checkpoints.interval.seconds"]
    wait += MM2_INTERVALS["sync.group.offsets.interval.seconds"]
    history: list[tuple[float, dict]] = []
    while time.monotonic() - t0 < drained + wait:
        history.append((time.monotonic() - t0, admin.group_offsets(c.conf["target"], groups)))
        time.sleep(2.0)
    return last_change(history, drained)


def producer_grants(c: Contender) -> list[Acl]:
    """WRITE and DESCRIBE on the target topics of each producer's topics."""
    return [
        Acl(
            principal=f"User:{c.who(p)}",
            operation=op,
            resource_type="TOPIC",
            resource_name=c.model.target_topic(t),
        )
        for p, topics in c.producer_topics.items()
        for t in topics
        for op in ("WRITE", "DESCRIBE")
    ]


def reader_grants(c: Contender) -> list[Acl]:
    """The readers' grants on the source, on the target's names: READ on their groups, READ and DESCRIBE on the
    target topics."""
    return [
        Acl(
            principal=a.principal,
            operation=op,
            resource_type=a.resource_type,
            resource_name=c.model.target_topic(a.resource_name) if a.resource_type == "TOPIC" else a.resource_name,
        )
        for grants in c.reader_grants.values()
        for a in grants
        for op in (("READ", "DESCRIBE") if a.resource_type == "TOPIC" else ("READ",))
    ]
