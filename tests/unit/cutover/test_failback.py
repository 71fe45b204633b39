"""The way back of a cut-over (``failback``, docs/cutover.md) as pure decisions: its steps and record, the profiles it
accepts, and the restore of both clusters' bindings. The round trip is generated (seeded): whatever both clusters
held before, the forward fence and promotion, then the way back's fence and restore leave each cluster holding
exactly what it held before the cut-over."""

from __future__ import annotations

import json

import pytest
import yaml

from secure_mirror.commands.failback import forward_record, way_back_problems
from secure_mirror.cutover import fence, state
from secure_mirror.errors import BadInputError
from secure_mirror.kafka.acl import Acl
from secure_mirror.profile import load_profile
from secure_mirror.profile.reverse import reverse_data
from tests.support import profiles as pf
from tests.support.seeds import seeded
from tests.unit.cutover.test_fence import _random_acl, acl, deny

TOPICS = ["orders.eu", "orders.us", "payments"]


def _both(tmp_path, **mirror):
    data = pf.profile_data(tmp_path, **{"rename": {"rule": "identity"}, "provenance_headers": True, **mirror})
    forward = load_profile(pf.write_profile(tmp_path, data))
    (tmp_path / "back").mkdir()
    back_path = tmp_path / "back" / "profile.yaml"
    back_path.write_text(yaml.safe_dump(reverse_data(data, forward), sort_keys=False), encoding="utf-8")
    return forward, load_profile(back_path)


def test_the_way_back_has_its_own_steps_and_its_record_is_read_back(tmp_path):
    key = state.command_key("back: 1\n", state.FAILBACK, ["g"])
    record = state.Record.start(key)
    assert [s.name for s in record.steps] == list(state.FAILBACK_STEPS)
    assert "restore" in state.FAILBACK_STEPS and "promote" not in state.FAILBACK_STEPS
    store = state.RecordFile(tmp_path)
    store.save(record)
    assert store.load(key) == record and store.peek() == record
    forward = state.Record.start(state.command_key("back: 1\n", state.CUTOVER, ["g"]))
    assert [s.name for s in forward.steps] == list(state.STEPS)
    swapped = record.to_dict() | {"steps": forward.to_dict()["steps"]}
    (tmp_path / state.FILE).write_text(json.dumps(swapped))
    with pytest.raises(BadInputError, match="not a cut-over record"):
        store.peek()


def test_only_the_reverse_of_a_kept_names_profile_is_a_way_back(tmp_path):
    forward, back = _both(tmp_path)
    assert way_back_problems(forward, back) == []
    assert "not tgt -> src" in way_back_problems(forward, forward)[0]
    (tmp_path / "renamed").mkdir()
    renamed = pf.load(tmp_path / "renamed")  # alias_prefix: the producers would write src.<topic> on the target
    assert any("kept names" in p for p in way_back_problems(renamed, back))


def _complete(key: dict, notes: dict) -> state.Record:
    record = state.Record.start(key)
    for step in record.steps:
        record.begin(step.name, "t")
        record.finish(step.name, "t", {})
    record.notes = notes
    return record


def test_failback_reads_only_a_complete_cutover(tmp_path):
    key = state.command_key("p\n", state.CUTOVER, ["g"])
    with pytest.raises(BadInputError, match="no cut-over is recorded"):
        forward_record(tmp_path, None)
    started = state.Record.start(key)
    started.begin("check", "t")
    state.RecordFile(tmp_path).save(started)
    with pytest.raises(BadInputError, match=r"not complete \(next: check\)"):
        forward_record(tmp_path, None)
    state.RecordFile(tmp_path).save(_complete(key, {"fence": {}}))
    assert forward_record(tmp_path, None)[1] == tmp_path / state.FILE
    kept = tmp_path / "cutover-kept.json"
    (tmp_path / state.FILE).rename(kept)  # a failback that restored already kept it there
    back = state.Record.start(state.command_key("b\n", state.FAILBACK, ["g"]))
    back.notes["forward_record"] = str(kept)
    assert forward_record(tmp_path, back)[1] == kept
    state.RecordFile(tmp_path).save(_complete(state.command_key("b\n", state.FAILBACK, ["g"]), {}))
    with pytest.raises(BadInputError, match="records a failback, not a cutover"):
        forward_record(tmp_path, None)


def test_restore_undoes_the_fences_and_the_promotion():
    literal, prefix = acl("User:app", "WRITE", "payments"), acl("User:etl", "WRITE", "orders.", "PREFIXED")
    promoted = [acl("User:app", "WRITE", "payments"), acl("User:app", "DESCRIBE", "payments")]
    forward = {
        "fence": {"remove": [literal.to_dict()], "deny": [deny("User:etl", "payments").to_dict()]},
        "acls": [{"cluster": "target", "change": "added", "by": "admin", "binding": a.to_dict()} for a in promoted],
    }
    back_owner = acl("User:b-app", "WRITE", "payments")  # a producer of the target's own, fenced by the way back
    back = {"fence": {"remove": [promoted[0].to_dict(), back_owner.to_dict()], "deny": [deny("User:x", "payments")]}}
    plan = fence.restore_plan(forward, back)
    assert plan.add == {"source": [literal], "target": [back_owner]}
    assert plan.delete == {"source": [deny("User:etl", "payments")], "target": [deny("User:x", "payments"), *promoted]}
    assert prefix not in plan.delete["source"]


def _apply(held: set[Acl], add: list[Acl], delete: list[Acl]) -> set[Acl]:
    return (held | set(add)) - set(delete)


def test_a_generated_round_trip_leaves_both_clusters_as_they_were(tmp_path):
    forward, back = _both(tmp_path)
    rng = seeded("cutover round trip")
    selected_a, selected_b = forward.selection().select(TOPICS), back.selection().select(TOPICS)
    trips = 0
    for _ in range(400):
        a0 = {_random_acl(rng) for _ in range(rng.randrange(1, 10))}
        b0 = {_random_acl(rng) for _ in range(rng.randrange(0, 6))}
        fenced = fence.fence_plan(forward, a0, selected_a)
        if fenced.unfenceable:
            continue
        a1 = _apply(a0, fenced.deny, fenced.remove)
        promoted = fence.promote_plan(forward, fenced, b0)
        b1 = _apply(b0, promoted.grant, [])
        way_back = fence.fence_plan(back, b1, selected_b)
        if way_back.unfenceable:
            continue
        b2 = _apply(b1, way_back.deny, way_back.remove)
        notes = {
            "fence": {"remove": [a.to_dict() for a in fenced.remove], "deny": [a.to_dict() for a in fenced.deny]},
            "acls": [
                {"cluster": "target", "change": "added", "by": "admin", "binding": a.to_dict()} for a in promoted.grant
            ],
        }
        back_notes = {
            "fence": {"remove": [a.to_dict() for a in way_back.remove], "deny": [a.to_dict() for a in way_back.deny]}
        }
        plan = fence.restore_plan(notes, back_notes)
        assert _apply(a1, plan.add["source"], plan.delete["source"]) == a0, (a0, fenced)
        assert _apply(b2, plan.add["target"], plan.delete["target"]) == b0, (b0, promoted, way_back)
        trips += 1
    assert trips >= 100, trips


def test_the_fence_names_the_cluster_it_changes(tmp_path):
    """failback's fence changes the forward cut-over's target: it names that cluster, never "the source"."""
    forward, back = _both(tmp_path)
    assert fence.fencing_words(back, 1, 2) == (
        f"fence: adding 1 DENY WRITE and removing 2 ALLOW WRITE binding(s) on {forward.target.alias}"
    )
    assert fence.fencing_words(forward, 3, 0).endswith(f"binding(s) on {forward.source.alias}")
    assert forward.source.alias != forward.target.alias
