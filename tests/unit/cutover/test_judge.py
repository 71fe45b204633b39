"""The cut-over's pure decisions (secure_mirror/cutover/judge.py) and its report (report.py), fed plain data."""

from __future__ import annotations

import json

import pytest
from markdown_it import MarkdownIt

from secure_mirror.cutover import judge, report, steps
from secure_mirror.cutover import record as records
from secure_mirror.cutover.notes import AclChange, Count, GroupOffset, Notes
from secure_mirror.kafka.acl import Acl
from tests.support.output_schemas import assert_valid

P0, P1 = ("orders", 0), ("orders", 1)


def sample(ends, stable=None, unread=None):
    return judge.Sample(ends=ends, stable=stable or dict(ends), unread=unread or {})


def test_the_fence_holds_once_ends_are_still_and_no_transaction_is_open():
    still = sample({P0: 10, P1: 5})
    assert judge.fence_holds([still, still], quiet=3) == (False, ["2 of 3 readings taken"])
    assert judge.fence_holds([sample({P0: 9, P1: 5}), still, still, still], quiet=3) == (True, [])
    moving = [still, sample({P0: 11, P1: 5}), still]
    assert judge.fence_holds(moving, quiet=3)[1] == ["still written after the fence: orders-0"]
    open_ = [still, still, sample({P0: 10, P1: 5}, stable={P0: 8, P1: 5})]
    assert "a transaction is still open on orders-0" in judge.fence_holds(open_, quiet=3)[1][0]
    lost = [still, still, sample({P0: 10}, unread={P1: "no leader"})]
    assert judge.fence_holds(lost, quiet=3)[1][0] == "could not read orders-1: no leader"


def test_what_is_still_written_names_the_partitions_and_who_may_write():
    samples = [sample({P0: 10, P1: 5}), sample({P0: 12, P1: 5})]
    assert "orders-0 after the fence (no ACL grant lets anyone else write them: a super user" in judge.still_written(
        samples, []
    )
    named = judge.still_written(samples, ["User:* WRITE on TOPIC payments"])
    assert "grants the fence could not remove: User:* WRITE on TOPIC payments" in named


def test_the_drain_waits_for_the_fenced_ends_and_equal_counts():
    ends = {P0: 10, P1: 5}
    assert judge.drain_problems(ends, {P0: 10, P1: 5}, {P0: 10, P1: 5}, {P0: 10, P1: 5}, {}) == []
    assert judge.drain_problems(ends, {P0: 7, P1: None}, {}, {}, {}) == [
        "the mirror is 8 record(s) behind the fenced ends on orders-0, orders-1"
    ]
    assert judge.drain_problems(ends, {P0: 10, P1: 5}, {P0: 10, P1: 5}, {P0: 9, P1: 5}, {}) == [
        "the counts differ: orders-0 10 on the source, 9 on the target"
    ]
    assert judge.drain_problems(ends, {P0: 10, P1: 5}, {P0: 10}, {P0: 10}, {P1: "leader down"}) == [
        "could not count orders-1: leader down"
    ]


@pytest.mark.parametrize(
    ("age", "enabled", "words"),
    [(5.0, True, None), (None, True, "no heartbeat"), (600.0, True, "600 s old"), (None, False, None)],
)
def test_the_heartbeat(age, enabled, words):
    problem = judge.heartbeat_problem(age, 120.0, enabled)
    assert problem is None if words is None else words in problem


def test_the_report_holds_every_step_count_offset_and_binding_in_json_and_markdown():
    key = records.command_key("version: 1\n", records.CUTOVER, ["billing|x"])
    record = records.Record.start(key, steps.names(records.CUTOVER))
    record.begin("check", "2026-11-27T01:00:00.000+00:00")
    record.finish("check", "2026-11-27T01:00:02.000+00:00", {"lag": 0})
    record.begin("fence", "2026-11-27T01:00:02.000+00:00")
    record.fail("fence", "2026-11-27T01:00:09.000+00:00", "records are still written to orders-0")
    binding = Acl(principal="User:app|", operation="WRITE", permission="DENY", resource_type="TOPIC", resource_name="o")
    record.notes = Notes(
        counts=[Count("orders", 0, 10, 10)],
        groups=[GroupOffset("billing|x", "orders", 0, 4, 4)],
        acls=[AclChange("source", "added", "User:admin", binding)],
    )
    assert_valid("cutover", report.json_report(record))
    data = json.loads(report.json_report(record))
    assert [s["status"] for s in data["steps"]] == ["done", "failed", *["not begun"] * 5]
    assert data["acls"][0]["binding"]["principal"] == "User:app|" and not data["complete"]
    html = MarkdownIt("commonmark").enable("table").render(report.markdown_report(record))  # a real reader
    rows = [row for row in html.split("<tr>")[1:]]
    assert [row.count("<td>") + row.count("<th>") for row in rows] == [6] * 8 + [4, 4, 5, 5, 9, 9]
    assert "<td>User:app|</td>" in html and "<td>billing|x</td>" in html and "<td>fence</td>\n<td>failed</td>" in html
