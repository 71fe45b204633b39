"""The mirror's source under a continuous trigger (jvm/sink MirrorContinuousStream, ContinuousSliceReader,
SlotPositions): a reader's position at any record of a poll is what walking the poll record by record gives, also
after the Java serialization Spark sends it to the driver with; two slots' positions merge into the offsets' JSON; the
plan spreads 1,000 partitions over the tasks by the micro-batches' slots, each read from its start without an end;
``subscribe``'s list becomes a pattern that matches exactly those names; the check for new partitions asks a source
that does not answer once, without riding through.

Run by tests/support/ContinuousCheck.java, compiled with the sink's sources as setup compiles them.
"""

from __future__ import annotations

import json

import pytest

from secure_mirror import paths
from secure_mirror.sandbox.sink_jar import SOURCES
from tests.support import seeds
from tests.support.sink_jar import run_check

pytestmark = pytest.mark.jvm
CHECK = paths.REPO_ROOT / "tests" / "support" / "ContinuousCheck.java"


@pytest.fixture(scope="module")
def printed(tmp_path_factory) -> dict[str, list[str]]:
    """Each line the check printed, by its first word (and, for positions, its step)."""
    seed = seeds.draw_seed("continuous source")
    sources = sorted(SOURCES.glob("*/*.java"))
    folder = tmp_path_factory.mktemp("continuous")
    out = run_check(folder, CHECK, sources, "securemirror.source.ContinuousCheck", str(seed))
    found: dict[str, list[str]] = {}
    for line in out:
        words = line.split()
        key = " ".join(words[:2]) if words[0] in ("positions", "expected") else words[0]
        found[key] = words[2:] if words[0] in ("positions", "expected") else words[1:]
    return found


def test_a_position_at_each_step_of_a_poll_is_the_walked_one_after_serialization(printed):
    steps = [key.split()[1] for key in printed if key.startswith("expected ")]
    assert steps == ["0", "1", "2", "last"]
    for step in steps:
        assert json.loads(printed[f"positions {step}"][0]) == json.loads(printed[f"expected {step}"][0]), step
    walked = json.loads(printed["expected last"][0])["t"]
    start = json.loads(printed["expected 0"][0])["t"]
    assert len(walked) == 5 and walked["1"] == start["1"] and walked["2"] == start["2"]  # no records: unmoved
    assert all(walked[p] > start[p] for p in ("0", "4"))


def test_two_slots_positions_merge(printed):
    merged = json.loads(printed["merged"][0])
    assert merged == {"t": json.loads(printed["expected last"][0])["t"], "u": {"0": 7}}


def test_the_plan_spreads_1000_partitions_over_the_tasks_each_from_its_start_without_an_end(printed):
    count, *slots = printed["slices"]
    assert count == "3"
    fields = [slot.split(":") for slot in slots]
    assert [int(slot) for slot, *_ in fields] == [0, 1, 2]
    assert sum(int(ranges) for _, ranges, _, _ in fields) == 1000
    assert all(ranges == partitions and unbounded == "true" for _, ranges, partitions, unbounded in fields)
    assert all(250 <= int(ranges) <= 420 for _, ranges, _, _ in fields)


def test_a_subscribe_list_matches_exactly_its_names(printed):
    assert printed["pattern"] == ["true", "true", "false", "false", "false", "false"]


def test_the_check_for_new_partitions_asks_once_when_the_source_does_not_answer(printed):
    """Spark's epoch thread asks every epoch; a source that refuses every connection (a real admin client against a
    closed port) is "no change, asked again next time" within about the recheck's 5 s, not a ride of 10 minutes."""
    answer, ms = printed["unanswered"]
    assert answer == "false"
    assert 4_000 <= int(ms) < 15_000, ms
