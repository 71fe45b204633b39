"""A task's consumer of the mirror's source asks each partition for ``fetch.max.bytes`` over the task's partitions,
between Kafka's 1 MiB and 16 MiB, unless the profile sets ``max.partition.fetch.bytes`` (kept as it is); its other
settings are the options' own (jvm/sink SourceSettings.consumerSettings; benchmarks/NOTES.md section 19).

Run by tests/support/FetchSizeCheck.java, compiled with SourceSettings (same package) as setup compiles the sink.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from secure_mirror import paths
from secure_mirror.sandbox.sink_jar import SOURCES
from tests.support.sink_jar import run_check

pytestmark = pytest.mark.jvm
CHECK = paths.REPO_ROOT / "tests" / "support" / "FetchSizeCheck.java"
MIB = 1_048_576
CASES = {
    "1": 16 * MIB,  # 50 MiB over 1 partition, at most 16 MiB
    "3": 16 * MIB,
    "4": 50 * MIB // 4,
    "10": 5 * MIB,
    "49": 50 * MIB // 49,
    "50": MIB,  # Kafka's default from about 50 partitions a task
    "500": MIB,
    "0": 16 * MIB,  # no partition: sized as for one (the task opens no consumer)
    "2:fetch.max.bytes=8388608": 4 * MIB,
    "2:fetch.max.bytes=1000": MIB,
    "3:max.partition.fetch.bytes=65536": 65536,  # the profile's own, at any size
    "500:max.partition.fetch.bytes=33554432": 32 * MIB,
}


def test_a_tasks_fetch_of_each_partition_is_sized_for_its_partitions_unless_the_profile_sets_it(tmp_path: Path):
    sources = [
        SOURCES / "source" / "SourceSettings.java",
        SOURCES / "sink" / "TokenLogin.java",
        SOURCES / "sink" / "AdminSettings.java",
    ]
    lines = run_check(tmp_path, CHECK, sources, "securemirror.source.FetchSizeCheck", *CASES)
    assert lines == [f"{size} true" for size in CASES.values()]
