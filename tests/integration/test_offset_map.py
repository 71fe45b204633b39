"""The sink's offset map (docs/offset-map.md) on the sandbox, in at_least_once and exactly_once: source topics with
gaps (aborted transactions and their markers between committed records, read read_committed; a compacted topic whose
cleaner removed superseded records), mirrored in several micro-batches with provenance headers. Read back
read_committed with confluent-kafka and decoded with ``offset_map.decode``, the map translates every mirrored record's
target offset to the source offset its provenance header names, every segment names real records, a segment starts
at each gap upstream (and, in exactly_once, at each commit marker downstream), and a topic whose partitions are not
kept gets no segment. The map topic, which the first driver creates: one partition, cleanup.policy=delete, the longest
source retention plus a day.

Two settings. In the default selection one exactly_once mirror of one partition of each source topic (about a
minute); under ``slow`` (about 3.5 minutes) two partitions in both guarantees, the two mirrors side by side, one
profile each, writing one map topic of their own source alias."""

from __future__ import annotations

import subprocess
import time
from collections import defaultdict
from dataclasses import asdict
from pathlib import Path

import pytest
import yaml

from benchmarks.harness.load import produce_transactions
from secure_mirror.errors import EXIT_OK
from secure_mirror.kafka import admin_ops
from secure_mirror.kafka.admin_ops import LOG
from secure_mirror.profile import load_profile
from secure_mirror.profile.topics import offset_map_topic
from secure_mirror.render import acls as acl_plans
from secure_mirror.run.groups.offset_map import Segment, decode
from secure_mirror.run.job.offset_map_topic import DAY_MS
from secure_mirror.sandbox.sink_jar import sink_conf
from secure_mirror.sandbox.waiting import wait_for
from tests.support.cluster import topic_acls
from tests.support.mirror_case import MirrorCase

pytestmark = [pytest.mark.sandbox, pytest.mark.spark]
PARTITIONS = 2  # the slow setting's
RETENTION_MS = 10 * DAY_MS  # the compacted topic's: longer than the others' (the broker's default, 7 days)
COMPACTED = {
    "cleanup.policy": "compact,delete",
    "retention.ms": str(RETENTION_MS),
    "segment.ms": "100",
    "min.cleanable.dirty.ratio": "0.001",
}
Row = tuple[int, int, bytes | None, bytes | None, dict[str, bytes]]  # partition, offset, key, value, headers


def _read(conf: dict, topic: str, timeout: float = 60.0) -> list[Row]:
    """Every record of ``topic`` up to its end, read read_committed: (partition, offset, key, value, headers). Runs
    in an identity's process (``kafka/processes.py``)."""
    from confluent_kafka import OFFSET_BEGINNING, Consumer, KafkaError, KafkaException, TopicPartition

    consumer = Consumer(
        {
            **conf,
            "group.id": "offset-map-test",
            "enable.auto.commit": False,
            "enable.partition.eof": True,
            "isolation.level": "read_committed",
            "logger": LOG,
        }
    )
    try:
        metadata = consumer.list_topics(topic, timeout=30).topics[topic]
        if metadata.error is not None:
            raise KafkaException(metadata.error)
        consumer.assign([TopicPartition(topic, p, OFFSET_BEGINNING) for p in metadata.partitions])
        pending, out = set(metadata.partitions), []
        deadline = time.monotonic() + timeout
        while pending:
            if time.monotonic() > deadline:
                raise TimeoutError(f"partitions {sorted(pending)} of {topic} not read to their end in {timeout:.0f} s")
            message = consumer.poll(1.0)
            if message is None:
                continue
            if message.error() is not None:
                if message.error().code() != KafkaError._PARTITION_EOF:
                    raise KafkaException(message.error())
                pending.discard(message.partition())
                continue
            headers = {name: value for name, value in message.headers() or []}
            out.append((message.partition(), message.offset(), message.key(), message.value(), headers))
        return out
    finally:
        consumer.close()


def _read_as_admin(sandbox, side: str, topic: str) -> list[Row]:
    return sandbox.identity(side, "admin").call(_read, topic)


def _transactions(tag: str, partitions: int) -> list[dict]:
    """Committed transactions with aborted ones and plain records between them, over ``partitions``."""
    out, n = [], 0
    for round_ in range(4):
        for end, size in (("commit", 12), ("abort", 5), ("none", 3), ("commit", 7)):
            rows = [
                {"key": f"{tag}-{round_}-{end}-{n + i}".encode(), "value": b"v", "partition": (n + i) % partitions}
                for i in range(size)
            ]
            n += size
            out.append({"records": rows, "end": end})
    return out


def _to_compact(case: MirrorCase, topic: str) -> None:
    """21 records: superseded keys between keys written once, in segments that roll every 100 ms, so the cleaner
    (every 15 s by default) removes the superseded ones and leaves gaps between the offsets it keeps."""
    for round_ in range(3):
        rows = [{"key": f"k{i}".encode(), "value": f"{round_}".encode(), "partition": 0} for i in range(4)]
        rows += [{"key": f"once-{round_}-{i}".encode(), "value": b"u", "partition": 0} for i in range(3)]
        rows = [r for pair in zip(rows[:3], rows[4:]) for r in pair] + rows[3:4]  # interleaved
        case.produce(topic, rows)
        time.sleep(0.3)


def _own_alias(case: MirrorCase, alias: str) -> None:
    """The case's profile with a source alias of its own, so its offset map topic is its own (and deleted with the
    case's topics), plus DESCRIBE_CONFIGS on its source topics so the driver reads their retention."""
    data = yaml.safe_load(case.profile_path.read_text())
    data["source"]["alias"] = alias
    case.profile_path.write_text(yaml.safe_dump(data, sort_keys=False))
    case.profile = load_profile(case.profile_path)
    case.acls = {
        "source": [asdict(b) for b in acl_plans.source_acls(case.profile).bindings],
        "target": [asdict(b) for b in acl_plans.target_acls(case.profile).bindings],
    }
    case.acls["target"].append({**case.acls["target"][0], "operation": "READ"})  # as MirrorCase: verify reads
    principal = case.acls["source"][0]["principal"]
    case.acls["source"] += topic_acls(case.prefix, "DESCRIBE_CONFIGS", principal=principal, pattern="PREFIXED")


def _topic_config(conf: dict, topic: str) -> dict:
    """A topic's partition count and the configs the map's retention is about. Runs in an
    identity's process (``kafka/processes.py``)."""
    from confluent_kafka.admin import AdminClient, ConfigResource

    admin = AdminClient({**conf, "logger": LOG})
    [future] = admin.describe_configs([ConfigResource("topic", topic)]).values()
    config = future.result(30)
    partitions = len(admin.list_topics(topic, timeout=30).topics[topic].partitions)
    return {"partitions": partitions, **{k: config[k].value for k in ("cleanup.policy", "retention.ms")}}


def _map_records(sandbox, case: MirrorCase) -> list[Segment]:
    """This case's segments in the map topic (shared by every test on the sandbox), in the map's order."""
    rows = _read_as_admin(sandbox, "target", offset_map_topic(case.profile.source.alias))
    segments = [decode(key, value) for _, _, key, value, _ in rows]
    return [segment for segment in segments if segment.topic.startswith(f"{case.prefix}.")]


def _check_topic(sandbox, case: MirrorCase, topic: str, target: str, segments: list[Segment]) -> dict[str, int]:
    """Every record of ``target`` translates by the map to its provenance offset, every segment names real records,
    and together they cover exactly the source's read_committed records of ``topic``: figures for the report."""
    source = {(p, o) for p, o, _, _, _ in _read_as_admin(sandbox, "source", topic)}
    copies = {(p, o): int(h["secure-mirror.offset"]) for p, o, _, _, h in _read_as_admin(sandbox, "target", target)}
    by_target: dict[tuple[int, int], int] = {}
    for s in segments:
        for i in range(s.count):  # each segment names real records, each its own source offset
            assert copies.get((s.partition, s.target + i)) == s.source + i, f"{s} at {i}: not on the target"
            assert (s.partition, s.target + i) not in by_target, f"{s} overlaps another segment"
            by_target[(s.partition, s.target + i)] = s.source + i
    assert by_target == copies  # every target record is in the map, translated to its provenance offset
    assert {(p, o) for (p, _), o in by_target.items()} == source  # ... and they are the source's records
    breaks = {"upstream": 0, "downstream": 0}
    for partition in {s.partition for s in segments}:
        mine = sorted((s for s in segments if s.partition == partition), key=lambda s: s.source)
        for before, after in zip(mine, mine[1:]):
            breaks["upstream"] += after.source > before.source_end
            breaks["downstream"] += after.target > before.target_end
    return {"records": len(copies), "segments": len(segments), **breaks}


def _profile(sandbox, folder: Path, guarantee: str, sink: dict[str, str], alias: str | None, **mirror) -> MirrorCase:
    spark = {"conf": sink, "max_offsets_per_trigger": 60}  # a few batches
    mirror = {
        "delivery": {"guarantee": guarantee},
        "spark": spark,
        "provenance_headers": True,
        "groups": {"include": "offset-map-test-never-a-group"},
        # "spread" keeps fewer target partitions (not kept, no map), and the targets do not take the source's
        # configs: a compacted target would remove records the map names before this test reads them
        "topic_shape": {"grow_partitions": False, "sync_configs": False},
        **mirror,
    }
    folder.mkdir()
    case = MirrorCase(sandbox, folder, mirror=mirror)
    _own_alias(case, alias or f"om-{case.prefix}")  # holds the prefix: the case's exit deletes the map topic
    return case


def _source(sandbox, case: MirrorCase, partitions: int) -> None:
    case.create({"tx": partitions, "spread": PARTITIONS})
    sandbox.admin("source", admin_ops.create_topics, {case.topic("cp"): 1}, config=COMPACTED)
    _to_compact(case, "cp")  # the cleaner works while the others are written
    sandbox.admin("source", produce_transactions, case.topic("tx"), _transactions("t", partitions), f"{case.prefix}-tx")
    case.produce("spread", [{"key": b"s", "value": b"v", "partition": i % PARTITIONS} for i in range(10)])
    name = case.topic("cp")
    wait_for(lambda: len(_read_as_admin(sandbox, "source", name)) < 21, 90, f"the log cleaner to compact {name}")


def _run_both(cases: dict[str, MirrorCase], tmp_path: Path) -> float:
    """The mirrors at once, each until caught up (two Spark jobs side by side: half the wall time)."""
    started, jobs = time.monotonic(), {}
    for guarantee, case in cases.items():
        with (tmp_path / f"{guarantee}.err").open("w") as err:
            argv = case.run_argv(tmp_path / guarantee / "run", "--until-caught-up")
            jobs[guarantee] = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=err)
    for guarantee, job in jobs.items():
        assert job.wait(timeout=300) == EXIT_OK, (tmp_path / f"{guarantee}.err").read_text()[-3000:]
    return time.monotonic() - started


def _check_mirror(sandbox, source: MirrorCase, case: MirrorCase, guarantee: str, segments: list[Segment]) -> None:
    """``case`` mirrored the topics of ``source`` (itself, or the case that made them): its segments translate each
    of its target records to its source offset, they start at every gap upstream and, in exactly_once, at each commit
    marker downstream, and the topic whose partitions are not kept has none."""
    mine = defaultdict(list)
    for s in segments:
        if s.target_topic == case.profile.target_topic(s.topic):
            mine[s.topic].append(s)
    tx, cp = source.topic("tx"), source.topic("cp")
    assert set(mine) == {tx, cp}  # none for "spread": its partitions are not kept
    figures = {
        name: _check_topic(sandbox, case, name, case.profile.target_topic(name), mine[name]) for name in (tx, cp)
    }
    # aborted transactions, their markers and compaction cut segments upstream
    assert figures[tx]["upstream"] > 0 and figures[cp]["upstream"] > 0
    if guarantee == "exactly_once":
        assert figures[tx]["downstream"] > 0  # each batch's commit marker on the target cuts a segment
    print(f"\n{guarantee}: {figures}")


def _check_map_topic(sandbox, alias: str) -> dict:
    """Created by the first driver: one partition, deleted by time, kept the longest source retention plus a day."""
    created = sandbox.identity("target", "admin").call(_topic_config, offset_map_topic(alias))
    assert created == {"partitions": 1, "cleanup.policy": "delete", "retention.ms": str(RETENTION_MS + DAY_MS)}
    return created


def test_one_exactly_once_mirror_maps_the_compacted_and_aborted_gaps_of_one_partition(sandbox, tmp_path):
    """The default selection's setting: one mirror, one partition of each kept topic."""
    case = _profile(sandbox, tmp_path / "exactly_once", "exactly_once", sink_conf(tmp_path), None)
    with case:
        _source(sandbox, case, partitions=1)
        spread = case.topic("spread")  # fewer partitions on the target: not kept, so no map
        sandbox.admin("target", admin_ops.create_topics, {case.profile.target_topic(spread): 1})
        took = _run_both({"exactly_once": case}, tmp_path)
        _check_mirror(sandbox, case, case, "exactly_once", _map_records(sandbox, case))
        created = _check_map_topic(sandbox, case.profile.source.alias)
        print(f"the mirror {took:.1f} s; the map topic: {created}")


@pytest.mark.slow  # about 3.5 min: two partitions, two mirror runs
def test_the_offset_map_translates_every_mirrored_record_in_both_guarantees(sandbox, tmp_path):
    sink = sink_conf(tmp_path)  # this checkout's sink, compiled once for both
    alo = _profile(sandbox, tmp_path / "at_least_once", "at_least_once", sink, None)
    alias = alo.profile.source.alias
    # the same source topics, mirrored in exactly_once to topics of another name
    selection = {"include": f"{alo.prefix}\\..*"}
    eos = _profile(
        sandbox,
        tmp_path / "exactly_once",
        "exactly_once",
        sink,
        alias,
        topics=selection,
        rename={"rule": "template", "template": "eos.{topic}"},
    )
    with alo, eos:
        _source(sandbox, alo, PARTITIONS)
        spread = alo.topic("spread")  # fewer partitions on the target: not kept, so no map
        sandbox.admin("target", admin_ops.create_topics, {c.profile.target_topic(spread): 1 for c in (alo, eos)})
        took = _run_both({"at_least_once": alo, "exactly_once": eos}, tmp_path)
        segments = _map_records(sandbox, alo)  # both mirrors' segments: the same source topics
        for guarantee, case in (("at_least_once", alo), ("exactly_once", eos)):
            _check_mirror(sandbox, alo, case, guarantee, segments)
        created = _check_map_topic(sandbox, alias)
        print(f"both mirrors {took:.1f} s; the map topic: {created}")
