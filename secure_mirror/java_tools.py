"""The Java tools the package runs on pyspark's jars, Hadoop's client among them (``jvm/tools``: HdfsCheckpointRead
for lag and verify on a remote checkpoint, CredentialRead for ``jceks://`` secret references), and GroupOffsets (group
sync's reader of many groups, on a kafka-clients jar too).

An installed package runs them from the wheel's ``secure-mirror-tools.jar`` (setup.py's TOOL_SOURCES); a checkout
compiles each once per source version into ``.deps/build`` (the java launcher's single-file mode would compile on
every call: seconds more each time).
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

from secure_mirror import paths
from secure_mirror.errors import EnvironmentNotReady

TOOLS = paths.REPO_ROOT / "jvm" / "tools"
COMPILE_TIMEOUT = 300


def pyspark_jars() -> Path:
    """The installed pyspark's jars folder (Spark's and Hadoop's client jars)."""
    jars = paths.pyspark_jars_dir()
    if jars is None or not jars.is_dir():
        raise EnvironmentNotReady("pyspark is not installed in this Python; run scripts/setup")
    return jars


def class_path(name: str) -> str:
    """The class path running the tool ``name`` (``jvm/tools/<name>.java``) with pyspark's jars."""
    jars = pyspark_jars()
    return f"{paths.tools_jar() or compiled(name, jars)}:{jars}/*"


def kafka_class_path(name: str, local_dir: Path | None) -> str | None:
    """The class path running the tool ``name``, which uses Kafka's Java client: the tool, a kafka-clients jar
    (``paths.kafka_clients_jars``: the profile's jars folder, the checkout's, or Spark's Ivy folder) and pyspark's
    jars (logging, compression codecs); None when no kafka-clients jar is on this machine."""
    clients = paths.kafka_clients_jars(local_dir)
    if not clients:
        return None
    jars = pyspark_jars()
    return f"{paths.tools_jar() or compiled(name, jars, clients[0])}:{clients[0]}:{jars}/*"


def compiled(name: str, jars: Path, extra: Path | None = None) -> Path:
    """The folder of the tool's classes, compiled against ``jars`` (and the jar ``extra``) once per source version
    into .deps/build."""
    source = TOOLS / f"{name}.java"
    digest = hashlib.sha256(source.read_bytes() + str(jars).encode() + str(extra).encode()).hexdigest()[:16]
    folder = paths.deps_dir() / "build" / f"{name}-{digest}"
    if (folder / f"{name}.class").exists():
        return folder
    folder.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{name}-", dir=folder.parent))
    javac = str(Path(shutil.which(paths.java_executable()) or "java").resolve().parent / "javac")
    res = subprocess.run(
        [javac, "-nowarn", "-d", str(staging), "-cp", f"{extra}:{jars}/*" if extra else f"{jars}/*", str(source)],
        capture_output=True,
        text=True,
        timeout=COMPILE_TIMEOUT,
    )
    if res.returncode != 0:
        shutil.rmtree(staging, ignore_errors=True)
        raise EnvironmentNotReady(f"compiling {source} failed: {res.stderr.strip()[-1000:]}")
    try:
        os.rename(staging, folder)
    except OSError:  # compiled at the same time by another process
        shutil.rmtree(staging, ignore_errors=True)
    return folder
