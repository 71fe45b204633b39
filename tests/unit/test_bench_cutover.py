"""The cut-over benchmark's pure parts (benchmarks/cutover/scenario.py, report.py): the seeded scenario, the step
times read from a cut-over report, the records a group reads again or skips on the target, and the summary over the
groups."""

from __future__ import annotations

import random

from benchmarks.cutover import report
from benchmarks.cutover import scenario as cutover


def test_the_scenario_is_seeded_and_commits_within_each_partition():
    plan = cutover.scenario(random.Random(7))
    assert plan == cutover.scenario(random.Random(7))
    assert len(plan["records"]) == 20 and len(plan["committed"]) == 50
    for topics in plan["committed"].values():
        assert 1 <= len(topics) <= 3
        for topic, positions in topics.items():
            assert len(positions) == len(plan["records"][topic])
            assert all(0 <= at <= n for at, n in zip(positions, plan["records"][topic], strict=True))
    assert set(plan["producer"].values()) == {f"p{i}" for i in range(cutover.PRODUCERS)}
    assert set(plan["reader"]) == set(plan["committed"])


def test_step_times_come_from_the_report_and_the_end_of_the_drain():
    def step(name, started, ended):
        return {
            "name": name,
            "started": f"2026-11-27T05:00:{started}+00:00",
            "ended": f"2026-11-27T05:00:{ended}+00:00",
        }

    report = {
        "steps": [
            step("check", "00.000", "10.000"),
            step("fence", "10.000", "14.500"),
            step("drain", "14.500", "20.000"),
            step("sync", "20.000", "22.000"),
            step("stop", "22.000", "30.000"),
            step("promote", "30.000", "31.000"),
            step("report", "31.000", "31.250"),
        ]
    }
    times = cutover.step_times(report)
    assert times["steps"]["fence"] == 4.5 and times["steps"]["stop"] == 8.0
    assert times["total"] == 31.25
    assert times["after_drain"] == 11.25  # sync, stop, promote, report


def test_a_step_not_ended_has_no_time():
    report = {"steps": [{"name": "check", "started": "2026-11-27T05:00:00+00:00", "ended": None}]}
    assert cutover.step_times(report) == {"steps": {"check": None}, "total": None, "after_drain": None}


SOURCE = {"t": [(0, o, f"v{o}".encode()) for o in range(10)] + [(1, o, f"w{o}".encode()) for o in range(4)]}
# the target copy: partition 0 with a transaction marker after the 5th record (offsets shift by one from there)
TARGET = {
    "t": [(0, o if o < 5 else o + 1, f"v{o}".encode()) for o in range(10)]
    + [(1, o, f"w{o}".encode()) for o in range(4)]
}
ENDS = {"t": {0: 11, 1: 4}}


def test_an_exact_translation_reads_nothing_again_and_skips_nothing():
    counts = cutover.group_reads({"t": [7, 2]}, {"t": {0: 8, 1: 2}}, SOURCE, TARGET, ENDS)
    assert (counts["re_read"], counts["skipped"], counts["unconsumed"], counts["read"]) == (0, 0, 5, 5)
    assert counts["without_target_offset"] == counts["out_of_range"] == []


def test_an_offset_behind_reads_again_and_one_ahead_skips():
    behind = cutover.group_reads({"t": [7, 2]}, {"t": {0: 2, 1: 2}}, SOURCE, TARGET, ENDS)
    assert (behind["re_read"], behind["skipped"]) == (5, 0)  # v2..v6 consumed on the source, read again
    ahead = cutover.group_reads({"t": [7, 2]}, {"t": {0: 10, 1: 4}}, SOURCE, TARGET, ENDS)
    assert (ahead["re_read"], ahead["skipped"]) == (0, 2 + 2)  # v7, v8 and w2, w3 never read


def test_a_missing_or_out_of_range_offset_is_listed_not_counted():
    counts = cutover.group_reads({"t": [7, 2]}, {"t": {0: 12}}, SOURCE, TARGET, ENDS)
    assert counts["out_of_range"] == ["t-0"] and counts["without_target_offset"] == ["t-1"]
    assert counts["unconsumed"] == 0


def test_the_summary_adds_the_groups_and_names_those_that_re_read():
    exact = cutover.group_reads({"t": [7, 2]}, {"t": {0: 8, 1: 2}}, SOURCE, TARGET, ENDS)
    behind = cutover.group_reads({"t": [7, 2]}, {"t": {0: 2}}, SOURCE, TARGET, ENDS)
    total = cutover.summed({"a": exact, "b": behind})
    assert total["re_read"] == 5 and total["skipped"] == 0 and total["unconsumed"] == 8
    assert total["groups_re_reading"] == ["b"] and total["partitions_without_target_offset"] == 1


def test_the_synced_offsets_settle_at_their_last_change_after_the_drain():
    history = [(1.0, {"g": 1}), (3.0, {"g": 2}), (5.0, {"g": 2}), (7.0, {"g": 3}), (9.0, {"g": 3})]
    assert cutover.last_change(history, 2.0) == 7.0
    assert cutover.last_change(history[:1], 2.0) == 2.0  # nothing changed: settled at the drain's end


def test_the_manual_procedure_counts_a_command_per_principal():
    steps = cutover.manual_steps(4, 5)
    assert sum(s["by_hand"] for s in steps) == 4 + 1 + 1 + 1 + 4 + 5


def test_the_markdown_gives_each_contender_its_figures_or_its_error():
    reads = {"total": cutover.summed({"a": cutover.group_reads({"t": [7, 2]}, {"t": {0: 2}}, SOURCE, TARGET, ENDS)})}
    result = {
        "command": "scripts/bench --cutover --seed 1",
        "seed": 1,
        "runs": 1,
        "machine": {"cpus": 2},
        "load_average_1min": {"start": 1.0, "end": 2.0},
        "scenario": {
            "topics": 20,
            "partitions": 60,
            "records": 2400,
            "groups": 50,
            "group_partitions": 300,
            "producers": 4,
            "readers": 5,
        },
        "contenders": {
            "secure_mirror": {
                "times": {"steps": {"drain": 2.0, "sync": 9.0}, "total": 31.8, "after_drain": 11.8},
                "steps_by_hand": [{"step": "secure-mirror cutover", "by_hand": 1}],
                "reads": reads,
            },
            "mirrormaker2": {
                "marks_seconds": {"fence": 0.1, "drain": 4.7, "grant_consumers": 135.1},
                "offsets_settled_seconds": 111.9,
                "after_drain": {"operator": 130.4, "oracle": 116.1},
                "steps_by_hand": cutover.manual_steps(4, 5),
                "reads": reads,
            },
        },
    }
    text = report.markdown(result)
    assert "| secure_mirror | 11.8 | 31.8 | 1 | 5 | 0 | 3 | 1 of 1 | 1 |" in text
    assert "| mirrormaker2 | 130.4 (oracle 116.1) | 135.1 | 16 |" in text
    result["contenders"]["mirrormaker2"] = {"error": "RuntimeError: not caught up"}
    assert "| mirrormaker2 | error: RuntimeError: not caught up |" in report.markdown(result)
