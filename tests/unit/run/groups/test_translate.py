"""The exact translation rule (secure_mirror/run/groups/translate.py, docs/failover.md): each case on its own, then
generated source logs (committed, aborted and compacted records, markers) mirrored in exactly_once (batches, aborted
sink transactions after a crash, a commit marker after each) and at_least_once (restarts that write records again),
where every offset a group can have committed is translated and a read_committed consumer of the target, starting at
the translation, must read exactly the records the group had not consumed (exactly_once) or all of them
(at_least_once). The seed is printed with a failure (tests/support/seeds.py)."""

from __future__ import annotations

import random
from dataclasses import dataclass, field

import pytest

from secure_mirror.run.groups.offset_map import Segment
from secure_mirror.run.groups.translate import AHEAD, BEFORE, TRANSLATED, Translation, compact, inverted, translate
from tests.support.seeds import seeded


def seg(source: int, target: int, count: int) -> Segment:
    return Segment("t", 0, source, target, count, "src.t")


def test_an_offset_inside_a_segment():
    assert translate(12, [seg(10, 100, 5)]) == Translation(TRANSLATED, 102)
    assert translate(10, [seg(10, 100, 5), seg(15, 106, 5)]) == Translation(TRANSLATED, 100)
    # the marker at 105 stepped over
    assert translate(15, [seg(10, 100, 5), seg(15, 106, 5)]) == Translation(TRANSLATED, 106)


def test_several_copies_translate_to_the_earliest():
    copies = [seg(0, 0, 10), seg(5, 10, 10), seg(5, 30, 3)]  # at_least_once: written again after restarts
    assert translate(7, copies).target_offset == 7
    assert translate(12, copies).target_offset == 17


def test_an_offset_in_a_gap_goes_to_the_end_of_the_segment_before_it():
    gapped = [seg(0, 0, 5), seg(9, 6, 3), seg(20, 10, 1)]  # source 5..8: aborted records and a marker; target 5 too
    assert translate(5, gapped) == Translation(TRANSLATED, 5)  # the marker at 5, then the copy of 9 at 6
    assert translate(8, gapped) == Translation(TRANSLATED, 5)
    assert translate(13, gapped) == Translation(TRANSLATED, 9)
    assert translate(7, [*gapped, seg(0, 40, 5)]).target_offset == 5  # the earliest copy ending before it


def test_a_segment_missing_from_the_map_is_read_again_not_skipped():
    whole = [seg(0, 0, 10), seg(17, 10, 9), seg(26, 19, 13)]  # at_least_once: no markers on the target
    holed = [whole[0], whole[2]]  # the map lost the middle segment
    assert translate(22, whole).target_offset == 15
    assert translate(22, holed).target_offset == 10  # 17..21 read again; never 19, which would skip 22..25


def test_the_end_of_the_map_is_where_the_next_record_goes():
    assert translate(12, [seg(0, 0, 5), seg(9, 6, 3)]) == Translation(TRANSLATED, 9)
    assert translate(10, [seg(0, 0, 10), seg(5, 10, 5)]) == Translation(TRANSLATED, 10)  # the earliest copy's end


def test_past_the_map_the_group_is_ahead_of_the_mirror_unless_the_mirror_read_past_it():
    segments = [seg(0, 0, 5), seg(9, 6, 3)]
    ahead = translate(14, segments)
    assert (ahead.state, ahead.target_offset) == (AHEAD, None)
    assert ahead.reason == "the mirror has copied this partition up to source offset 12"
    assert translate(14, segments, mirrored_to=14) == Translation(TRANSLATED, 9)  # only markers in 12..13
    assert translate(15, segments, mirrored_to=14).state == AHEAD
    assert translate(0, []).state == AHEAD


def test_before_the_first_segment_is_before_the_map():
    before = translate(3, [seg(10, 0, 5)])
    assert (before.state, before.target_offset) == (BEFORE, None)
    assert before.reason == "the offset map starts at source offset 10: records before it were copied before it"


def test_compact_merges_what_continues_on_both_sides_and_nothing_else():
    assert compact([seg(5, 105, 5), seg(0, 100, 5), seg(0, 100, 5), seg(10, 111, 2)]) == [
        seg(0, 100, 10),
        seg(10, 111, 2),
    ]
    assert compact([seg(0, 0, 10), seg(5, 5, 5), seg(10, 10, 2)]) == [seg(0, 0, 12)]


# ---- generated logs ----------------------------------------------------------------------------------------------
@dataclass
class Log:
    """One partition: ``kinds[offset]`` is ``record``, ``aborted``, ``marker`` or ``gone`` (compacted away)."""

    kinds: list[str] = field(default_factory=list)

    def add(self, kind: str, n: int = 1) -> None:
        self.kinds += [kind] * n

    @property
    def visible(self) -> list[int]:
        return [o for o, kind in enumerate(self.kinds) if kind == "record"]


def source_log(rng: random.Random) -> Log:
    log = Log()
    for _ in range(rng.randint(1, 25)):
        step = rng.choice(["plain", "commit", "abort", "gone"])
        n = rng.randint(1, 6)
        if step == "plain":
            log.add("record", n)
        elif step == "gone":
            log.add("gone", n)
        else:
            log.add("record" if step == "commit" else "aborted", n)
            log.add("marker")
    return log


def runs(offsets: list[int], target: int) -> list[Segment]:
    """The segments of records at source ``offsets`` written from target offset ``target`` on, one after another."""
    out: list[Segment] = []
    for source in offsets:
        last = out[-1] if out else None
        if last is not None and last.source_end == source:
            out[-1] = seg(last.source, last.target, last.count + 1)
        else:
            out.append(seg(source, target, 1))
        target += 1
    return out


@dataclass
class Target:
    records: list[tuple[int, int | None]] = field(default_factory=list)  # (target offset, source offset or None)
    segments: list[Segment] = field(default_factory=list)

    @property
    def end(self) -> int:
        return len(self.records)

    def write(self, sources: list[int], committed: bool, marker: bool, mapped: bool) -> None:
        if mapped:
            self.segments += runs(sources, self.end)
        self.records += [(self.end + i, s if committed else None) for i, s in enumerate(sources)]
        if marker:
            self.records.append((self.end, None))

    def read_from(self, offset: int) -> list[int]:
        """What a read_committed consumer starting at ``offset`` reads: the source offsets of the copies."""
        return [source for at, source in self.records if at >= offset and source is not None]


def exactly_once(rng: random.Random, log: Log) -> tuple[Target, int]:
    """The mirror of ``log`` in transactions, stopped after some batches; (target, its source position)."""
    target, visible, position = Target(), log.visible, 0
    while position < len(log.kinds) and rng.random() > 0.05:
        end = min(len(log.kinds), position + rng.randint(1, 12))
        batch = [o for o in visible if position <= o < end]
        if batch and rng.random() < 0.2:  # a crash: the transaction's records (and its map) are aborted
            target.write(batch[: rng.randint(1, len(batch))], committed=False, marker=True, mapped=False)
        if batch:
            target.write(batch, committed=True, marker=True, mapped=True)
        position = end
    return target, position


def at_least_once(rng: random.Random, log: Log) -> tuple[Target, int]:
    """The mirror of ``log`` without transactions, crashing now and then: a batch whose commit was lost is written
    again, its first copy mapped or not."""
    target, visible, position = Target(), log.visible, 0
    while position < len(log.kinds) and rng.random() > 0.05:
        end = min(len(log.kinds), position + rng.randint(1, 12))
        batch = [o for o in visible if position <= o < end]
        crash = rng.random() < 0.3
        written = batch[: rng.randint(0, len(batch))] if crash else batch
        target.write(written, committed=True, marker=False, mapped=not crash or rng.random() < 0.5)
        if not crash:
            position = end
    return target, position


def committed_offsets(log: Log) -> list[tuple[int, int]]:
    """Every (offset a group can have committed, records it consumed): any offset after its k-th record and up to
    its next one (a consumer's position steps over markers and aborted records)."""
    visible = log.visible
    bounds = [-1, *visible, len(log.kinds)]
    return [(o, k) for k in range(len(visible) + 1) for o in range(bounds[k] + 1, bounds[k + 1] + 1)]


@pytest.mark.parametrize("mode", ["exactly_once", "at_least_once"])
def test_generated_logs_translate_with_nothing_skipped_and_in_exactly_once_nothing_read_again(mode):
    rng = seeded(f"translate {mode}")
    for case in range(150):
        log = source_log(rng)
        target, position = (exactly_once if mode == "exactly_once" else at_least_once)(rng, log)
        segments = compact(target.segments) if rng.random() < 0.5 else target.segments
        for offset, consumed in committed_offsets(log):
            result = translate(offset, segments, mirrored_to=position)
            where = f"case {case}: {log.kinds}, segments {segments}, position {position}, committed {offset}"
            if result.state == AHEAD:
                assert not segments or offset > position, where
            elif result.state == BEFORE:
                assert consumed == 0, where  # the map starts at the first record the mirror copied
            else:
                assert result.state == TRANSLATED, where
                read = target.read_from(result.target_offset)
                unread = [o for o in log.visible[consumed:] if o < position]  # later ones are copied later
                if mode == "exactly_once":
                    assert read == unread, where  # 0 read again, 0 skipped
                else:
                    assert set(unread) <= set(read), where  # 0 skipped
            if segments and min(s.source for s in segments) <= offset <= position:
                assert result.state == TRANSLATED, where


def test_compact_answers_as_the_segments_do():
    rng = seeded("compact")
    for _ in range(300):
        log = source_log(rng)
        target, position = at_least_once(rng, log)
        merged = compact(target.segments)
        assert len(merged) <= len(set(target.segments))
        for offset in range(len(log.kinds) + 2):
            assert translate(offset, merged, position) == translate(offset, target.segments, position)


@pytest.mark.parametrize("mode", ["exactly_once", "at_least_once"])
def test_a_map_missing_segments_never_makes_a_group_skip(mode):
    """Should the sink fail to record some segments, a group reads records again but never skips one."""
    rng = seeded(f"translate holes {mode}")
    for case in range(150):
        log = source_log(rng)
        target, position = (exactly_once if mode == "exactly_once" else at_least_once)(rng, log)
        segments = [s for s in target.segments if rng.random() > 0.3]
        for offset, consumed in committed_offsets(log):
            result = translate(offset, segments, mirrored_to=position)
            if result.state == TRANSLATED:
                unread = [o for o in log.visible[consumed:] if o < position]
                read = target.read_from(result.target_offset)
                assert set(unread) <= set(read), f"case {case}: {log.kinds}, {segments}, committed {offset}"


def test_groups_move_back_exactly_through_the_forward_map_read_the_other_way_and_the_way_backs():
    """Failback: A's log mirrored whole to B (exactly_once), applications then writing B; the way back copies only
    what B's producers wrote (the forward's copies carry provenance and are skipped) after A's end. Every offset a
    group can have committed on B translates, through the forward's segments inverted and the way back's own, to
    the A offset from which a read_committed consumer reads exactly what it would have read on B."""
    rng = seeded("translate the way back")
    tried = 0
    for case in range(400):
        a = source_log(rng)
        forward, position = exactly_once(rng, a)
        if position < len(a.kinds):
            continue  # the cut-over drains the forward mirror to the end: only whole copies are failed back
        tried += 1
        promoted = forward.end
        written = source_log(rng)  # what the producers write on B after the promotion
        b = Log([*("record" if src is not None else "marker" for _, src in forward.records), *written.kinds])
        on_b = {at: ("a", src) for at, src in forward.records if src is not None}
        on_b.update({promoted + o: ("b", promoted + o) for o in written.visible})
        on_a: list[tuple[int, tuple | None]] = [(o, ("a", o) if k == "record" else None) for o, k in enumerate(a.kinds)]
        back_segments, at = [], promoted
        while at < len(b.kinds):  # the way back, in transactions, now and then a batch aborted first
            end = min(len(b.kinds), at + rng.randint(1, 12))
            batch = [o for o in b.visible if at <= o < end]
            if batch and rng.random() < 0.2:
                on_a += [(len(on_a) + i, None) for i in range(rng.randint(1, len(batch)) + 1)]
            if batch:
                back_segments += runs(batch, len(on_a))
                on_a += [(len(on_a) + i, on_b[o]) for i, o in enumerate(batch)]
                on_a.append((len(on_a), None))
            at = end
        segments = [*(s for found in inverted(forward.segments).values() for s in found), *back_segments]
        for offset, consumed in committed_offsets(b):
            result = translate(offset, segments, mirrored_to=len(b.kinds))
            where = f"case {case}: A {a.kinds}, B {b.kinds}, segments {segments}, committed {offset}"
            wanted = [on_b[o] for o in b.visible if o >= offset]
            if result.state == BEFORE or (result.state == AHEAD and not segments):
                assert consumed == 0, where  # before anything was mapped, or nothing visible to map at all
                continue
            assert result.state == TRANSLATED, where
            assert [who for off, who in on_a if off >= result.target_offset and who is not None] == wanted, where
    assert tried >= 100, tried
