"""The three-broker faults' judges as pure functions, without a cluster (tests/reliability/test_three_broker_faults.py
uses them live): the independent readers' lag, catch-up and first new record (tail.py), the sampler's answered
spans, the proof of an open transaction (open_transaction.py), what ``run --json`` said of task retries (harness.py),
MirrorMaker 2's failed tasks and the contender selector (contenders.py), and the merged results file
(contender_results.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.reliability import contender_results, contenders, open_transaction, tail
from tests.reliability.harness import json_lines_of, task_retries, waited_retries

DUMP = Path(__file__).parents[1] / "unit" / "transaction-log-dump.txt"  # captured on the sandbox


def test_lag_counts_each_record_from_its_receipt_on_the_source_until_its_receipt_on_the_target():
    source = {1: 1000, 2: 1100, 3: 1200, 4: 5000}
    target = {1: 1500, 2: 1050, 3: 3000}  # 2 reached the target reader first: never lag; 4 never: lag from 5000
    events = tail.lag_events(source, target)
    assert events == [(1000, 1), (1200, 1), (1500, -1), (3000, -1), (5000, 1)]
    assert tail.highest_lag(events, 0, 10_000) == 2
    assert tail.highest_lag(events, 1600, 2000) == 1  # the lag as the window opens counts
    assert tail.highest_lag(events, 3100, 4000) == 0
    assert tail.highest_lag(events, 4000, 6000) == 1


def _tails(tmp_path: Path, source_lines: list[str], target_lines: list[str]) -> tuple[tail.Tail, tail.Tail]:
    (tmp_path / "s").write_text("".join(f"{line}\n" for line in source_lines))
    (tmp_path / "t").write_text("".join(f"{line}\n" for line in target_lines))
    return tail.Tail(tmp_path / "s").update(), tail.Tail(tmp_path / "t").update()


def test_caught_up_needs_the_source_reader_past_the_ends_and_every_record_below_them_on_the_target(tmp_path):
    source_lines = ["r S 0 0 10 900 1000", "r S 0 1 11 950 1100", "r S 1 0 12 960 1200", "p S 0 2 1300"]
    target_lines = ["r T 0 0 10 900 2000", "r T 1 0 12 960 2500", "r T 1 1 12 960 2600"]
    source, target = _tails(tmp_path, source_lines, target_lines)
    assert tail.caught_up_at(source, target, "S", "T", {0: 2, 1: 1}) is None  # the source reader is not past 1
    (tmp_path / "s").write_text((tmp_path / "s").read_text() + "p S 1 1 1400\n")
    source.update()
    assert tail.caught_up_at(source, target, "S", "T", {0: 2, 1: 1}) is None  # 11 is not on the target
    assert tail.missing_below(source, target, "S", "T", {0: 2, 1: 1}) == 1
    (tmp_path / "t").write_text((tmp_path / "t").read_text() + "r T 0 1 11 950 3000\nr T 0 2 1")  # a cut line
    target.update()
    assert tail.caught_up_at(source, target, "S", "T", {0: 2, 1: 1}) == 3000
    assert target.first["T"][12] == 2500  # the first receipt of a copy counts


def test_the_first_new_record_is_the_first_received_whose_timestamp_is_after_the_end(tmp_path):
    _source, target = _tails(tmp_path, [], ["r T 0 5 1 900 2000", "r T 1 3 2 1200 1900", "r T 0 6 3 1100 2500"])
    assert tail.first_new(target, "T", 1000) == 1900
    assert tail.first_new(target, "T", 1200) is None


def test_the_sampler_spans_count_answers_not_failures():
    times = [(1000, True), (1500, True), (2100, False), (9900, True)]
    seen = tail.sampled_spans(times, 1000, 12_000, 5000)
    assert seen == {"spans": 3, "covered": 2, "left_out": 0, "succeeded": 3, "failed": 1, "longest_gap_seconds": 8.4}
    away = tail.sampled_spans(times, 1000, 12_000, 5000, [(6500, 7000)])  # the second span: nothing could answer
    assert (away["spans"], away["covered"], away["left_out"]) == (2, 1, 1)


def test_a_transaction_is_open_at_a_moment_when_its_last_state_written_before_it_is_ongoing():
    records = open_transaction.parse_states(DUMP.read_text(), {"secure-mirror-src-tgt-eos-task#9ff6ad35#0"})
    assert [r["state"] for r in records] == ["Empty", "Ongoing", "Ongoing", "PrepareCommit", "CompleteCommit"]
    tid, (empty, ongoing, _more, prepare, _done) = records[0]["id"], records
    assert open_transaction.open_at(records, tid, ongoing["written_ms"] + 1)["open"]
    assert open_transaction.open_at(records, tid, prepare["written_ms"] - 1)["after"] == prepare
    assert open_transaction.open_at(records, tid, ongoing["written_ms"] + 1)["ended"] == prepare
    assert not open_transaction.open_at(records, tid, prepare["written_ms"])["open"]
    assert not open_transaction.open_at(records, tid, empty["written_ms"] - 1)["open"]


def test_the_watcher_s_line_is_read_and_its_absence_said():
    line = "killed 27683 at 1796176828609 t-x ongoing since 1796176812193 partitions 1 after 3 asks"
    assert open_transaction.parse_watch(f"watching [t-x]\n{line}\n") == {
        "killed_ms": 1796176828609,
        "id": "t-x",
        "since_ms": 1796176812193,
        "partitions": 1,
        "asks": 3,
    }
    assert "none" in open_transaction.parse_watch("watching [t-x]\nnone ongoing after 9 asks\n")


def test_task_retries_are_what_the_lines_said_and_none_when_they_said_nothing():
    text = (
        "a sentence on stderr\n"
        '{"kind": "waiting", "since": "a", "task_retries": 1}\n'
        '{"kind": "waiting", "since": "a", "task_retries": 3}\n'
        '{"kind": "waiting", "since": "b", "task_retries": 2}\n'
        '{"kind": "status", "batch": \n'
        '{"kind": "outcome", "status": "stopped", "ridden": {"task_retries": 7}}\n'
    )
    lines = json_lines_of(text)
    assert [line["kind"] for line in lines] == ["waiting", "waiting", "waiting", "outcome"]
    assert waited_retries(lines) == 5  # the highest of each wait
    assert task_retries(lines) == 7  # the outcome's, when it says
    assert task_retries(lines[:3]) == 5
    assert task_retries([{"kind": "status"}, {"kind": "outcome", "status": "stopped"}]) is None


def test_mirrormaker_2_s_failed_tasks_are_counted_from_connect_s_words():
    log = (
        "12:00:00.000 [task-thread-MirrorSourceConnector-0] ERROR org.apache.kafka.connect.runtime.WorkerTask - "
        "ExactlyOnceWorkerSourceTask{id=MirrorSourceConnector-0} Task threw an uncaught and unrecoverable exception. "
        "Task is being killed and will not recover until manually restarted\n"
        "12:00:01.000 ERROR WorkerSourceTask{id=MirrorSourceConnector-1} Failed to commit offsets\n"
    )
    assert contenders.failed_tasks(log) == 1


def test_the_selector_names_known_contenders_in_their_order():
    assert contenders.selected("") == ["ours"]
    assert contenders.selected("mm2-eos|ours") == ["ours", "mm2-eos"]
    assert contenders.mirrors(["ours", "mm2"]) == ["exactly_once", "at_least_once", "mm2"]
    with pytest.raises(ValueError, match="unknown contender"):
        contenders.selected("mm3")


def _run(names: list[str], keys: list[str], seed: int, setting: str = "quick", commit: str = "a" * 40) -> dict:
    rows = [{"key": k, "guarantee": contenders.GUARANTEE[k], "case": "f", "round": 1, "lost": seed} for k in keys]
    build = {"commit": commit, "clean": True, "dirty_paths": 0, "date": f"d{seed}", "machine": {}}
    return {"setting": setting, "contenders": names, "seed": seed, "rows": rows, "build": build}


def test_a_run_replaces_the_rows_of_its_contenders_in_its_setting_and_keeps_the_others():
    record = contender_results.merge(None, _run(["ours"], ["exactly_once", "at_least_once"], 1))
    record = contender_results.merge(record, _run(["mm2", "mm2-eos"], ["mm2", "mm2-eos"], 2))
    record = contender_results.merge(record, _run(["ours"], ["exactly_once", "at_least_once"], 3, "long"))
    record = contender_results.merge(record, _run(["mm2"], ["mm2"], 4))
    kept = [(r["setting"], r["contenders"], r["seed"]) for r in record["runs"]]
    assert kept == [("quick", ["ours"], 1), ("quick", ["mm2-eos"], 2), ("long", ["ours"], 3), ("quick", ["mm2"], 4)]
    assert [row["key"] for row in record["runs"][1]["rows"]] == ["mm2-eos"]


def test_the_file_names_one_build_only_when_every_run_measured_one_commit():
    record = contender_results.merge(None, _run(["ours"], ["exactly_once", "at_least_once"], 1))
    record = contender_results.merge(record, _run(["mm2"], ["mm2"], 2))
    assert record["build"]["commit"] == "a" * 40 and record["build"]["date"] == "d2"
    record = contender_results.merge(record, _run(["mm2-eos"], ["mm2-eos"], 3, commit="b" * 40))
    assert "build" not in record


def test_the_quorum_is_lost_while_a_majority_of_its_voters_is_down():
    assert tail.quorum_lost([(0, 100)], 3) == []  # one of three
    assert tail.quorum_lost([(0, 100), (10, 120)], 3) == [(10, 100)]  # two of three, together
    assert tail.quorum_lost([(0, 100), (100, 200)], 3) == []  # one after the other (a rolling restart)
    assert tail.quorum_lost([(0, 50), (10, 60), (100, 150), (110, 140)], 3) == [(10, 50), (110, 140)]
