"""The mirror's sink (jvm/sink) as this checkout has it, for the tests and benchmarks that run the job.

``scripts/setup`` compiles jvm/sink into ``.deps/spark-jars/secure-mirror-sink.jar`` and stamps it with a hash of
the sources (the same recipe as below). When this checkout's sources differ from what was compiled (a branch that
changes the sink, a ``.deps`` shared between worktrees), :func:`sink_conf` compiles them as setup does into a folder of
the test session or the benchmark and returns the Spark configuration that puts that jar, with kafka-clients, before
the connector jars (``spark.driver.extraClassPath``: the driver's class path, which is also the executors' with a
local master). The tests' check programs compile against :data:`SOURCES` the same way (tests/support/sink_jar.py).
"""

from __future__ import annotations

import hashlib
import subprocess
from pathlib import Path

from secure_mirror import paths

SOURCES = paths.REPO_ROOT / "jvm" / "sink" / "securemirror"  # its packages: sink, source and metrics
# As scripts/setup compiles it: every lint an error but [path] (third-party manifests naming jars pyspark lacks).
JAVAC_LINT = ("-Xlint:all,-path", "-Werror")
VENV_STAMP = paths.REPO_ROOT / ".venv" / ".secure-mirror-requirements"  # scripts/setup's venv_stamp


def job_kafka_clients() -> Path:
    """The kafka-clients jar the job's Spark runs with (setup resolves it beside Spark's Kafka connector)."""
    return next((paths.deps_dir() / "spark-jars").glob("kafka-clients-*.jar"))


def _stamp() -> str:
    """scripts/setup's stamp of the sink: the sources, then the connector's stamp and the virtualenv's requirements
    stamp (kept in the virtualenv itself: ``.venv/.secure-mirror-requirements``)."""
    stamps = paths.deps_dir() / "stamps"
    data = b"".join(p.read_bytes() for p in sorted(SOURCES.glob("*/*.java")))
    data += (stamps / "mvn-spark-connector").read_bytes() + VENV_STAMP.read_bytes()
    return hashlib.sha256(data).hexdigest()[:16]


def sink_conf(folder: Path) -> dict[str, str]:
    """Spark configuration making the job use this checkout's sink: empty when setup's jar is built from it."""
    installed = paths.deps_dir() / "stamps" / "sink"
    if installed.exists() and installed.read_text() == _stamp():
        return {}
    import pyspark

    kafka_clients = job_kafka_clients()
    build, jar = folder / "classes", folder / "secure-mirror-sink.jar"
    pyspark_jars = Path(pyspark.__file__).parent / "jars"
    javac = ["javac", *JAVAC_LINT, "--release", "17", "-d", str(build)]
    subprocess.run(
        [*javac, "-cp", f"{pyspark_jars}/*:{kafka_clients}", *sorted(str(p) for p in SOURCES.glob("*/*.java"))],
        check=True,
        capture_output=True,
    )
    subprocess.run(["jar", "cf", str(jar), "-C", str(build), "."], check=True, capture_output=True)
    return {"spark.driver.extraClassPath": f"{jar}:{kafka_clients}"}
