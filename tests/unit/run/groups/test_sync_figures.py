"""Group sync's figures: MirrorMaker 2's checkpoint-latency-ms per group, topic and partition in the metrics file's
line, and the one-line summary of the groups (pure; the live failover test runs the sync itself)."""

from __future__ import annotations

import io
import json

from secure_mirror.run.groups import decide
from secure_mirror.run.groups.checkpoints import Checkpoint
from secure_mirror.run.groups.sync import METRICS_KEY, PASS_KEY, SyncThread, latency_line, pass_line, summary
from secure_mirror.run.groups.translate import AHEAD, NOT_TRANSLATABLE, TRANSLATED


def _row(group: str, partition: int, state: str = TRANSLATED, action: str = decide.COMMIT) -> decide.Row:
    return decide.Row(group, "orders", partition, 10, "src.orders", 10, None, state, "", action)


def test_latency_line_carries_mirrormaker2s_name_and_tags_for_each_checkpoint_written():
    written = [Checkpoint("g1", "src.orders", 0, 10, 12), Checkpoint("g2", "src.orders", 3, 5, 5)]
    line = latency_line(written, asked=100.0, acknowledged=100.25, source="src", target="tgt")
    body = line[METRICS_KEY]
    assert (body["source"], body["target"], body["time"]) == ("src", "tgt", 100.25)
    assert [(f["group"], f["topic"], f["partition"], f["checkpoint-latency-ms"]) for f in body["figures"]] == [
        ("g1", "src.orders", 0, 250),
        ("g2", "src.orders", 3, 250),
    ]
    assert body["figures"][0]["upstream-offset"] == 10 and body["figures"][0]["downstream-offset"] == 12
    assert json.loads(json.dumps(line)) == line  # a JSON line as it is


def test_latency_is_never_negative_when_the_wall_clock_steps_back():
    [figure] = latency_line([Checkpoint("g", "t", 0, 1, 1)], 10.0, 9.5, "a", "b")[METRICS_KEY]["figures"]
    assert figure["checkpoint-latency-ms"] == 0


def test_summary_counts_following_waiting_skipped_and_failing_groups():
    plan = decide.Plan(
        rows=[
            _row("follows", 0),
            _row("follows", 1),
            _row("waits", 0, state=AHEAD, action=decide.NO_ACTION),
            _row("follows", 2, state=AHEAD, action=decide.NO_ACTION),  # one partition ahead: still following
            _row("active", 0, action=decide.SKIPPED_ACTIVE),
            _row("broken", 0),
            _row("untranslatable", 0, state=NOT_TRANSLATABLE, action=decide.NO_ACTION),
        ],
        skipped={"active": "2 active members"},
    )
    line = summary(plan, failed={"broken": "GROUP_AUTHORIZATION_FAILED"})
    assert line == (
        "secure-mirror run: group sync: groups: 5 selected, 1 following the mirror on the target, "
        "1 waiting for the mirror, 1 skipped (active members on the target), 1 not committed (see above), "
        "1 partitions not translatable"
    )


def test_summary_of_a_quiet_pass_names_only_what_is_there():
    plan = decide.Plan(rows=[_row("g", 0)])
    assert (
        summary(plan, {}) == "secure-mirror run: group sync: groups: 1 selected, 1 following the mirror on the target"
    )


def test_the_metrics_line_is_appended_whole_to_the_jobs_file(tmp_path):
    metrics = tmp_path / "metrics.jsonl"
    metrics.write_text('{"batch": 1}\n')
    thread = SyncThread.__new__(SyncThread)  # only its writer: no clusters
    thread.metrics_file = str(metrics)
    line = latency_line([Checkpoint("g", "src.t", 0, 3, 3)], 1.0, 1.5, "src", "tgt")
    thread._record(line)
    lines = [json.loads(text) for text in metrics.read_text().splitlines()]
    assert lines == [{"batch": 1}, line]


def test_a_link_put_in_the_metrics_files_place_is_never_written_through(tmp_path):
    target, metrics, out = tmp_path / "elsewhere", tmp_path / "metrics.jsonl", io.StringIO()
    target.write_text("")
    metrics.symlink_to(target)
    thread = SyncThread.__new__(SyncThread)  # only its writer: no clusters
    thread.metrics_file, thread.out = str(metrics), out
    line = latency_line([Checkpoint("g", "src.t", 0, 3, 3)], 1.0, 1.5, "src", "tgt")
    thread._record(line)
    thread._record(line)
    assert target.read_text() == "" and thread.metrics_file is None
    assert out.getvalue().count("stopped writing") == 1, out.getvalue()


def test_a_pass_line_says_its_seconds_what_read_each_side_and_its_phases():
    phases = {"source": 1.23456, "target": 0.5, "write": 2.0004}
    steps = {"source_offsets": 1.0004, "map": 0.01}
    line = pass_line(10.0, 14.5, 10_000, 800, False, {"source": "java_admin"}, phases, steps)[PASS_KEY]
    assert (line["seconds"], line["groups"], line["planned"], line["full"]) == (4.5, 10_000, 800, False)
    assert line["read_by"] == {"source": "java_admin"}
    assert line["phases"] == {"source": 1.235, "target": 0.5, "write": 2.0}
    assert line["steps"] == {"source_offsets": 1.0, "map": 0.01}
    assert pass_line(10.0, 11.0, 1, 1, True)[PASS_KEY]["phases"] == {}  # a build or a caller that measured none


def test_steps_are_the_seconds_between_their_marks(monkeypatch):
    from secure_mirror.run.groups import session

    clock = iter([100.0, 100.5, 102.0, 102.25])
    monkeypatch.setattr(session.time, "monotonic", lambda: next(clock))
    steps = session.Steps()
    for step in ("checkpoint", "source_groups", "map"):
        steps.mark(step)
    assert steps.began == 100.0 and steps.seconds == {"checkpoint": 0.5, "source_groups": 1.5, "map": 0.25}
