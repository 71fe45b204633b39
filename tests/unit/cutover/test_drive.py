"""The cut-over's driver (cutover/machine.drive) over stand-in steps: steps run in order, each recorded before and
after; a step that stops leaves the record there and the report written; the same command run again goes on from
that step; a crash inside a step (the process gone) re-runs that step; a complete record does nothing."""

from __future__ import annotations

import json

import pytest

from secure_mirror.commands.cutover import printer
from secure_mirror.cutover import machine, report, steps
from secure_mirror.cutover import record as records
from secure_mirror.cutover.context import Context, Step, StepFailed
from secure_mirror.errors import EXIT_FAILED
from secure_mirror.kafka import admin_ops
from secure_mirror.kafka.processes import IdentityProcess
from tests.support.output_schemas import assert_valid


class Crash(BaseException):
    """The process killed inside a step: nothing after it runs, nothing more is recorded."""


def _client_error() -> None:
    """What ``cutover --timeout 600`` met at the fence (issue 60 point 8): librdkafka refusing a setting out of its
    range, in an identity's process, carried back as text that ends its message with a line feed."""
    process = IdentityProcess({})
    try:
        process.call(admin_ops.list_topics, {"bootstrap.servers": "127.0.0.1:9", "socket.timeout.ms": "600000"})
    finally:
        process.close()


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
                raise StepFailed(f"{name} cannot go on: fix it")
            if what == "client error":
                _client_error()
            return {"step": name}

        return fn

    table = tuple(Step(name, step(name)) for name in steps.names(records.CUTOVER))
    monkeypatch.setitem(steps.TABLES, records.CUTOVER, table)
    store = machine.record_file(tmp_path)
    key = records.command_key("version: 1\n", records.CUTOVER, ["g"])
    said: list[str] = []

    def once() -> int:
        record, save = machine.open_record(tmp_path, key, dry_run=False)
        ctx = Context(None, {}, ["g"], tmp_path, record, save, None, say=said.append)
        return machine.drive(ctx)

    return {"once": once, "calls": calls, "behaviour": behaviour, "store": store, "key": key, "said": said}


def test_a_stop_then_a_crash_then_the_rest(run, tmp_path):
    run["behaviour"].update(fence="stop")
    assert run["once"]() == 1
    assert run["calls"] == ["check", "fence"]
    record = run["store"].load(run["key"])
    assert (
        record.step("fence").status == records.FAILED and record.step("fence").message == "fence cannot go on: fix it"
    )
    assert_valid("cutover", (tmp_path / report.JSON_FILE).read_text())
    written = json.loads((tmp_path / report.JSON_FILE).read_text())
    assert [s["status"] for s in written["steps"][:3]] == ["done", "failed", "not begun"]
    assert "fix that, then run the same command again: it goes on from fence" in run["said"]

    run["behaviour"].update(drain="crash")
    with pytest.raises(Crash):
        run["once"]()
    assert run["calls"][2:] == ["fence", "drain"]
    record = run["store"].load(run["key"])
    assert record.step("drain").status == records.STARTED and record.step("fence").attempts == 2

    assert run["once"]() == 0
    assert run["calls"][4:] == ["drain", "sync", "stop", "promote", "report"]
    record = run["store"].load(run["key"])
    assert record.complete and record.step("drain").attempts == 2
    assert json.loads((tmp_path / report.JSON_FILE).read_text())["complete"] is True

    assert run["once"]() == 0 and len(run["calls"]) == 9  # complete: nothing runs again


def test_a_complete_record_writes_its_report_again(run, tmp_path):
    assert run["once"]() == 0
    (tmp_path / report.JSON_FILE).write_text("{}")  # as a run killed after its last step was recorded leaves it
    assert run["once"]() == 0 and len(run["calls"]) == len(steps.names(records.CUTOVER))  # nothing runs again
    assert json.loads((tmp_path / report.JSON_FILE).read_text())["complete"] is True
    assert any(line.startswith("report: ") for line in run["said"][-1:])


def test_a_step_stopped_by_a_client_error_with_a_line_feed_writes_the_report_and_exits_1(run, tmp_path, capsys):
    run["behaviour"].update(fence="client error")
    assert run["once"]() == EXIT_FAILED
    message = run["store"].load(run["key"]).step("fence").message
    assert message.startswith("KafkaException: KafkaError{code=_INVALID_ARG") and message.endswith('300000\n"}')
    written = json.loads((tmp_path / report.JSON_FILE).read_text())
    assert_valid("cutover", (tmp_path / report.JSON_FILE).read_text())
    assert [(s["status"], s["message"]) for s in written["steps"][1:3]] == [("failed", message), ("not begun", "")]
    rows = [line for line in (tmp_path / report.MARKDOWN_FILE).read_text().splitlines() if line.startswith("| fence |")]
    assert len(rows) == 1 and "outside allowed range 10..300000<br>" in rows[0], rows
    assert "fix that, then run the same command again: it goes on from fence" in run["said"]
    stopped = next(line for line in run["said"] if line.startswith("fence: stopped: "))
    printer(False)(stopped)  # as the command prints it: one line
    assert capsys.readouterr().out.endswith('300000\\n"}\n')
