"""Both clusters as group sync, ``groups`` and ``failover`` see them: a worker per side (the mirror's identities), the
offset map read so far (incrementally), and one :class:`Observation` per pass, which the pure
:func:`secure_mirror.run.groups.decide.plan` turns into rows, commits and checkpoints."""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from secure_mirror.identities import Caller, Identities
from secure_mirror.identities.kept import MIRROR
from secure_mirror.profile.cluster import Side
from secure_mirror.profile.models import Profile
from secure_mirror.profile.topics import checkpoints_topic, offset_map_topic
from secure_mirror.run.checkpoint import mirrored_to
from secure_mirror.run.clients import inspection
from secure_mirror.run.groups import changes, decide, java_offsets, reading
from secure_mirror.run.groups import checkpoints as checkpoint_format
from secure_mirror.run.groups.offset_map import Segment
from secure_mirror.run.groups.translate import compact

TopicPartition = tuple[str, int]


class Steps:
    """Seconds between marks: ``mark(step)`` ends ``step`` (begun at the last mark); ``seconds`` says each."""

    def __init__(self) -> None:
        self.began = self.last = time.monotonic()
        self.seconds: dict[str, float] = {}

    def mark(self, step: str) -> None:
        now = time.monotonic()
        self.seconds[step] = now - self.last
        self.last = now


@dataclass
class Observation:
    sources: dict[str, decide.GroupOffsets]
    targets: dict[str, decide.GroupOffsets]
    facts: dict[str, decide.TopicFacts]
    maps: dict[TopicPartition, list[Segment]]
    mirrored_to: dict[TopicPartition, int] = field(default_factory=dict)
    planned: list[str] | None = None  # the groups of ``sources`` to plan (None: all); ``targets`` holds these

    def plan(self) -> decide.Plan:
        sources = self.sources if self.planned is None else {g: self.sources[g] for g in self.planned}
        return decide.plan(sources, self.targets, self.facts, self.maps, self.mirrored_to)


def _groups(answer: dict[str, dict]) -> dict[str, decide.GroupOffsets]:
    return {
        group: decide.GroupOffsets(group, entry["state"], entry["members"], entry["offsets"], entry["error"])
        for group, entry in answer.items()
    }


class Session:
    """``with Session(profile) as session: session.observe()``; the map is read once and then from where it ended."""

    def __init__(
        self,
        profile: Profile,
        known: Mapping[TopicPartition, Sequence[Segment]] | None = None,
        *,
        identities: Caller | None = None,
    ):
        """``known``: segments that hold besides the map topic's (the forward's map read the other way, for the
        way back: ``translate.inverted``). ``identities``: the mirror's, used and left open; without them the
        session opens its own (``clients.inspection``) and closes them when it ends."""
        self.profile = profile
        self.map_topic = offset_map_topic(profile.source.alias)
        self.checkpoints_topic = checkpoints_topic(profile.source.alias)
        self.positions: dict[int, int] = {}
        self.maps: dict[TopicPartition, list[Segment]] = {tp: compact(segs) for tp, segs in (known or {}).items()}
        self.unreadable = 0  # records of the map topic that are not segments
        self._own: Identities | None = None
        if identities is None:
            identities = self._own = inspection(profile)
        self._clients: Caller = identities
        self._java: dict[Side, java_offsets.JavaOffsets] = {}  # a side's many groups (started at the first pass)
        self.read_by: dict[Side, str] = {}  # what read a side's offsets last (java_offsets.JAVA_ADMIN, LIBRDKAFKA)
        self.phases: dict[str, float] = {}  # the last pass's seconds reading each side (observe_pass)
        self.steps: dict[str, float] = {}  # and of each of its steps (the requests, the map, the changes)

    def __enter__(self) -> Session:
        return self

    def __exit__(self, *exc) -> None:
        for java in self._java.values():
            java.close()
        if self._own is not None:
            self._own.close()

    def read_map(self) -> None:
        segments, self.positions, bad = self._clients.call("target", reading.read_map, self.map_topic, self.positions)
        self.unreadable += bad
        touched: dict[TopicPartition, list[Segment]] = {}
        for seg in segments:  # another mirror from this source alias may share the map, to other target names
            if seg.target_topic == self.profile.target_topic(seg.topic):
                touched.setdefault((seg.topic, seg.partition), []).append(seg)
        for tp, new in touched.items():
            self.maps[tp] = compact([*self.maps.get(tp, []), *new])

    def selected_groups(self) -> list[str]:
        """The source's groups the profile selects (one listing, nothing described)."""
        return self._clients.call("source", reading.group_ids, self.profile.mirror.groups.selection())

    def observe(self, groups: Sequence[str] | None = None) -> Observation:
        """The groups ``groups`` (None: the source's groups the profile selects) on both clusters, with the map."""
        ask, profile = self._clients.call, self.profile
        positions = mirrored_to(profile)  # before the map: everything below it is in the map read after
        topics = ask("source", reading.topic_partitions, profile.selection())
        names = (
            list(groups) if groups is not None else ask("source", reading.group_ids, profile.mirror.groups.selection())
        )
        sources = _groups(self._described("source", names, topics))
        target_topics = ask("target", reading.topic_partitions, None, [profile.target_topic(t) for t in topics])
        self.read_map()
        targets = _groups(self._described("target", names, target_topics))
        facts = decide.topic_facts(topics, target_topics, profile.target_topic, profile.mirror.keeps_partitions)
        return Observation(sources, targets, facts, self.maps, positions)

    def observe_pass(self, memory: changes.Memory) -> tuple[Observation, dict[str, str]]:
        """A sync pass's view (:mod:`.changes`): every selected source group's committed offsets and state (a listing
        and one offset request per group, no description), and on the target only the groups this pass plans; with
        the target's state of every selected group (one listing), which it returns beside."""
        ask, profile = self._clients.call, self.profile
        steps = Steps()
        positions = mirrored_to(profile)  # before the map: everything below it is in the map read after
        steps.mark("checkpoint")
        selection = profile.mirror.groups.selection()
        topics = ask("source", reading.topic_partitions, profile.selection())
        steps.mark("source_topics")
        states = ask("source", reading.group_states, selection)
        steps.mark("source_groups")
        offsets = self._offsets("source", sorted(states), topics)
        sources = {
            g: decide.GroupOffsets(g, states[g], 0, offsets[g]["offsets"], offsets[g]["error"]) for g in sorted(states)
        }
        steps.mark("source_offsets")
        source_read = steps.last
        target_states = ask("target", reading.group_states, selection)
        steps.mark("target_groups")
        self.read_map()  # before planning: a group translated at the end of a partition's map is planned once it grew
        steps.mark("map")
        planned = changes.to_plan(memory, sources, target_states, memory.full_pass_due, changes.map_ends(self.maps))
        steps.mark("changes")
        target_topics = ask("target", reading.topic_partitions, None, [profile.target_topic(t) for t in topics])
        steps.mark("target_topics")
        targets = self._targets(planned, target_topics, target_states)
        steps.mark("target_offsets")
        facts = decide.topic_facts(topics, target_topics, profile.target_topic, profile.mirror.keeps_partitions)
        self.phases = {"source": source_read - steps.began, "target": time.monotonic() - source_read}
        self.steps = steps.seconds
        return Observation(sources, targets, facts, self.maps, positions, planned), target_states

    def _offsets(
        self, side: Side, groups: list[str], topics: dict[str, int], from_groups: int = java_offsets.FROM_GROUPS
    ) -> dict[str, dict]:
        """``reading.committed`` of ``groups`` on ``side``: from ``from_groups`` groups on through Kafka's Java Admin
        (few requests: :mod:`.java_offsets`), else, or when that JVM could not answer, through librdkafka (a request
        per group)."""
        if len(groups) >= from_groups and isinstance(self._clients, Identities):
            if side not in self._java:
                env = self._clients.folder.env(side, MIRROR)
                self._java[side] = java_offsets.JavaOffsets(self.profile, side, self._clients.krb5_config, env)
            if (answer := self._java[side].committed(groups, topics)) is not None:
                self.read_by[side] = java_offsets.JAVA_ADMIN
                return answer
        self.read_by[side] = java_offsets.LIBRDKAFKA
        return self._clients.call(side, reading.committed, groups, topics)

    def _described(self, side: Side, groups: list[str], topics: dict[str, int]) -> dict[str, dict]:
        """Each group's state, members (DescribeGroups) and committed offsets on ``side`` (:meth:`_offsets`; a
        command's one look starts a JVM only for :data:`java_offsets.ONCE_FROM` groups or more)."""
        states = self._clients.call(side, reading.described, groups)
        return reading.composed(groups, states, self._offsets(side, groups, topics, java_offsets.ONCE_FROM))

    @property
    def java_failure(self) -> str | None:
        """Why many groups are read through librdkafka although there are many (None: they are not)."""
        failed = {side: java.failed for side, java in self._java.items() if java.failed}
        return "; ".join(f"{side}: {why}" for side, why in sorted(failed.items())) or None

    def _targets(
        self, planned: list[str], topics: dict[str, int], states: Mapping[str, str]
    ) -> dict[str, decide.GroupOffsets]:
        """The planned groups on the target: committed offsets, and members counted (described) only for those
        whose listed state has members."""
        ask = self._clients.call
        offsets = self._offsets("target", planned, topics) if planned else {}
        active = [g for g in planned if states.get(g) in changes.ACTIVE_STATES]
        members = ask("target", reading.described, active) if active else {}
        out = {}
        for g in planned:
            described = members.get(g, {})
            error = offsets[g]["error"] or described.get("error")
            state = described.get("state") or states.get(g, "Dead")
            out[g] = decide.GroupOffsets(g, state, described.get("members", 0), offsets[g]["offsets"], error)
        return out

    def write(self, written: Sequence[checkpoint_format.Checkpoint], plan: decide.Plan) -> dict[str, str]:
        """Write ``written`` to the checkpoints topic and the plan's commits; what failed (group or topic -> why)."""
        records = [checkpoint_format.encode(c) for c in written]
        commits = {
            group: [(t, p, offset, metadata) for (t, p), (offset, metadata) in sorted(offsets.items())]
            for group, offsets in plan.commits.items()
        }
        if not records and not commits:
            return {}
        return self._clients.call("target", reading.write, self.checkpoints_topic, records, commits)
