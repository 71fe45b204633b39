"""The offset map's topic (docs/offset-map.md): the sink is told its name only when groups follow the mirror, and the
driver creates it with a retention that covers the source topics'. That the sink writes it right, and that the
driver creates it, is proven on the sandbox by tests/integration/test_offset_map.py."""

from __future__ import annotations

from secure_mirror.render.spark import SINK_OFFSET_MAP, sink_options
from secure_mirror.run.job.offset_map_topic import (
    DAY_MS,
    FLOOR_MS,
    FOR_EVER,
    SourceRetention,
    retention_ms,
    topic_configs,
    unread_note,
)
from tests.support import profiles as pf

WEEK = 7 * DAY_MS


def test_the_sink_gets_the_map_topic_only_when_groups_follow_the_mirror(tmp_path):
    plain = pf.load(tmp_path)
    assert SINK_OFFSET_MAP not in sink_options(plain)
    groups = pf.load(tmp_path, groups={"include": "orders-.*"})
    assert sink_options(groups)[SINK_OFFSET_MAP] == f"secure_mirror.offset-map.{groups.source.alias}.internal"
    only_excluded = pf.load(tmp_path, groups={"exclude": "x"})  # nothing included: groups are off
    assert SINK_OFFSET_MAP not in sink_options(only_excluded)


def test_retention_covers_the_longest_kept_source_topic_plus_a_day():
    sources = {"a": SourceRetention("delete", WEEK), "b": SourceRetention("delete", 30 * DAY_MS)}
    assert retention_ms(sources) == 31 * DAY_MS
    assert topic_configs(sources) == {"cleanup.policy": "delete", "retention.ms": str(31 * DAY_MS)}


def test_retention_is_at_least_a_week():
    assert retention_ms({"a": SourceRetention("delete", 3_600_000)}) == FLOOR_MS == WEEK
    assert retention_ms({}) == FLOOR_MS


def test_a_source_keeping_records_for_ever_or_unknown_keeps_the_map_for_ever():
    week = SourceRetention("delete", WEEK)
    assert retention_ms({"a": week, "b": SourceRetention("delete", -1)}) == FOR_EVER
    assert retention_ms({"a": week, "b": SourceRetention("compact", WEEK)}) == FOR_EVER
    assert retention_ms({"a": week, "b": SourceRetention("compact, delete", WEEK)}) == WEEK + DAY_MS
    assert retention_ms({"a": week, "b": None}) == FOR_EVER
    assert topic_configs({"b": None})["retention.ms"] == "-1"


def test_unread_retention_is_named_with_the_fix():
    assert unread_note("m", {"a": SourceRetention("delete", WEEK)}) is None
    note = unread_note("m", {name: None for name in "edcba"} | {"f": SourceRetention("delete", WEEK)})
    assert note == (
        "secure-mirror job: created the offset map topic m with retention.ms=-1 (kept for ever): the retention of "
        "a, b, c and 2 more could not be read (DESCRIBE_CONFIGS on the source topics); set its retention.ms to cover "
        "the source topics' retention"
    )
