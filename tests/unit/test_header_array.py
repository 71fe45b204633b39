"""The mirror source's headers column in Spark's binary form (jvm/sink HeaderArray) is what Spark's own projection
makes of the generic form, byte for byte, for seeded random headers: keys ASCII, multi-byte and empty, values null,
empty and random, up to 70 headers to a record (past one word of null bits); and it reads back through Spark's
UnsafeArrayData as it went in; and the same holds for the headers as the Kafka client parses them from a record batch,
the form its consumer hands them over in.

Run by tests/support/HeaderArrayCheck.java, compiled with HeaderArray (same package) as setup compiles the sink,
against pyspark's jars and the job's kafka-clients.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from secure_mirror import paths
from secure_mirror.sandbox.sink_jar import SOURCES
from tests.support import seeds
from tests.support.sink_jar import run_check

pytestmark = pytest.mark.jvm
CHECK = paths.REPO_ROOT / "tests" / "support" / "HeaderArrayCheck.java"
RECORDS = 3000


def test_the_sources_headers_are_the_bytes_sparks_projection_makes_of_them(tmp_path: Path):
    seed = seeds.draw_seed("HeaderArrayCheck")
    lines = run_check(
        tmp_path,
        CHECK,
        [SOURCES / "source" / "HeaderArray.java"],
        "securemirror.source.HeaderArrayCheck",
        str(seed),
        str(RECORDS),
    )
    assert lines[:-1] == []  # no record differs or reads back wrong
    total = lines[-1]
    assert total.startswith(f"records {RECORDS}, headers ") and total.endswith(f", equal {RECORDS}"), total
