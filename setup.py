"""The wheel carries the mirror's Java: ``pip wheel .`` / ``python -m build --wheel`` compile jvm/sink (the Spark source,
sink and metrics, exactly as scripts/setup does) and the Java tools the package runs (jvm/tools: JavaClientProbe for
pre-flight, HdfsCheckpointRead for lag and verify on a remote checkpoint, CredentialRead for jceks:// secret
references, CredentialCreate for the sandbox's credential store) against the pinned pyspark's jars and the
kafka-clients jar of Spark's Kafka connector, and put them into ``secure_mirror/_data/jars``. The sink jar also carries
``securemirror.config.HadoopCredentialConfigProvider``, the Kafka config provider over Hadoop's credential stores.

The compile class path is what scripts/setup installed: ``.deps`` beside this file, or the folder SECURE_MIRROR_DEPS
names (``python -m build`` without ``--wheel`` builds from an sdist in a temporary folder: name the checkout's
``.deps`` there). An editable install (scripts/setup's ``pip install -e``) compiles nothing: a checkout uses the jars
setup builds into ``.deps``.
"""

from __future__ import annotations

import glob
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

ROOT = Path(__file__).resolve().parent
SINK_SOURCES = "jvm/sink/securemirror/*/*.java"
TOOL_SOURCES = (
    "jvm/tools/JavaClientProbe.java",
    "jvm/tools/HdfsCheckpointRead.java",
    "jvm/tools/CredentialRead.java",
    "jvm/tools/CredentialCreate.java",
    "jvm/tools/GroupOffsets.java",
)
# As scripts/setup compiles the sink: every lint an error but [path] (manifests of pyspark's jars naming jars it lacks).
SINK_JAVAC = ("-Xlint:all,-path", "-Werror", "--release", "17")
TOOLS_JAVAC = ("-nowarn", "--release", "17")
SETUP_FIRST = (
    "run scripts/setup in this checkout first, or set SECURE_MIRROR_DEPS to the .deps folder of a checkout it set up"
)


class BuildFailure(SystemExit):
    def __init__(self, sentence: str):
        super().__init__(f"secure-mirror wheel: {sentence}")


def compile_classpath(deps: Path) -> tuple[Path, Path]:
    """(pyspark's jars folder, the connector's kafka-clients jar), as scripts/setup left them in ``deps``."""
    clients = sorted((deps / "spark-jars").glob("kafka-clients-*.jar"))
    if not clients:
        raise BuildFailure(f"the Java is compiled against Spark's Kafka connector, but {deps}/spark-jars holds no "
                           f"kafka-clients-*.jar; {SETUP_FIRST}")  # fmt: skip
    recorded = deps / "pyspark-jars"  # scripts/setup: a link to the installed pyspark's jars
    if recorded.is_dir():
        return recorded.resolve(), clients[0]
    try:
        import pyspark
    except ImportError:
        raise BuildFailure(f"pyspark's jars are needed to compile the sink, and {recorded} is missing and pyspark is "
                           f"not importable here; {SETUP_FIRST}") from None  # fmt: skip
    return Path(pyspark.__file__).resolve().parent / "jars", clients[0]


def _jdk(tool: str) -> str:
    """javac or jar: JAVA_HOME's, else the one on PATH."""
    java_home = os.environ.get("JAVA_HOME")
    if java_home and (Path(java_home) / "bin" / tool).exists():
        return str(Path(java_home) / "bin" / tool)
    if shutil.which(tool) is None:
        raise BuildFailure(f"{tool} (a JDK 17 or later) is needed to compile the mirror's Java; install one")
    return tool


def compile_jar(sources: list[str], flags: tuple[str, ...], classpath: str, jar: Path) -> None:
    with tempfile.TemporaryDirectory(prefix="secure-mirror-javac-") as classes:
        res = subprocess.run(
            [_jdk("javac"), *flags, "-d", classes, "-cp", classpath, *sources], capture_output=True, text=True
        )
        if res.returncode != 0:
            raise BuildFailure(f"compiling {jar.name} failed:\n{res.stdout}{res.stderr}")
        jar.parent.mkdir(parents=True, exist_ok=True)
        subprocess.run([_jdk("jar"), "cf", str(jar), "-C", classes, "."], check=True)


class BuildWithJars(build_py):
    """build_py, then the compiled jars into the built package (not into the source tree)."""

    def run(self) -> None:
        super().run()
        if getattr(self, "editable_mode", False):
            return
        pyspark_jars, clients = compile_classpath(Path(os.environ.get("SECURE_MIRROR_DEPS", ROOT / ".deps")))
        out = Path(self.build_lib) / "secure_mirror" / "_data" / "jars"
        sink = sorted(glob.glob(str(ROOT / SINK_SOURCES)))
        if not sink:
            raise BuildFailure(f"no Java sources at {ROOT / SINK_SOURCES}; build from a checkout or its sdist")
        classpath = f"{pyspark_jars}/*:{clients}"
        compile_jar(sink, SINK_JAVAC, classpath, out / "secure-mirror-sink.jar")
        compile_jar(
            [str(ROOT / tool) for tool in TOOL_SOURCES], TOOLS_JAVAC, classpath, out / "secure-mirror-tools.jar"
        )


setup(cmdclass={"build_py": BuildWithJars})
