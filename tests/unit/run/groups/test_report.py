"""``groups``' summary at the scale of an estate (secure_mirror/run/groups/report.py): each group's sync state, the
counts by state, the pages of --json and the text above the table; and --group's patterns
(secure_mirror/run/groups/chosen.py). All from answers built in memory."""

from __future__ import annotations

from secure_mirror.run.groups import report
from secure_mirror.run.groups.chosen import chosen, is_pattern
from secure_mirror.run.groups.decide import GroupOffsets
from secure_mirror.run.groups.session import Observation
from tests.unit.run.groups.test_decide import FACTS, MAPS

O0, S0 = ("orders", 0), ("spread", 0)
# group -> (source offsets, target offsets, target members, source error): one group in each sync state
GROUPS = {
    "app-a": ({O0: 5}, {("src.orders", 0): 5}, 0, None),  # translated to 5 and committed there
    "app-b": ({O0: 5}, {}, 0, None),  # translated, nothing on the target yet
    "app-c": ({O0: 25}, {}, 0, None),  # past what the mirror copied
    "app-d": ({O0: 5}, {("src.orders", 0): 2}, 2, None),  # members on the target
    "bill-e": ({S0: 7}, {}, 0, None),  # records of spread change partition
    "bill-f": ({O0: 5}, {("src.orders", 0): 9}, 0, None),  # the target past the translation
    "bill-g": ({}, {}, 0, None),  # no offset on a mirrored topic
    "bill-h": ({}, {}, 0, "GROUP_AUTHORIZATION_FAILED"),
}
EXPECTED = {
    "app-a": "following",
    "app-b": "to_commit",
    "app-c": "waiting",
    "app-d": "skipped_active",
    "bill-e": "not_translatable",
    "bill-f": "target_ahead",
    "bill-g": "no_offsets",
    "bill-h": "unanswered",
}


def observation(groups: dict = GROUPS) -> Observation:
    """Both clusters' answers for ``groups`` (as :data:`GROUPS` holds them), as ``Session.observe`` returns them."""
    sources, targets = {}, {}
    for group, (offsets, committed, members, error) in groups.items():
        state = "Dead" if not offsets and not error else "Empty"
        sources[group] = GroupOffsets(group, state, 0, {tp: (o, "") for tp, o in offsets.items()}, error)
        committed_offsets = {tp: (o, "") for tp, o in committed.items()}
        targets[group] = GroupOffsets(group, "Stable" if members else "Empty", members, committed_offsets)
    return Observation(sources, targets, FACTS, MAPS, {O0: 20})


def _result(groups: dict = GROUPS) -> report.GroupsOutput:
    seen = observation(groups)
    return report.output(seen, seen.plan(), ("src", "tgt"), ("map", "src.checkpoints.internal"))


def test_each_group_has_one_sync_state_and_the_summary_counts_them():
    result = _result()
    assert {g.group: g.sync for g in result.groups} == EXPECTED
    assert result.summary == report.Summary(
        groups=8,
        attention=6,  # all but following and no_offsets
        source_states={"Dead": 1, "Empty": 7},
        sync_states=report.SyncCounts(**dict.fromkeys(EXPECTED.values(), 1)),
    )
    assert (result.page_size, result.pages, result.after, result.next_after) == (None, 1, None, None)
    assert report.GroupsOutput.model_validate_json(result.model_dump_json()) == result


def test_a_group_takes_its_worst_partitions_state():
    both = _result({"g": ({O0: 5, S0: 7}, {("src.orders", 0): 5}, 0, None)})
    assert both.groups[0].sync == "not_translatable"  # one partition in sync, the other not translatable
    waiting = _result({"g": ({O0: 25, ("orders", 1): 5}, {}, 0, None)})
    assert waiting.groups[0].sync == "waiting"


def test_pages_follow_the_names_after_a_cursor_and_keep_the_whole_summary():
    result = _result()
    first = report.page(result, 3, None)
    assert [g.group for g in first.groups] == ["app-a", "app-b", "app-c"]
    assert (first.page_size, first.pages, first.after, first.next_after) == (3, 3, None, "app-c")
    assert first.summary == result.summary
    second = report.page(result, 3, first.next_after)
    assert [g.group for g in second.groups] == ["app-d", "bill-e", "bill-f"] and second.next_after == "bill-f"
    last = report.page(result, 3, second.next_after)
    assert [g.group for g in last.groups] == ["bill-g", "bill-h"] and last.next_after is None
    assert report.page(result, 8, None).next_after is None  # exactly one full page: nothing after it
    assert [g.group for g in report.page(result, None, "bill").groups] == ["bill-e", "bill-f", "bill-g", "bill-h"]
    assert report.page(result, 3, "zzz").groups == []
    assert report.page(_result({}), 3, None).pages == 0


def test_the_summary_lists_the_groups_that_need_attention_and_all_with_everything():
    result = _result()
    text = report.overview(result, everything=False).splitlines()
    assert text[:5] == [
        "8 groups",
        "  by state on the source: 1 Dead, 7 Empty",
        "  by sync state: 1 following the mirror, 1 to commit (the target behind the translation), 1 waiting for the "
        "mirror, 1 skipped (active members on the target), 1 not translatable, 1 target ahead, 1 with no offset on a "
        "mirrored topic, 1 not answered by a cluster",
        "",
        "6 groups need attention (--all lists every group):",
    ]
    listed = {line.split()[0] for line in text[6:] if line.startswith(("app-", "bill-")) and ":" not in line}
    assert listed == {"app-b", "app-c", "app-d", "bill-e", "bill-f"}  # bill-h, unanswered, has no row: a note
    assert "bill-h: the source did not answer: GROUP_AUTHORIZATION_FAILED" in text
    every = report.overview(result, everything=True).splitlines()
    assert every[4] == "Every group:"
    assert {line.split()[0] for line in every[6:] if line.startswith(("app-", "bill-")) and ":" not in line} == {
        "app-a",
        "app-b",
        "app-c",
        "app-d",
        "bill-e",
        "bill-f",
    }


def test_no_group_needing_attention_says_so():
    quiet = _result({"app-a": GROUPS["app-a"], "bill-g": GROUPS["bill-g"]})
    assert report.overview(quiet, everything=False) == (
        "2 groups\n"
        "  by state on the source: 1 Dead, 1 Empty\n"
        "  by sync state: 1 following the mirror, 1 with no offset on a mirrored topic\n"
        "No group needs attention (--all lists every group)."
    )


def test_a_pattern_is_a_glob_matched_case_sensitively_and_names_stay_as_given():
    assert [is_pattern(n) for n in ("billing-*", "app-?", "[ab]-x", "billing.eu")] == [True, True, True, False]
    listed = ["billing-eu", "billing-us", "Billing-old", "app-1", "app-22"]
    assert chosen(["billing-*"], listed) == (["billing-eu", "billing-us"], [])
    assert chosen(["app-?", "gone", "billing-eu", "billing-*"], listed) == (
        ["app-1", "gone", "billing-eu", "billing-us"],
        [],
    )  # a name is kept as asked (the source says Dead when it has no such group); each group once
    assert chosen(["pay-*", "app-*", "[xy]*"], listed) == (["app-1", "app-22"], ["pay-*", "[xy]*"])
