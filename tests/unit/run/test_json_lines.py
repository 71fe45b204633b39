"""run --json: every line the launcher and the job's reporter print is one RunLine (schema/run-output.schema.json),
told apart by its kind; the status lines carry the metrics line's figures."""

from __future__ import annotations

import io
import json

from secure_mirror.errors import EXIT_FAILED, EXIT_OK
from secure_mirror.kafka.acl import Acl
from secure_mirror.preflight.model import Check, Report
from secure_mirror.run import launcher
from secure_mirror.run.json_lines import RunLine
from secure_mirror.run.monitor import Reporter
from tests.support.output_schemas import assert_valid_lines
from tests.unit.run.test_launcher import job  # noqa: F401 - the fixture: supervise with a bash job in its place
from tests.unit.run.test_monitor import BATCH, PROGRESS, _Batches, _epoch, _Query


def _lines(text: str) -> list[dict]:
    """Each line parsed as a RunLine, as the plain JSON it is."""
    return [
        RunLine.model_validate_json(line).root.model_dump(by_alias=True, exclude_unset=True)
        for line in text.splitlines()
    ]


def test_status_lines_are_json_with_the_metrics_lines_figures(tmp_path):
    metrics, stream = tmp_path / "metrics.jsonl", io.StringIO()
    reporter = Reporter(str(metrics), 0.0, ["src.", ""], stream, json_lines=True)
    reporter.report(_Query(PROGRESS), _Batches({4: BATCH}))  # a batch, then (interval 0) an idle line
    reporter.finish()
    batch, idle = _lines(stream.getvalue())
    written = json.loads(metrics.read_text())
    assert batch == {"kind": "status", **{k: v for k, v in written.items() if k not in ("partitions", "duration-ms")}}
    assert batch["batch"] == 4 and batch["records-behind"] == 5 and "epoch" not in batch
    assert (idle["kind"], idle["batch"], idle["idle"]) == ("status", 4, True) and "record-count" not in idle


def test_status_lines_and_metrics_lines_count_the_topic_shape_comparisons(tmp_path):
    """The planner's count of topic shape comparisons (``shape_syncs``) as it is when each line is printed: on a
    batch's line and its metrics line, and on idle lines (what a test waits on to know that passes were made)."""

    class Planner:
        shape_syncs = 3

    metrics, stream = tmp_path / "metrics.jsonl", io.StringIO()
    reporter = Reporter(str(metrics), 0.0, ["src.", ""], stream, json_lines=True)
    reporter.shape = Planner()
    reporter.report(_Query(PROGRESS), _Batches({4: BATCH}))
    Planner.shape_syncs = 5
    reporter.report(_Query(PROGRESS), _Batches({}))  # nothing new: an idle line
    assert_valid_lines("run", stream.getvalue())
    assert [line.get("topic-shape-sync-count") for line in _lines(stream.getvalue())] == [3, 3, 5]
    assert json.loads(metrics.read_text())["topic-shape-sync-count"] == 3


def test_an_epochs_status_line_keeps_what_is_not_available_as_null():
    stream = io.StringIO()
    reporter = Reporter(None, 3600.0, ["src.", ""], stream, json_lines=True)

    class Continuous:
        continuous = True

        def epochs(self):
            return [_epoch(None)]

    reporter.report(None, Continuous())
    [line] = _lines(stream.getvalue())
    assert (line["epoch"], line["record-count"], line["records-behind"], line["epoch-duration-ms"]) == (
        7,
        None,
        None,
        500,
    )
    assert "batch" not in line


def test_the_text_status_line_is_unchanged_without_json():
    stream = io.StringIO()
    Reporter(None, 3600.0, ["src.", ""], stream).report(_Query(PROGRESS), _Batches({4: BATCH}))
    assert stream.getvalue().endswith(
        "batch 4: 30 records, in 15/s, out 20/s, 2.0 KiB/s, took 1500 ms, 5 behind the source\n"
    )


def test_notices_become_notice_lines_only_with_json():
    stream = io.StringIO()
    notices = Reporter(None, 1.0, [], stream, json_lines=True).notices()
    assert notices is not None and Reporter(None, 1.0, [], io.StringIO()).notices() is None
    notices.write("12:00:00 secure-mirror job: cannot reach the KDC\n")
    assert _lines(stream.getvalue()) == [
        {"kind": "notice", "message": "12:00:00 secure-mirror job: cannot reach the KDC"}
    ]


def _report() -> Report:
    read = Acl(principal="User:mirror", operation="READ", resource_type="TOPIC", resource_name="t")
    return Report(
        [
            Check("source.acl.topic-read", "fail", "no READ on t", "grant it", [read], ["kafka-acls ..."]),
            Check(
                "target.acl.topic-write", "unverified", "t2 does not exist yet", proven_by="target.audit.topic-write"
            ),
            Check("source.kerberos.initial-ticket", "pass", "a ticket", details={"lifetime": 36000}),
        ],
        {"source": 1.5},
    )


def test_preflight_line_then_the_outcome_when_preflight_does_not_pass(capsys):
    report = _report()
    launcher.show_preflight(report, False, True)
    assert launcher.ended(EXIT_FAILED, "not-started", "pre-flight did not pass", True) == EXIT_FAILED
    preflight, outcome = _lines(capsys.readouterr().out)
    assert preflight["passed"] is False and preflight["report"] == report.to_dict()  # the same as preflight --json
    assert outcome == {"kind": "outcome", "status": "not-started", "exit_code": 1, "message": "pre-flight did not pass"}


def test_supervise_prints_restart_and_outcome_lines(job, capsys):  # noqa: F811 - the fixture imported above
    failed = {"exit_code": EXIT_FAILED, "status": "failed", "message": "broker gone", "retryable": True}
    caught_up = {"exit_code": EXIT_OK, "status": "caught-up", "message": "", "retryable": False}
    code, _ = job([json.dumps(failed), json.dumps(caught_up)], supervise=True, json_lines=True)
    out, err = capsys.readouterr()
    restart, outcome = _lines(out)
    assert code == EXIT_OK and "restart 1 of 5" in err  # the sentences stay on stderr
    assert (restart["kind"], restart["restart"], restart["message"]) == ("restart", 1, "broker gone")
    assert outcome == {"kind": "outcome", "status": "caught-up", "exit_code": 0, "message": ""}


def test_the_job_is_asked_for_json_lines():
    assert launcher.job_arguments(launcher.RunOptions(json_lines=True, until_caught_up=True), "/m")[-2:] == [
        "--until-caught-up",
        "--json",
    ]


def test_the_jobs_sentences_go_to_stderr_and_its_lines_to_stdout(capsys):
    status = '{"kind":"status","time":"2026-11-25T20:00:00.000Z","batch":1,"record-count":3}\n'
    launcher._relay(io.StringIO(f"secure-mirror job: the mirror query failed: x\n{status}{{not json\n")).join()
    out, err = capsys.readouterr()
    assert (out, err) == (status, "secure-mirror job: the mirror query failed: x\n{not json\n")
