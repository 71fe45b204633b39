"""The mirror source's headers column in Spark's binary form (jvm/sink HeaderArray) is what Spark's own projection
makes of the generic form, byte for byte, for seeded random headers: keys ASCII, multi-byte and empty, values null,
empty and random, up to 70 headers to a record (past one word of null bits); and it reads back through Spark's
UnsafeArrayData as it went in.

Run by tests/support/HeaderArrayCheck.java, compiled with HeaderArray (same package) as setup compiles the sink,
against pyspark's jars and the job's kafka-clients.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pyspark
import pytest

from secure_mirror import paths
from tests.support import seeds
from tests.support.sink_jar import JAVAC_LINT, SOURCES

pytestmark = pytest.mark.jvm
CHECK = paths.REPO_ROOT / "tests" / "support" / "HeaderArrayCheck.java"
RECORDS = 3000


def test_the_sources_headers_are_the_bytes_sparks_projection_makes_of_them(tmp_path: Path):
    kafka_clients = next((paths.deps_dir() / "spark-jars").glob("kafka-clients-*.jar"))
    class_path = f"{Path(pyspark.__file__).parent / 'jars' / '*'}:{kafka_clients}"
    javac = str(Path(paths.java_executable()).with_name("javac"))
    sources = [str(SOURCES / "source" / "HeaderArray.java"), str(CHECK)]
    built = subprocess.run(
        [javac, *JAVAC_LINT, "--release", "17", "-d", str(tmp_path), "-cp", class_path, *sources],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert built.returncode == 0, built.stderr[-4000:]
    seed = seeds.draw_seed("HeaderArrayCheck")
    ran = subprocess.run(
        [paths.java_executable(), "-cp", f"{tmp_path}:{class_path}", "securemirror.source.HeaderArrayCheck"]
        + [str(seed), str(RECORDS)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert ran.returncode == 0, ran.stderr[-4000:]
    lines = ran.stdout.splitlines()
    assert lines[:-1] == []  # no record differs or reads back wrong
    total = lines[-1]
    assert total.startswith(f"records {RECORDS}, headers ") and total.endswith(f", equal {RECORDS}"), total
