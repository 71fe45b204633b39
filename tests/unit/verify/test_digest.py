"""The verify digests: order-independent, constant size, and able to list a few differences."""

from __future__ import annotations

import random

from secure_mirror.verify.compare import plan_ranges
from secure_mirror.verify.digest import PRIME, Digest, difference, record_hash
from tests.support import profiles as pf


def _hashes(n: int) -> list[int]:
    return [
        record_hash(f"k{i}".encode(), None if i % 4 == 0 else f"v{i}".encode(), [("h", str(i).encode())])
        for i in range(n)
    ]


def test_order_does_not_matter_and_size_is_fixed():
    items = _hashes(5000)
    a, b = Digest(), Digest()
    for h in items:
        a.add(h)
    for h in random.Random(1).sample(items, len(items)):
        b.add(h)
    assert a.same_as(b) and difference(a, b) == {}
    assert len(a.counts) == len(Digest().counts)


def test_fields_are_framed_and_provenance_headers_are_ignored():
    assert record_hash(b"ab", b"c", None) != record_hash(b"a", b"bc", None)
    assert record_hash(None, b"", None) != record_hash(b"", b"", None)
    plain = record_hash(b"k", b"v", [("h", b"1")])
    assert record_hash(b"k", b"v", [("h", b"1"), ("secure-mirror.offset", b"7")], "secure-mirror.") == plain
    assert record_hash(b"k", b"v", [("h", None)]) != record_hash(b"k", b"v", [("h", b"")])


def test_difference_lists_missing_extra_and_duplicated():
    items = _hashes(2000)
    source, target = Digest(), Digest()
    for h in items:
        source.add(h)
    for h in items[1:]:  # items[0] missing
        target.add(h)
    target.add(items[5])  # duplicated
    extra = record_hash(b"intruder", b"x", None)
    target.add(extra)
    assert difference(source, target) == {items[0] % PRIME: 1, items[5] % PRIME: -1, extra % PRIME: -1}


def test_too_many_differences_are_reported_as_unlisted():
    source = Digest(cells=30)
    for h in _hashes(500):
        source.add(h)
    assert difference(source, Digest(cells=30)) is None


def test_plan_ranges_per_partition_when_counts_match_else_per_topic(tmp_path):
    committed = {("a", 0): 10, ("a", 1): 7, ("b", 0): 5, ("b", 1): 5}
    source = {("a", 0): (2, 12), ("a", 1): (0, 7), ("b", 0): (0, 5), ("b", 1): (0, 5), ("new", 0): (0, 3)}
    target = {("src.a", 0): (0, 10), ("src.a", 1): (0, 7), ("src.b", 0): (0, 10)}
    plan = plan_ranges(pf.load(tmp_path / "auto"), committed, {("a", 0): 1}, source, target)
    assert ("a", 0, 2, 10, ("a", 0)) in plan.source_ranges  # starts at the low watermark when it moved on
    assert ("b", 1, 0, 5, ("b", None)) in plan.source_ranges  # 2 source partitions, 1 target: whole topic
    assert ("src.b", 0, 0, 10, ("b", None)) in plan.target_ranges
    assert plan.not_mirrored == [{"topic": "new", "partition": 0, "records": 3}]
    unkept = plan_ranges(pf.load(tmp_path / "unkept", keep_partition=False), committed, {}, source, target)
    assert {g for *_r, g in unkept.source_ranges} == {("a", None), ("b", None)}


def test_a_partition_that_could_not_be_read_is_left_out_and_named_never_a_match(tmp_path):
    """With a broker down, the group of a partition that could not be read on either side is not compared: it is
    listed as unread, and the result is not ok even when everything compared matched."""
    from secure_mirror.verify.compare import VerifyResult

    committed = {("a", 0): 10, ("a", 1): 7, ("b", 0): 5}
    source = {("a", 0): (0, 10), ("b", 0): (0, 5)}
    target = {("src.a", 0): (0, 10), ("src.a", 1): (0, 7)}
    plan = plan_ranges(
        pf.load(tmp_path / "auto"),
        committed,
        {},
        source,
        target,
        {("a", 1): "no leader (LEADER_NOT_AVAILABLE)"},
        {("src.b", 0): "its leader, broker 3, did not answer"},
    )
    assert {g for *_r, g in plan.source_ranges} == {g for *_r, g in plan.target_ranges} == {("a", 0)}
    assert plan.unread == [
        {
            "topic": "a",
            "partition": 1,
            "target_topic": "src.a",
            "side": "source",
            "why": "no leader (LEADER_NOT_AVAILABLE)",
        },
        {
            "topic": "b",
            "partition": 0,
            "target_topic": "src.b",
            "side": "target",
            "why": "its leader, broker 3, did not answer",
        },
    ]
    assert plan.partition_counts == []  # an unread partition still counts as one of its topic's
    result = VerifyResult([], [], 3, unread=plan.unread)
    assert not result.ok
    text = result.text()
    assert "UNREAD   a[1] -> src.a: the source partition could not be read (no leader (LEADER_NOT_AVAILABLE))" in text
    assert text.splitlines()[-1].startswith("verify: INCOMPLETE: ")
