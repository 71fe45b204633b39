"""Faster starts for the tests' Spark jobs (test harness only; the product writes and uses an archive only for its
own ``run``, and only the quick compiler here is the tests' alone).

Most of a test job's time is its JVM starting: one ``run --until-caught-up`` spent about 30 s of CPU, two thirds of it
loading and JIT-compiling Spark's classes. The tests' jobs are short-lived, so their spark-submit JVM gets:

- ``-XX:TieredStopAtLevel=1``: the quick compiler only (short jobs never repay the optimising compiler's CPU);
- a class-data-sharing archive of the classes a job loads (JDK 17's dynamic archive, ``-XX:SharedArchiveFile``),
  dumped once per machine by one real job on the sandbox and kept under ``.deps/test-jvm`` (named by what it depends
  on: the JDK and Spark's jars; the JVM itself ignores an archive that no longer matches its class path; a new dump
  removes the older archives). The product's own cache writes it (``secure_mirror/run/class_cache.py``); the tests
  name it in ``SPARK_SUBMIT_OPTS`` so that every spark-submit a test starts, the rendered scripts' too, maps it;
- the JVM's own log lines on stderr (``-Xlog``): the JVM writes its warnings, the archive's too, to stdout by default,
  where ``run --json`` keeps its lines.

Measured on this machine (one job, 2 CPUs, quiet): 21 s and 30 CPU s as shipped; 19 s and 20 CPU s with the quick
compiler; 12 s and 12 CPU s with the archive too. They go through ``SPARK_SUBMIT_OPTS``, which Spark's launcher puts on
the spark-submit JVM (the driver in local and client mode; the rendered YARN script keeps them before its own
krb5.conf option); an executor JVM of a standalone or YARN job starts as shipped.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import yaml

from secure_mirror import paths
from secure_mirror.run import class_cache

QUICK_COMPILER = "-XX:TieredStopAtLevel=1"
LOG_TO_STDERR = ("-Xlog:disable", "-Xlog:all=warning:stderr")
ARCHIVE_TIMEOUT = 240.0


def _archive_path() -> Path | None:
    """Where this machine's archive is, named as the product names its own (``class_cache.installation``: the JDK and
    Spark's jars; None: no Spark here)."""
    _, name = class_cache.installation(os.environ)
    return paths.deps_dir() / "test-jvm" / name if name else None


def _dump(sandbox, archive: Path, folder: Path) -> str | None:
    """One job over no topic (Spark's context, the Kafka admin clients, the sink's start) writes the classes it loaded
    into ``archive``, with the product's own class-data cache (``secure_mirror/run/class_cache.py``) in ``archive``'s
    folder; returns why it could not, or None."""
    data = yaml.safe_load(sandbox.profile_path.read_text())
    data["mirror"]["topics"] = {"include": "secure-mirror-jvm-warm-up"}  # matches no topic of any test
    data["mirror"]["checkpoint_location"] = str(folder / "checkpoint")
    profile = folder / "profile.yaml"
    profile.write_text(yaml.safe_dump(data, sort_keys=False))
    env = {key: value for key, value in os.environ.items() if key != "SPARK_SUBMIT_OPTS"}
    env[class_cache.CACHE_VARIABLE] = str(archive.parent)  # the product writes it there, under the same name
    command = [sys.executable, "-m", "secure_mirror", "run", str(profile), "--until-caught-up", "--skip-preflight"]
    command += ["--accept-unverified", "--run-dir", str(folder / "run")]
    try:
        done = subprocess.run(
            command, env=env, capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=ARCHIVE_TIMEOUT
        )
    except subprocess.TimeoutExpired:
        return f"the warm-up job did not end within {ARCHIVE_TIMEOUT:.0f} s"
    if done.returncode != 0 or not archive.exists():
        return f"the warm-up job ended with {done.returncode}: {(done.stderr or done.stdout).strip()[-500:]}"
    return None


def without_archive(options: str) -> list[str]:
    """The tests' ``SPARK_SUBMIT_OPTS`` words but their archive option: a run given them uses the product's own class
    cache (``class_cache.CALLERS_OWN`` would leave it alone)."""
    return [word for word in options.split() if not word.startswith(class_cache.CALLERS_OWN)]


def spark_submit_opts(sandbox, folder: Path) -> tuple[str, str]:
    """The options for the tests' spark-submit JVMs, and a sentence on what they hold (said at the run's end)."""
    options = [QUICK_COMPILER, *LOG_TO_STDERR]
    archive = _archive_path()
    if archive is None:
        return " ".join(options), "quick compiler only (no pyspark jars found)"
    said = f"class-data archive {archive}"
    if not archive.exists():
        archive.parent.mkdir(mode=0o700, parents=True, exist_ok=True)  # the product maps only a private cache
        why = _dump(sandbox, archive, folder)
        said = f"quick compiler only ({why})" if why else f"class-data archive {archive} (dumped now)"
    if archive.exists():
        options.append(f"-XX:SharedArchiveFile={archive}")
    return " ".join(options), said


@contextmanager
def quick_spark_starts(sandbox, folder: Callable[[], Path]) -> Iterator[None]:
    """``SPARK_SUBMIT_OPTS`` set to the tests' quick starts (:func:`spark_submit_opts`, in the folder ``folder()``
    makes) for the jobs run against ``sandbox`` meanwhile, unless the environment already sets it."""
    import pytest

    with pytest.MonkeyPatch.context() as patch:
        if "SPARK_SUBMIT_OPTS" not in os.environ:
            patch.setenv("SPARK_SUBMIT_OPTS", spark_submit_opts(sandbox, folder())[0])
        yield
