"""Which groups a sync pass plans and what it remembers (secure_mirror/run/groups/changes.py): a settled group whose
source offsets did not move is not asked about on the target again until a full pass; a moved, new, unsettled group
or one whose target state changed is; and the sync thread's pass over such a memory, from answers built in memory."""

from __future__ import annotations

from secure_mirror.run.groups import changes
from secure_mirror.run.groups.decide import GroupOffsets, TopicFacts
from secure_mirror.run.groups.offset_map import Segment
from secure_mirror.run.groups.session import Observation
from secure_mirror.run.groups.sync import GroupSync

FACTS = {"orders": TopicFacts("src.orders")}
MAPS = {("orders", 0): [Segment("orders", 0, 0, 0, 10, "src.orders")]}


def _sources(**offsets: int) -> dict[str, GroupOffsets]:
    return {g: GroupOffsets(g, "Empty", 0, {("orders", 0): (o, "")}) for g, o in offsets.items()}


def _pass(memory: changes.Memory, sources: dict, targets: dict, states: dict | None = None):
    """What ``GroupSync.once`` does with the memory, without clusters: plan, plan the planned, remember."""
    states = states or {}
    planned = changes.to_plan(memory, sources, states, memory.full_pass_due)
    observation = Observation(
        sources,
        {g: targets.get(g, GroupOffsets(g, "Dead")) for g in planned},
        FACTS,
        MAPS,
        {("orders", 0): 10},
        planned,
    )
    plan = observation.plan()
    changes.remember(memory, sources, observation.targets, states, plan, {})
    return planned, plan


def test_a_settled_group_whose_offsets_did_not_move_is_planned_again_only_on_a_full_pass():
    memory = changes.Memory()
    sources = _sources(a=3, b=5, c=12)  # c is ahead of the mirror (the map ends at 10)
    planned, plan = _pass(memory, sources, {})
    assert planned == ["a", "b", "c"] and sorted(plan.commits) == ["a", "b"]
    assert memory.unsettled == {"c"}
    done = {g: GroupOffsets(g, "Empty", 0, {("src.orders", 0): (o, "")}) for g, o in (("a", 3), ("b", 5))}
    planned, plan = _pass(memory, _sources(a=3, b=6, c=12), done)
    assert planned == ["b", "c"]  # b moved, c is not settled; a is not asked about
    assert plan.commits == {"b": {("src.orders", 0): (6, "")}}
    for _ in range(changes.FULL_EVERY - 2):
        planned, _ = _pass(memory, _sources(a=3, b=6, c=12), done)
        assert planned == ["c"]
    planned, _ = _pass(memory, _sources(a=3, b=6, c=12), done)
    assert memory.passes == changes.FULL_EVERY + 1 and planned == ["a", "b", "c"]  # the full pass


def test_a_group_is_planned_when_its_target_state_changes_and_forgotten_when_gone():
    memory = changes.Memory(passes=1)
    _pass(memory, _sources(a=3), {})
    assert changes.to_plan(memory, _sources(a=3), {}, full=False) == []
    assert changes.to_plan(memory, _sources(a=3), {"a": "Stable"}, full=False) == ["a"]
    assert changes.to_plan(memory, {**_sources(a=3), **_sources(n=1)}, {}, full=False) == ["n"]
    failing = {"a": GroupOffsets("a", error="Broker: Group authorization failed")}
    assert changes.to_plan(memory, failing, {}, full=True) == []  # said, not planned
    _pass(memory, {}, {})
    assert memory.offsets == {} and memory.rows == {}


def test_what_leaves_a_group_unsettled():
    memory = changes.Memory()
    active = {"a": GroupOffsets("a", "Stable", 2, {("src.orders", 0): (1, "")})}
    _pass(memory, _sources(a=3), active, {"a": "Stable"})
    assert memory.unsettled == {"a"} and "a" in memory.skipped
    assert changes.whole(memory).skipped == memory.skipped
    refused = {"a": GroupOffsets("a", error="Broker: Group authorization failed")}
    _pass(memory, _sources(a=3), refused)
    assert memory.unsettled == {"a"} and memory.skipped == {}
    _pass(memory, _sources(a=3), {})
    assert memory.unsettled == set()


def test_a_group_translated_at_the_end_of_the_map_is_planned_again_once_the_map_grew():
    """Found by the 1,000-group failover case: a group committed where the map ended (the record there not copied
    yet, the offset translated to the last segment's target end) settled, and kept that offset when the mirror copied
    the record past the sink's transaction marker, until a full pass."""
    memory = changes.Memory(passes=1)
    sources = _sources(end=10, inside=4)
    short = {("orders", 0): [Segment("orders", 0, 0, 0, 10, "src.orders")]}  # source 0-9 at target 0-9
    grown = {("orders", 0): [*short[("orders", 0)], Segment("orders", 0, 10, 11, 5, "src.orders")]}  # 10 at 11

    def one_pass(maps, targets):
        ends = changes.map_ends(maps)
        planned = changes.to_plan(memory, sources, {}, memory.full_pass_due, ends)
        observation = Observation(sources, {g: targets[g] for g in planned}, FACTS, maps, {("orders", 0): 10}, planned)
        plan = observation.plan()
        changes.remember(memory, sources, observation.targets, {}, plan, {}, ends)
        return planned, plan.commits

    nothing = {g: GroupOffsets(g, "Dead") for g in sources}
    assert one_pass(short, nothing) == (
        ["end", "inside"],
        {"end": {("src.orders", 0): (10, "")}, "inside": {("src.orders", 0): (4, "")}},
    )
    assert memory.at_end == {"end": {("orders", 0): 10}} and memory.unsettled == set()
    synced = {g: GroupOffsets(g, "Empty", 0, {("src.orders", 0): (o, "")}) for g, o in (("end", 10), ("inside", 4))}
    assert one_pass(short, synced) == ([], {})  # the map did not grow: nothing to ask
    assert one_pass(grown, synced) == (["end"], {"end": {("src.orders", 0): (11, "")}})  # the record's copy now
    assert memory.at_end == {}  # inside the map: it stays
    assert one_pass(grown, synced) == ([], {})


def test_the_sync_asks_the_target_only_for_what_changed():
    asked: list[list[str]] = []

    class Session:
        checkpoints_topic = "src.checkpoints.internal"
        profile = None
        offsets = {"a": 3, "b": 5}
        java_failure = None
        read_by = {"source": "librdkafka"}
        phases: dict = {}
        steps: dict = {}

        def observe_pass(self, memory):
            sources = _sources(**self.offsets)
            planned = changes.to_plan(memory, sources, {}, memory.full_pass_due)
            asked.append(planned)
            targets = {
                g: GroupOffsets(g, "Empty", 0, {("src.orders", 0): (sources[g].offsets[("orders", 0)][0], "")})
                for g in planned
                if memory.passes
            }
            targets |= {g: GroupOffsets(g, "Dead") for g in planned if g not in targets}
            return Observation(sources, targets, FACTS, MAPS, {}, planned), {}

        def write(self, written, plan):
            return {}

    session = Session()
    said: list[str] = []
    sync = GroupSync(session, said.append)  # type: ignore[arg-type]
    whole = sync.once()
    assert len(whole.rows) == 2 and sorted(whole.commits) == []  # the whole view has rows, not this pass's commits
    session.offsets = {"a": 3, "b": 7}
    sync.once()
    assert asked == [["a", "b"], ["b"]]
    assert said[-1] == "secure-mirror run: group sync: groups: 2 selected, 2 following the mirror on the target"


def test_passes_start_every_interval_whatever_a_pass_costs():
    from secure_mirror.run.groups.sync import next_wait

    assert next_wait(100.0, 101.5, 5) == 3.5  # a pass of 1.5 s: the next starts 5 s after this one did
    assert next_wait(100.0, 107.0, 5) == 0.0  # a pass longer than the interval: the next at once
