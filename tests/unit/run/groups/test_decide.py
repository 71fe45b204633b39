"""What group sync and failover decide from the clusters' answers (secure_mirror/run/groups/decide.py), the messages
a sync pass says, the groups table and JSON, and failover's refusals and cut-over; all from answers built in memory."""

from __future__ import annotations

from secure_mirror.commands.failover import cut_over, failover_problems
from secure_mirror.run.groups import decide, report
from secure_mirror.run.groups.checkpoints import Checkpoint
from secure_mirror.run.groups.decide import GroupOffsets, TopicFacts
from secure_mirror.run.groups.offset_map import Segment
from secure_mirror.run.groups.session import Observation
from secure_mirror.run.groups.sync import GroupSync, pass_messages
from tests.support import profiles as pf

FACTS = {"orders": TopicFacts("src.orders"), "spread": TopicFacts("src.spread", "records move")}
MAPS = {("orders", 0): [Segment("orders", 0, 0, 0, 10, "src.orders"), Segment("orders", 0, 12, 11, 5, "src.orders")]}


def _observation(source_offsets: dict, target_offsets: dict | None = None, target_members: int = 0) -> Observation:
    sources = {"g": GroupOffsets("g", "Empty", 0, {tp: (o, "md") for tp, o in source_offsets.items()})}
    targets = {"g": GroupOffsets("g", "Stable" if target_members else "Empty", target_members, target_offsets or {})}
    return Observation(sources, targets, FACTS, MAPS, {("orders", 0): 20})


def test_topic_facts_translate_only_kept_partitions_of_existing_target_topics():
    facts = decide.topic_facts(
        {"a": 2, "b": 3, "c": 1}, {"src.a": 2, "src.b": 4}, lambda t: f"src.{t}", lambda s, t: s == t
    )
    assert facts["a"] == TopicFacts("src.a")
    assert facts["b"].untranslatable == (
        "records of b (3 partitions) do not keep their partition on src.b (4 partitions; mirror.keep_partition), "
        "so no offset of it can be translated"
    )
    assert facts["c"] == TopicFacts("src.c", target_exists=False)


def test_plan_commits_translated_offsets_and_writes_a_checkpoint_for_each():
    plan = _observation({("orders", 0): 5, ("orders", 1): 3, ("spread", 0): 7}).plan()
    assert [(r.topic, r.partition, r.state, r.target_offset, r.action) for r in plan.rows] == [
        ("orders", 0, "translated", 5, "commit"),
        ("orders", 1, "ahead_of_mirror", None, "none"),
        ("spread", 0, "not_translatable", None, "none"),
    ]
    assert plan.commits == {"g": {("src.orders", 0): (5, "md")}}
    assert plan.checkpoints == [Checkpoint("g", "src.orders", 0, 5, 5, "md")]


def test_a_target_group_is_never_moved_backwards_nor_touched_while_active():
    ahead = _observation({("orders", 0): 13}, {("src.orders", 0): (30, "")}).plan()
    assert [(r.target_offset, r.target_committed, r.action) for r in ahead.rows] == [(12, 30, "target_ahead")]
    assert ahead.commits == {} and len(ahead.checkpoints) == 1  # the checkpoint tells the translation all the same
    same = _observation({("orders", 0): 13}, {("src.orders", 0): (12, "")}).plan()
    assert [r.action for r in same.rows] == ["in_sync"] and same.commits == {}
    active = _observation({("orders", 0): 13}, {("src.orders", 0): (2, "")}, target_members=2).plan()
    assert [r.action for r in active.rows] == ["skipped_active"] and active.commits == {}
    assert active.skipped == {"g": "2 active member(s) on the target; its offsets are left as they are"}


def test_the_mirrors_position_lets_a_group_past_the_last_marker_translate():
    plan = _observation({("orders", 0): 19}).plan()  # the map ends at 17; the mirror read up to 20
    assert [(r.state, r.target_offset) for r in plan.rows] == [("translated", 16)]


def test_only_new_or_changed_checkpoints_are_written_again():
    first = [Checkpoint("g", "t", 0, 5, 5), Checkpoint("g", "t", 1, 2, 3)]
    written: dict = {}
    assert decide.fresh_checkpoints(written, first) == first
    decide.remember(written, first)
    later = [Checkpoint("g", "t", 0, 5, 5), Checkpoint("g", "t", 1, 4, 6), Checkpoint("h", "t", 0, 1, 1)]
    assert decide.fresh_checkpoints(written, later) == later[1:]


def test_failover_refuses_groups_active_on_the_source_unless_forced():
    sources = {
        "busy": GroupOffsets("busy", "Stable", 3),
        "idle": GroupOffsets("idle", "Empty", 0),
        "hidden": GroupOffsets("hidden", error="Broker: Group authorization failed"),
    }
    assert decide.failover_refusals(sources, force=False) == [
        "group busy still has 3 active member(s) on the source: stop its consumers first (their commits would be "
        "lost), or pass --force",
        "group hidden: the source did not answer for it (Broker: Group authorization failed)",
    ]
    assert decide.failover_refusals(sources, force=True) == [
        "group hidden: the source did not answer for it (Broker: Group authorization failed)"
    ]


def test_a_pass_says_each_thing_once():
    observation = _observation({("orders", 0): 5, ("orders", 1): 3}, target_members=0)
    said_with_kinds = pass_messages(observation, observation.plan(), {"src.checkpoints.internal": "Broker: Topic auth"})
    assert [kind for kind, _ in said_with_kinds] == ["ahead", "write", "follows"]
    messages = [text for _, text in said_with_kinds]
    assert messages == [
        "secure-mirror run: group sync: group g orders-1 is ahead of the mirror; it is translated once mirrored",
        "secure-mirror run: group sync: writing to src.checkpoints.internal on the target failed: Broker: Topic auth",
        "secure-mirror run: group sync: group g follows the mirror on the target",
    ]

    class FakeSession:
        checkpoints_topic = "src.checkpoints.internal"
        writes: list = []
        java_failure = None
        read_by = {"source": "librdkafka"}
        phases: dict = {}
        steps: dict = {}

        def observe_pass(self, memory):
            return observation, {}

        def write(self, written, plan):
            self.writes.append((list(written), dict(plan.commits)))
            return {}

    said: list[str] = []
    sync = GroupSync(FakeSession(), said.append)  # type: ignore[arg-type]
    sync.once()
    sync.once()
    assert said == [
        messages[0],
        messages[2],
        "secure-mirror run: group sync: groups: 1 selected, 1 following the mirror on the target",
    ]  # the summary too, once: it did not change
    assert [len(w) for w, _ in FakeSession.writes] == [1, 0]  # the checkpoint once; the commit again (not in sync)


def test_the_groups_table_and_json(tmp_path):
    observation = _observation({("orders", 0): 5, ("spread", 0): 7}, {("src.orders", 0): (2, "")})
    result = report.output(observation, observation.plan(), ("src", "tgt"), ("map", "src.checkpoints.internal"))
    assert report.GroupsOutput.model_validate_json(result.model_dump_json()) == result
    assert result.groups[0].source == report.GroupSide(state="Empty", members=0)
    lines = report.table(result).splitlines()
    assert lines[0].split() == [
        "Group",
        "Topic",
        "Partition",
        "Source",
        "Target",
        "topic",
        "Translated",
        "Target",
        "State",
    ]
    assert lines[1].split() == ["g", "orders", "0", "5", "src.orders", "5", "2", "translated"]
    assert lines[2].split() == ["g", "spread", "0", "7", "src.spread", "-", "-", "not", "translatable"]
    assert lines[3] == "g spread-0: records move"
    assert failover_problems(result, {"g": "Broker: Unknown member"}) == [
        "group g spread-0 is not translatable: records move",
        "writing to g on the target failed: Broker: Unknown member",
    ]
    profile = pf.load(tmp_path)
    text = cut_over(profile, result, str(tmp_path / "out"), dry_run=True)
    assert "Cut-over (dry run: nothing was committed): start the consumers of g with the same group.id" in text
    assert "  bootstrap.servers: kafka.target.test:9093" in text
    assert "    orders -> src.orders" in text and "    spread -> src.spread" in text
    assert f"    {tmp_path}/out/target/client.properties: Kafka's Java tools" in text
    assert pf.PASSWORD not in text
    many = result.model_copy(
        update={"groups": [result.groups[0].model_copy(update={"group": f"g{n:02d}"}) for n in range(12)]}
    )
    text = cut_over(profile, many, str(tmp_path / "out"), dry_run=False)
    names = ", ".join(f"g{n:02d}" for n in range(10))
    assert f"Cut-over: start the consumers of {names} and 2 more with the same group.id on the target" in text


def test_past_twenty_of_a_kind_the_rest_are_counted_not_said():
    said: list[str] = []
    sync = GroupSync(None, said.append)  # type: ignore[arg-type]
    for i in range(25):
        sync.tell(f"group g{i} t-0 is ahead", "ahead")
        sync.tell(f"writing w{i} failed", "write")  # always said
    sync.tell("group g0 t-0 is ahead", "ahead")  # said already: not again
    ahead = [line for line in said if "is ahead" in line]
    assert len(ahead) == 20 and len([line for line in said if "failed" in line]) == 25
    assert (
        said.count(
            "secure-mirror run: group sync: more partitions ahead of the mirror than 20: the rest are not said one by "
            "one; the summary counts them and `secure-mirror groups PROFILE --all` lists them"
        )
        == 1
    )
