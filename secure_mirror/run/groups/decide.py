"""What group sync and failover do with what the clusters answered (pure; the answers come from
:mod:`secure_mirror.run.groups.reading`): per group and source partition, the translation (:mod:`.translate`), the
target's committed offset, and whether to commit. A target group is never moved backwards, and never touched while it
has active members; every translated offset also becomes a MirrorMaker 2 checkpoint (:mod:`.checkpoints`)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field

from secure_mirror.run.groups.checkpoints import Checkpoint
from secure_mirror.run.groups.offset_map import Segment
from secure_mirror.run.groups.translate import TRANSLATED, Translation, not_translatable, translate

TopicPartition = tuple[str, int]
COMMIT, IN_SYNC, TARGET_AHEAD, SKIPPED_ACTIVE, NO_ACTION = "commit", "in_sync", "target_ahead", "skipped_active", "none"


@dataclass(frozen=True)
class GroupOffsets:
    """One consumer group as one cluster shows it: its state, active members and committed offsets."""

    group: str
    state: str = "Unknown"  # Kafka's group state: Stable, Empty, Dead (no such group), PreparingRebalance ...
    members: int = 0
    offsets: Mapping[TopicPartition, tuple[int, str]] = field(default_factory=dict)  # -> (offset, metadata)
    error: str | None = None  # why the cluster did not answer for this group


@dataclass(frozen=True)
class TopicFacts:
    """A mirrored source topic: its target name, and why its offsets cannot be translated (None: they can)."""

    target_topic: str
    untranslatable: str | None = None
    target_exists: bool = True


@dataclass(frozen=True)
class Row:
    group: str
    topic: str
    partition: int
    source_offset: int
    target_topic: str
    target_offset: int | None  # the translation
    target_committed: int | None  # what the target group has now
    state: str  # translate.STATES
    reason: str
    action: str  # COMMIT, IN_SYNC, TARGET_AHEAD, SKIPPED_ACTIVE or NO_ACTION

    def to_dict(self) -> dict:
        return asdict(self)


@dataclass
class Plan:
    rows: list[Row] = field(default_factory=list)
    commits: dict[str, dict[TopicPartition, tuple[int, str]]] = field(default_factory=dict)  # on target names
    checkpoints: list[Checkpoint] = field(default_factory=list)
    skipped: dict[str, str] = field(default_factory=dict)  # group -> why it was not committed


def topic_facts(
    source_topics: Mapping[str, int],
    target_topics: Mapping[str, int],
    target_name: Callable[[str], str],
    keeps_partitions: Callable[[int, int], bool],
) -> dict[str, TopicFacts]:
    """Each mirrored source topic (name -> partitions) with its target name and whether its offsets translate: only
    where records keep their partition (the map holds segments of kept partitions only)."""
    facts = {}
    for topic, partitions in source_topics.items():
        name = target_name(topic)
        if name not in target_topics:
            facts[topic] = TopicFacts(name, target_exists=False)
        elif not keeps_partitions(partitions, target_topics[name]):
            facts[topic] = TopicFacts(
                name,
                f"records of {topic} ({partitions} partitions) do not keep their partition on {name} "
                f"({target_topics[name]} partitions; mirror.keep_partition), so no offset of it can be translated",
            )
        else:
            facts[topic] = TopicFacts(name)
    return facts


def _translation(
    offset: int, tp: TopicPartition, facts: TopicFacts | None, maps: Mapping, mirrored_to: Mapping
) -> Translation:
    if facts is None:
        return not_translatable(f"the mirror does not copy {tp[0]} (mirror.topics)")
    if facts.untranslatable:
        return not_translatable(facts.untranslatable)
    return translate(offset, maps.get(tp, ()), mirrored_to.get(tp))


def _action(result: Translation, committed: int | None, target: GroupOffsets | None) -> str:
    if not result.translated:
        return NO_ACTION
    assert result.target_offset is not None
    if committed is not None and committed > result.target_offset:
        return TARGET_AHEAD  # never moved backwards
    if committed == result.target_offset:
        return IN_SYNC
    return SKIPPED_ACTIVE if target is not None and target.members else COMMIT


def group_rows(
    source: GroupOffsets,
    target: GroupOffsets | None,
    facts: Mapping[str, TopicFacts],
    maps: Mapping[TopicPartition, Sequence[Segment]],
    mirrored_to: Mapping[TopicPartition, int],
) -> list[Row]:
    """One row per source partition the group committed an offset on."""
    rows = []
    for (topic, partition), (offset, _) in sorted(source.offsets.items()):
        tp = (topic, partition)
        topic_facts_ = facts.get(topic)
        target_topic = topic_facts_.target_topic if topic_facts_ else ""
        result = _translation(offset, tp, topic_facts_, maps, mirrored_to)
        committed = target.offsets.get((target_topic, partition)) if target else None
        committed_offset = committed[0] if committed else None
        rows.append(
            Row(
                source.group,
                topic,
                partition,
                offset,
                target_topic,
                result.target_offset,
                committed_offset,
                result.state,
                result.reason,
                _action(result, committed_offset, target),
            )
        )
    return rows


def plan(
    sources: Mapping[str, GroupOffsets],
    targets: Mapping[str, GroupOffsets],
    facts: Mapping[str, TopicFacts],
    maps: Mapping[TopicPartition, Sequence[Segment]],
    mirrored_to: Mapping[TopicPartition, int],
) -> Plan:
    """Rows, commits and checkpoints for every group in ``sources`` (its offsets on the target in ``targets``)."""
    out = Plan()
    for group in sorted(sources):
        source, target = sources[group], targets.get(group)
        rows = group_rows(source, target, facts, maps, mirrored_to)
        out.rows += rows
        for row in rows:
            if row.state == TRANSLATED and row.target_offset is not None:
                metadata = source.offsets[(row.topic, row.partition)][1]
                out.checkpoints.append(
                    Checkpoint(group, row.target_topic, row.partition, row.source_offset, row.target_offset, metadata)
                )
                if row.action == COMMIT:
                    out.commits.setdefault(group, {})[(row.target_topic, row.partition)] = (row.target_offset, metadata)
        if target is not None and target.members and any(row.action == SKIPPED_ACTIVE for row in rows):
            out.skipped[group] = f"{target.members} active member(s) on the target; its offsets are left as they are"
    return out


CheckpointKey = tuple[str, str, int]


def fresh_checkpoints(
    previous: Mapping[CheckpointKey, tuple[int, int]], checkpoints: Sequence[Checkpoint]
) -> list[Checkpoint]:
    """The checkpoints that say something new: a (group, topic, partition) not written yet, or whose source or
    target offset changed since it was (the topic is compacted: the newest record counts)."""
    return [
        c
        for c in checkpoints
        if previous.get((c.group, c.topic, c.partition)) != (c.upstream_offset, c.downstream_offset)
    ]


def remember(previous: dict[CheckpointKey, tuple[int, int]], written: Sequence[Checkpoint]) -> None:
    for c in written:
        previous[(c.group, c.topic, c.partition)] = (c.upstream_offset, c.downstream_offset)


def failover_refusals(sources: Mapping[str, GroupOffsets], force: bool) -> list[str]:
    """Why ``failover`` must not move these groups: members still active on the source (unless forced), or a group
    the source did not describe."""
    out = []
    for group, source in sorted(sources.items()):
        if source.error:
            out.append(f"group {group}: the source did not answer for it ({source.error})")
        elif source.members and not force:
            out.append(
                f"group {group} still has {source.members} active member(s) on the source: stop its consumers "
                "first (their commits would be lost), or pass --force"
            )
    return out
