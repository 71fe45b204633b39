"""The cut-over's record (secure_mirror/cutover/state.py): steps in order, a re-run resumes at the first step not
done (a step started and not finished runs again), another cut-over's record is refused with a sentence, the file
is 0600 and replaced whole, a damaged one is named, never a traceback."""

from __future__ import annotations

import json
import stat

import pytest

from secure_mirror.cutover import state
from secure_mirror.errors import BadInputError

PROFILE = "version: 1\n"


def record(groups=("billing", "audit")):
    return state.Record.new(PROFILE, "cutover", list(groups))


def test_steps_run_in_order_and_a_rerun_resumes_where_it_stopped(tmp_path):
    store = state.RecordFile(tmp_path)
    key = state.command_key(PROFILE, "cutover", ["audit", "billing", "audit"])
    assert store.load(key) is None
    done = record()
    for name in ("check", "fence"):
        done.begin(name, state.now())
        done.finish(name, state.now(), {"step": name})
    done.begin("drain", state.now())  # killed here: drain started, never finished
    done.notes["fence"] = {"deny": [{"principal": "User:app"}]}
    store.save(done)
    again = store.load(key)
    assert again == done and again.next_step() == "drain" and again.step("drain").status == state.STARTED
    again.begin("drain", state.now())
    assert again.step("drain").attempts == 2
    with pytest.raises(ValueError, match="step report is not next"):
        again.begin("report", state.now())
    again.fail("drain", state.now(), "lag 3 on orders-0")
    assert again.next_step() == "drain" and not again.complete
    for name in state.STEPS[2:]:
        again.begin(name, state.now())
        again.finish(name, state.now(), {})
    assert again.complete and again.next_step() is None


def test_the_file_is_private_and_replaced_whole(tmp_path):
    store = state.RecordFile(tmp_path / "run")
    store.save(record())
    store.save(record())
    assert stat.S_IMODE(store.path.stat().st_mode) == 0o600
    assert [p.name for p in store.path.parent.iterdir()] == [state.FILE]
    assert json.loads(store.path.read_text())["command"]["groups"] == ["audit", "billing"]


@pytest.mark.parametrize(
    ("key", "words"),
    [
        (state.command_key(PROFILE, "cutover", ["billing"]), "other the groups"),
        (state.command_key("version: 2\n", "failback", ["audit", "billing"]), "the profile's content, the direction"),
    ],
)
def test_another_cutovers_record_is_refused_with_the_file_named(tmp_path, key, words):
    store = state.RecordFile(tmp_path)
    store.save(record())
    with pytest.raises(BadInputError, match=f"{words}.*finish that one, or move the file away"):
        store.load(key)


@pytest.mark.parametrize("text", ["{", '{"version": 9}', '{"version": 1, "steps": [], "command": {}}', "[]"])
def test_a_damaged_record_is_named(tmp_path, text):
    (tmp_path / state.FILE).write_text(text)
    with pytest.raises(BadInputError, match="is not a cut-over record this version reads"):
        state.RecordFile(tmp_path).load(state.command_key(PROFILE, "cutover", []))
