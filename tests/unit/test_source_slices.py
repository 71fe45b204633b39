"""A batch of the mirror's source is one task per slot; each task's consumer is sized for the partitions that go to
its slot, with records in the batch or not (jvm/sink MirrorStream.slices, Slice.partitions), so a lightly loaded
topic, whose batches hold records of a different set of partitions each time, keeps one consumer per slot instead
of a new login whenever that set changes size (SourceSettings.consumerSettings, Consumers.retireOtherSettings).

Run by tests/support/SliceCheck.java, compiled with the sink's sources as setup compiles them.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from secure_mirror import paths
from secure_mirror.sandbox.sink_jar import SOURCES
from tests.support import seeds
from tests.support.sink_jar import run_check

pytestmark = pytest.mark.jvm
CHECK = paths.REPO_ROOT / "tests" / "support" / "SliceCheck.java"
TOPICS = {"orders": 200, "audit": 7, "t.x": 1}
TASKS = 3


def test_a_slots_partitions_are_the_same_whichever_of_them_have_records(tmp_path: Path):
    seed = seeds.draw_seed("source slices")
    sources = sorted(SOURCES.glob("*/*.java"))
    topics = [f"{name}:{count}" for name, count in TOPICS.items()]
    lines = run_check(tmp_path, CHECK, sources, "securemirror.source.SliceCheck", str(seed), str(TASKS), *topics)
    rows = [tuple(int(field) for field in line.split()) for line in lines]
    assert [row[0] for row in rows] == list(range(TASKS))
    total = sum(TOPICS.values())
    assert sum(row[1] for row in rows) == total  # every partition has records in the first batch
    assert sum(row[2] for row in rows) < total  # about half of them in the second
    for slot, full, sparse, partitions, again in rows:
        assert partitions == again == full, f"slot {slot}: sized for {partitions}, then {again} (seed {seed})"
        assert sparse <= full
