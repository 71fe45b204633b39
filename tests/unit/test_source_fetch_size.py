"""A task's consumer of the mirror's source asks each partition for ``fetch.max.bytes`` over the task's partitions,
between Kafka's 1 MiB and 16 MiB, unless the profile sets ``max.partition.fetch.bytes`` (kept as it is); across a
declared narrow link (``mirror.link_mbit``) its ``fetch.max.bytes`` is two seconds of the link over the tasks, unless
the profile sets it; its other settings are the options' own (jvm/sink SourceSettings.consumerSettings;
benchmarks/NOTES.md sections 19 and 24, docs/wan.md).

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
LINK = "mirror.link-bytes-per-second"
CASES = {  # case -> (max.partition.fetch.bytes, fetch.max.bytes or "-" when the consumer is left Kafka's)
    "1": (16 * MIB, "-"),  # 50 MiB over 1 partition, at most 16 MiB
    "3": (16 * MIB, "-"),
    "4": (50 * MIB // 4, "-"),
    "10": (5 * MIB, "-"),
    "49": (50 * MIB // 49, "-"),
    "50": (MIB, "-"),  # Kafka's default from about 50 partitions a task
    "500": (MIB, "-"),
    "0": (16 * MIB, "-"),  # no partition: sized as for one (the task opens no consumer)
    "2:fetch.max.bytes=8388608": (4 * MIB, "8388608"),
    "2:fetch.max.bytes=1000": (MIB, "1000"),
    "3:max.partition.fetch.bytes=65536": (65536, "-"),  # the profile's own, at any size
    "500:max.partition.fetch.bytes=33554432": (32 * MIB, "-"),
    # a declared narrow link (mirror.link_mbit): a response is two seconds of the link over the tasks, 1 to 50 MiB
    f"3:{LINK}=1250000": (MIB, "2500000"),  # 10 Mbit/s, tasks not known: one
    f"3:{LINK}=1250000,mirror.tasks=2": (MIB, "1250000"),
    f"3:{LINK}=12500000,mirror.tasks=2": (12_500_000 // 3, "12500000"),  # 100 Mbit/s
    f"3:{LINK}=125000000": (16 * MIB, str(50 * MIB)),  # 1 Gbit/s: Kafka's 50 MiB, as without a link
    f"3:{LINK}=100000": (MIB, str(MIB)),  # below 4 Mbit/s: at least 1 MiB
    f"3:{LINK}=1250000,fetch.max.bytes=8388608": (8388608 // 3, "8388608"),  # the profile's own fetch.max.bytes wins
}


def test_a_tasks_fetch_of_each_partition_is_sized_for_its_partitions_unless_the_profile_sets_it(tmp_path: Path):
    sources = [
        SOURCES / "source" / "SourceSettings.java",
        SOURCES / "sink" / "TokenLogin.java",
        SOURCES / "sink" / "AdminSettings.java",
    ]
    lines = run_check(tmp_path, CHECK, sources, "securemirror.source.FetchSizeCheck", *CASES)
    assert lines == [f"{size} true {fetch}" for size, fetch in CASES.values()]
