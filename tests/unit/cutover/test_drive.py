"""The cut-over's driver (cutover/machine.drive) over stand-in steps: steps run in order, each recorded before and
after; a step that stops leaves the record there and the report written; the same command run again goes on from
that step; a crash inside a step (the process gone) re-runs that step; a complete record does nothing."""

from __future__ import annotations

import json

import pytest

from secure_mirror.cutover import machine, state, steps
from tests.support.output_schemas import assert_valid


class Crash(BaseException):
    """The process killed inside a step: nothing after it runs, nothing more is recorded."""


@pytest.fixture
def run(tmp_path, monkeypatch):
    calls: list[str] = []
    behaviour: dict[str, object] = {}

    def step(name):
        def fn(ctx):
            calls.append(name)
            what = behaviour.pop(name, None)
            if what == "crash":
                raise Crash
            if what == "stop":
                raise steps.StepFailed(f"{name} cannot go on: fix it")
            return {"step": name}

        return fn

    monkeypatch.setattr(steps, "STEPS", {name: step(name) for name in state.STEPS})
    store = state.RecordFile(tmp_path)
    key = state.command_key("version: 1\n", "cutover", ["g"])
    said: list[str] = []

    def once() -> int:
        record = store.load(key) or state.Record.start(key)
        ctx = steps.Context(None, {}, ["g"], tmp_path, record, lambda: store.save(record), None, say=said.append)
        return machine.drive(ctx)

    return {"once": once, "calls": calls, "behaviour": behaviour, "store": store, "key": key, "said": said}


def test_a_stop_then_a_crash_then_the_rest(run, tmp_path):
    run["behaviour"].update(fence="stop")
    assert run["once"]() == 1
    assert run["calls"] == ["check", "fence"]
    record = run["store"].load(run["key"])
    assert record.step("fence").status == state.FAILED and record.step("fence").message == "fence cannot go on: fix it"
    assert_valid("cutover", (tmp_path / steps.REPORT_JSON).read_text())
    report = json.loads((tmp_path / steps.REPORT_JSON).read_text())
    assert [s["status"] for s in report["steps"][:3]] == ["done", "failed", "not begun"]
    assert "fix that, then run the same command again: it goes on from fence" in run["said"]

    run["behaviour"].update(drain="crash")
    with pytest.raises(Crash):
        run["once"]()
    assert run["calls"][2:] == ["fence", "drain"]
    record = run["store"].load(run["key"])
    assert record.step("drain").status == state.STARTED and record.step("fence").attempts == 2

    assert run["once"]() == 0
    assert run["calls"][4:] == ["drain", "sync", "stop", "promote", "report"]
    record = run["store"].load(run["key"])
    assert record.complete and record.step("drain").attempts == 2
    assert json.loads((tmp_path / steps.REPORT_JSON).read_text())["complete"] is True

    assert run["once"]() == 0 and len(run["calls"]) == 9  # complete: nothing runs again


def test_a_complete_record_writes_its_report_again(run, tmp_path):
    assert run["once"]() == 0
    (tmp_path / steps.REPORT_JSON).write_text("{}")  # as a run killed after its last step was recorded leaves it
    assert run["once"]() == 0 and len(run["calls"]) == len(state.STEPS)  # nothing runs again
    assert json.loads((tmp_path / steps.REPORT_JSON).read_text())["complete"] is True
    assert any(line.startswith("report: ") for line in run["said"][-1:])
