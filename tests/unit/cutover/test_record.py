"""The cut-over's record (secure_mirror/cutover/record.py): steps in order, a re-run resumes at the first step not
done (a step started and not finished runs again), another cut-over's record is refused with a sentence, the file
is 0600 and replaced whole, a damaged one is named, never a traceback; the typed notes are written as the record
always held them, and a record written before they were typed is read back whole."""

from __future__ import annotations

import json
import stat

import pytest

from secure_mirror import folders
from secure_mirror.cutover import machine, steps
from secure_mirror.cutover import record as records
from secure_mirror.cutover.notes import AclChange, Count, FencedEnd, FenceNote, GroupOffset, Notes
from secure_mirror.errors import BadInputError
from secure_mirror.kafka.acl import Acl

PROFILE = "version: 1\n"


def record(groups=("billing", "audit")) -> records.Record:
    key = records.command_key(PROFILE, records.CUTOVER, list(groups))
    return records.Record.start(key, steps.names(records.CUTOVER))


def test_steps_run_in_order_and_a_rerun_resumes_where_it_stopped(tmp_path):
    store = machine.record_file(tmp_path)
    key = records.command_key(PROFILE, records.CUTOVER, ["audit", "billing", "audit"])
    assert store.load(key) is None
    done = record()
    for name in ("check", "fence"):
        done.begin(name, records.now())
        done.finish(name, records.now(), {"step": name})
    done.begin("drain", records.now())  # killed here: drain started, never finished
    done.notes.fence = FenceNote(deny=(Acl.of(DENY),))
    store.save(done)
    again = store.load(key)
    assert again == done and again.next_step() == "drain" and again.step("drain").status == records.STARTED
    again.begin("drain", records.now())
    assert again.step("drain").attempts == 2
    with pytest.raises(ValueError, match="step report is not next"):
        again.begin("report", records.now())
    again.fail("drain", records.now(), "lag 3 on orders-0")
    assert again.next_step() == "drain" and not again.complete
    for name in steps.names(records.CUTOVER)[2:]:
        again.begin(name, records.now())
        again.finish(name, records.now(), {})
    assert again.complete and again.next_step() is None


def test_the_file_is_private_and_replaced_whole(tmp_path):
    store = machine.record_file(tmp_path / "run")
    store.save(record())
    store.save(record())
    assert stat.S_IMODE(store.path.stat().st_mode) == 0o600
    assert [p.name for p in store.path.parent.iterdir()] == [records.FILE]
    assert json.loads(store.path.read_text())["command"]["groups"] == ["audit", "billing"]


def test_the_durable_writer_replaces_a_link_never_writes_through_it(tmp_path):
    elsewhere = tmp_path / "elsewhere.txt"
    elsewhere.write_text("kept\n")
    (tmp_path / "out.json").symlink_to(elsewhere)
    folders.write_durably(tmp_path / "out.json", "new\n", 0o600)
    assert elsewhere.read_text() == "kept\n" and not (tmp_path / "out.json").is_symlink()
    assert (tmp_path / "out.json").read_text() == "new\n" and stat.S_IMODE(
        (tmp_path / "out.json").stat().st_mode
    ) == 0o600
    assert sorted(p.name for p in tmp_path.iterdir()) == ["elsewhere.txt", "out.json"]


@pytest.mark.parametrize(
    ("key", "words"),
    [
        (records.command_key(PROFILE, records.CUTOVER, ["billing"]), "other the groups"),
        (
            records.command_key("version: 2\n", records.FAILBACK, ["audit", "billing"]),
            "the profile's content, the direction",
        ),
    ],
)
def test_another_cutovers_record_is_refused_with_the_file_named(tmp_path, key, words):
    store = machine.record_file(tmp_path)
    store.save(record())
    with pytest.raises(BadInputError, match=f"{words}.*finish that one, or move the file away"):
        store.load(key)


@pytest.mark.parametrize("text", ["{", '{"version": 9}', '{"version": 1, "steps": [], "command": {}}', "[]"])
def test_a_damaged_record_is_named(tmp_path, text):
    (tmp_path / records.FILE).write_text(text)
    with pytest.raises(BadInputError, match="is not a cut-over record this version reads"):
        machine.record_file(tmp_path).load(records.command_key(PROFILE, records.CUTOVER, []))


APP = {"principal": "User:app", "host": "*", "operation": "WRITE", "permission": "ALLOW"}
BINDING = {**APP, "resource_type": "TOPIC", "resource_name": "orders", "pattern_type": "LITERAL"}
DENY = {**BINDING, "principal": "User:etl", "permission": "DENY"}
# the notes as the record held them before they were typed (a cut-over that ran its sync step), written by hand
UNTYPED = {
    "fence": {
        "remove": [BINDING],
        "deny": [DENY],
        "producers": {"User:app": ["orders"], "User:etl": ["orders"]},
        "selected": ["orders"],
        "partitions": {"orders": 2},
    },
    "fenced_ends": [{"topic": "orders", "partition": 0, "end": 7}, {"topic": "orders", "partition": 1, "end": 3}],
    "acls": [
        {"cluster": "source", "change": "added", "by": "User:admin", "binding": DENY},
        {"cluster": "source", "change": "removed", "by": "User:admin", "binding": BINDING},
    ],
    "counts": [{"topic": "orders", "partition": 0, "source": 7, "target": 7}],
    "groups": [{"group": "g", "topic": "orders", "partition": 0, "source_offset": 4, "target_offset": 4}],
}


def test_notes_written_before_they_were_typed_are_read_and_written_back_the_same(tmp_path):
    data = record().to_dict() | {"notes": UNTYPED}
    (tmp_path / records.FILE).write_text(json.dumps(data))
    read = machine.record_file(tmp_path).peek()
    assert read is not None and read.to_dict() == data
    notes = read.notes
    assert (
        notes.fence is not None and notes.fence.remove == (Acl.of(BINDING),) and notes.fence.partitions == {"orders": 2}
    )
    assert notes.fenced_ends[1] == FencedEnd("orders", 1, 3)
    assert notes.acls[0] == AclChange("source", "added", "User:admin", Acl.of(DENY))
    assert notes.counts == [Count("orders", 0, 7, 7)] and notes.groups == [GroupOffset("g", "orders", 0, 4, 4)]


def test_a_note_not_taken_is_absent_from_the_file():
    assert Notes().to_dict() == {}
    assert set(Notes(forward_record="/run/cutover-1.json", fence=FenceNote()).to_dict()) == {"fence", "forward_record"}
