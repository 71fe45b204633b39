"""The way back of a cut-over (``failback``, docs/cutover.md) as pure decisions: its steps and record, the profiles it
accepts, and the restore of both clusters' bindings. The round trip is generated (seeded): whatever both clusters
held before, the forward fence and promotion, then the way back's fence and restore leave each cluster holding
exactly what it held before the cut-over."""

from __future__ import annotations

import json

import pytest
import yaml

from secure_mirror.cutover import machine, plans, steps
from secure_mirror.cutover import record as records
from secure_mirror.cutover.notes import AclChange, FenceNote, Notes
from secure_mirror.cutover.steps.fence import fencing_words
from secure_mirror.cutover.way_back import forward_record, way_back_problems
from secure_mirror.errors import BadInputError
from secure_mirror.kafka.acl import Acl
from secure_mirror.profile import load_profile
from secure_mirror.profile.reverse import reverse_data
from tests.support import profiles as pf
from tests.support.seeds import seeded
from tests.unit.cutover.test_plans import _random_acl, acl, deny

TOPICS = ["orders.eu", "orders.us", "payments"]


def _both(tmp_path, **mirror):
    data = pf.profile_data(tmp_path, **{"rename": {"rule": "identity"}, "provenance_headers": True, **mirror})
    forward = load_profile(pf.write_profile(tmp_path, data))
    (tmp_path / "back").mkdir()
    back_path = tmp_path / "back" / "profile.yaml"
    back_path.write_text(yaml.safe_dump(reverse_data(data, forward), sort_keys=False), encoding="utf-8")
    return forward, load_profile(back_path)


def _start(text: str, direction: str, groups=("g",)) -> records.Record:
    return records.Record.start(records.command_key(text, direction, list(groups)), steps.names(direction))


def test_the_way_back_has_its_own_steps_and_its_record_is_read_back(tmp_path):
    key = records.command_key("back: 1\n", records.FAILBACK, ["g"])
    record = machine.record_file(tmp_path).resume(key)
    assert [s.name for s in record.steps] == list(steps.names(records.FAILBACK))
    assert "restore" in steps.names(records.FAILBACK) and "promote" not in steps.names(records.FAILBACK)
    store = machine.record_file(tmp_path)
    store.save(record)
    assert store.load(key) == record and store.peek() == record
    forward = _start("back: 1\n", records.CUTOVER)
    assert [s.name for s in forward.steps] == list(steps.names(records.CUTOVER))
    swapped = record.to_dict() | {"steps": forward.to_dict()["steps"]}
    (tmp_path / records.FILE).write_text(json.dumps(swapped))
    with pytest.raises(BadInputError, match="not a cut-over record"):
        store.peek()


def test_only_the_reverse_of_a_kept_names_profile_is_a_way_back(tmp_path):
    forward, back = _both(tmp_path)
    assert way_back_problems(forward, back) == []
    assert "not tgt -> src" in way_back_problems(forward, forward)[0]
    other = back.model_copy(update={"source": back.source.model_copy(update={"sasl": forward.source.sasl})})
    assert way_back_problems(forward, other) == [
        "--back's tgt identity is not the one the cut-over's mirror has there: the way back reads the cut-over's "
        "offset map with it; write it with `secure-mirror reverse PROFILE --out BACK`"
    ]
    (tmp_path / "renamed").mkdir()
    renamed = pf.load(tmp_path / "renamed")  # alias_prefix: the producers would write src.<topic> on the target
    assert any("kept names" in p for p in way_back_problems(renamed, back))


def _complete(key: records.Command, notes: Notes) -> records.Record:
    record = records.Record.start(key, steps.names(key.direction))
    for step in record.steps:
        record.begin(step.name, "t")
        record.finish(step.name, "t", {})
    record.notes = notes
    return record


def test_failback_reads_only_a_complete_cutover(tmp_path):
    key = records.command_key("p\n", records.CUTOVER, ["g"])
    store = machine.record_file(tmp_path)
    with pytest.raises(BadInputError, match="no cut-over is recorded"):
        forward_record(tmp_path, None, steps.names)
    started = _start("p\n", records.CUTOVER)
    started.begin("check", "t")
    store.save(started)
    with pytest.raises(BadInputError, match=r"not complete \(next: check\)"):
        forward_record(tmp_path, None, steps.names)
    store.save(_complete(key, Notes(fence=FenceNote())))
    assert forward_record(tmp_path, None, steps.names)[1] == tmp_path / records.FILE
    kept = tmp_path / "cutover-kept.json"
    (tmp_path / records.FILE).rename(kept)  # a failback that restored already kept it there
    back = _start("b\n", records.FAILBACK)
    back.notes.forward_record = str(kept)
    assert forward_record(tmp_path, back, steps.names)[1] == kept
    store.save(_complete(records.command_key("b\n", records.FAILBACK, ["g"]), Notes()))
    with pytest.raises(BadInputError, match="records a failback, not a cutover"):
        forward_record(tmp_path, None, steps.names)
    (tmp_path / records.FILE).write_text("{")
    with pytest.raises(BadInputError, match=r"not a cut-over record this version reads \(.*\)$"):
        forward_record(tmp_path, None, steps.names)  # named, and not to be moved away: it is the cut-over's


def test_restore_undoes_the_fences_and_the_promotion():
    literal, prefix = acl("User:app", "WRITE", "payments"), acl("User:etl", "WRITE", "orders.", "PREFIXED")
    promoted = [acl("User:app", "WRITE", "payments"), acl("User:app", "DESCRIBE", "payments")]
    forward = Notes(
        fence=FenceNote(remove=(literal,), deny=(deny("User:etl", "payments"),)),
        acls=[AclChange("target", "added", "admin", a) for a in promoted],
    )
    back_owner = acl("User:b-app", "WRITE", "payments")  # a producer of the target's own, fenced by the way back
    back = Notes(fence=FenceNote(remove=(promoted[0], back_owner), deny=(deny("User:x", "payments"),)))
    plan = plans.restore_plan(forward, back)
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
        fenced = plans.fence_plan(forward, a0, selected_a)
        if fenced.unfenceable:
            continue
        a1 = _apply(a0, fenced.deny, fenced.remove)
        promoted = plans.promote_plan(forward, fenced, b0)
        b1 = _apply(b0, promoted.grant, [])
        way_back = plans.fence_plan(back, b1, selected_b)
        if way_back.unfenceable:
            continue
        b2 = _apply(b1, way_back.deny, way_back.remove)
        notes = Notes(
            fence=fenced.note([], {}), acls=[AclChange("target", "added", "admin", a) for a in promoted.grant]
        )
        plan = plans.restore_plan(notes, Notes(fence=way_back.note([], {})))
        assert _apply(a1, plan.add["source"], plan.delete["source"]) == a0, (a0, fenced)
        assert _apply(b2, plan.add["target"], plan.delete["target"]) == b0, (b0, promoted, way_back)
        trips += 1
    assert trips >= 100, trips


def test_the_fence_names_the_cluster_it_changes(tmp_path):
    """failback's fence changes the forward cut-over's target: it names that cluster, never "the source"."""
    forward, back = _both(tmp_path)
    assert fencing_words(back, 1, 2) == (
        f"fence: adding 1 DENY WRITE and removing 2 ALLOW WRITE binding(s) on {forward.target.alias}"
    )
    assert fencing_words(forward, 3, 0).endswith(f"binding(s) on {forward.source.alias}")
    assert forward.source.alias != forward.target.alias
