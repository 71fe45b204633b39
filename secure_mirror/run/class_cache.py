"""The driver JVM's class-data archive: a faster start for ``secure-mirror run`` when the driver runs here.

A good part of a job's first seconds is its JVM loading and checking Spark's classes. From JDK 13 a JVM can write the
classes a run loaded into an archive when it exits (``-XX:ArchiveClassesAtExit``) and map that archive when it next
starts (``-XX:SharedArchiveFile``). ``run`` does that for the spark-submit JVM, which is the driver in local and client
mode (and the executors too in local mode); a driver in a cluster's container and an executor elsewhere start as
shipped.

- **Where:** ``$SECURE_MIRROR_CLASS_CACHE``, else ``$XDG_CACHE_HOME/secure-mirror/jvm``, else
  ``~/.cache/secure-mirror/jvm``; a 0700 folder. ``SECURE_MIRROR_CLASS_CACHE=off`` turns it off.
- **Which:** one archive per JDK and Spark installation (its name is a hash of the JDK's ``release`` file, the java
  executable, and the names, sizes and times of Spark's jars). The JVM itself refuses an archive that does not match
  its class path, and starts without it. A new archive removes the older ones beside it (about 170 MB each).
- **When it is written:** at the exit of a run that has no archive yet, into a file named by the run's process id; it
  is kept only when the job ended well (caught up, or stopped on request), so an archive never comes from a job that
  failed at its start. A mirror that never stops never writes one.
- **What it holds:** class metadata of the classes the JVM's own loaders loaded (JDK, Spark and Scala from Spark's
  jars folder); the jars Spark adds later (the connector, the sink) and every object the job made are not in it.
  No secret is: ``tests/reliability/test_secret_leaks.py`` searches a written archive for the run's secrets.
- **Private:** a folder or archive that is a symbolic link, another user's, or writable by others is not used (whoever
  can write it could hand the driver, which holds the mirror's credentials, classes of their own).
- **Left alone:** a run whose ``SPARK_SUBMIT_OPTS`` or the profile's driver JVM options already name an archive or a
  sharing mode (``-XX:SharedArchiveFile``, ``-XX:ArchiveClassesAtExit``, ``-Xshare``), and a JDK older than 13.

The archive's log lines leave stdout, where ``run --json`` keeps its lines: a mapping's warnings go to stderr, the job
log, and a writing's (one for each class it cannot keep) nowhere; the caller's own ``-Xlog`` outputs stay.
Measured (benchmarks/results/scale-cds-experiment-1000.md, an archive from a job over no topic): first record 8.7 s
against 11.6 s, and 0.76x MirrorMaker 2's CPU per record against 0.88x.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import stat
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from secure_mirror import folders, paths
from secure_mirror.errors import BadInputError
from secure_mirror.profile.jvm_options import split_options
from secure_mirror.profile.models import Profile

CACHE_VARIABLE = "SECURE_MIRROR_CLASS_CACHE"
OFF = "off"
CALLERS_OWN = ("-XX:SharedArchiveFile", "-XX:ArchiveClassesAtExit", "-Xshare")
# The archive's own log lines leave stdout, where ``run --json`` keeps its lines; the caller's other -Xlog outputs stay.
# Mapping: its warnings (an archive that no longer matches) go to stderr, the job log; writing: none (one line for
# each class it cannot keep, about a thousand).
QUIET_ON_STDOUT = "-Xlog:cds*=off:stdout"
MAPPING_LOG = (QUIET_ON_STDOUT, "-Xlog:cds=warning:stderr")
WRITING_LOG = (QUIET_ON_STDOUT,)
FIRST_DYNAMIC_ARCHIVE_JDK = 13
DUMP_GRACE_SECONDS = 600.0  # a dump this recent may still be written by another run: never removed


@dataclass(frozen=True)
class Plan:
    """What a run adds to ``SPARK_SUBMIT_OPTS`` (nothing: ``options`` empty), and why, in a few words."""

    said: str
    options: tuple[str, ...] = ()
    archive: Path | None = None
    dump: Path | None = None  # the file the JVM writes at exit, kept as ``archive`` when the job ended well


def cache_folder(env: Mapping[str, str]) -> Path | None:
    """The archives' folder, or None when the user turned them off."""
    named = env.get(CACHE_VARIABLE)
    if named:
        return None if named == OFF else Path(named).expanduser()
    base = env.get("XDG_CACHE_HOME") or str(Path(env.get("HOME") or Path.home()) / ".cache")
    return Path(base) / "secure-mirror" / "jvm"


def java_major(release_text: str) -> int | None:
    """The JDK's major version from its ``release`` file (``JAVA_VERSION="17.0.9"``, ``"1.8.0_392"``), or None."""
    found = re.search(r'^JAVA_VERSION="(\d+)(?:\.(\d+))?', release_text, re.MULTILINE)
    if not found:
        return None
    major = int(found.group(1))
    return int(found.group(2) or 0) if major == 1 else major


def archive_name(java: str, release_text: str, spark_home: str, jars: list[tuple[str, int, int]]) -> str:
    """The archive's file name for this JDK and these jars (name, size, modification time in ns)."""
    listing = [f"{name}:{size}:{mtime}" for name, size, mtime in sorted(jars)]
    key = hashlib.sha256("\n".join([java, release_text, spark_home, *listing]).encode()).hexdigest()[:16]
    return f"spark-{key}.jsa"


def callers_own(options_text: str) -> str | None:
    """The caller's own class-sharing option among JVM options, or None."""
    return next((word for word in split_options(options_text) if word.startswith(CALLERS_OWN)), None)


def decide(
    *,
    driver_here: bool,
    callers_options: list[str],
    folder: Path | None,
    major: int | None,
    name: str | None,
    archive_exists: bool,
    pid: int,
) -> Plan:
    """The plan for one start (pure: every fact asked beforehand)."""
    if not driver_here:
        return Plan("not used: the driver runs in the cluster")
    own = next((word for text in callers_options if (word := callers_own(text))), None)
    if own:
        return Plan(f"not used: the caller's JVM options set {own.split('=')[0]}")
    if folder is None:
        return Plan(f"off ({CACHE_VARIABLE}={OFF})")
    if major is None or name is None:
        return Plan("not used: the JDK's version or Spark's jars were not found")
    if major < FIRST_DYNAMIC_ARCHIVE_JDK:
        return Plan(f"not used: JDK {major} cannot write one (JDK {FIRST_DYNAMIC_ARCHIVE_JDK} or later can)")
    archive = folder / name
    if archive_exists:
        return Plan(f"{archive}", (f"-XX:SharedArchiveFile={archive}", *MAPPING_LOG), archive)
    dump = folder / f"{archive.stem}.{pid}.partial"
    return Plan(
        f"{archive} (written when this job ends well)",
        (f"-XX:ArchiveClassesAtExit={dump}", *WRITING_LOG),
        archive,
        dump,
    )


def _release(java: str) -> str:
    """The ``release`` file of the JDK whose java is ``java`` (empty when there is none)."""
    located = java if os.sep in java else shutil.which(java)
    if not located:
        return ""
    try:
        return (Path(located).resolve().parent.parent / "release").read_text(errors="replace")
    except OSError:
        return ""


def not_private(path: Path) -> str | None:
    """Why the JVM must not map from, or write to, ``path`` (the cache folder, an archive): anyone but this user who
    can write there could hand the driver, which holds the mirror's credentials, classes of their own. None when it is
    this user's own and no one else may write it (or when it does not exist yet)."""
    try:
        st = path.lstat()
    except FileNotFoundError:
        return None
    if stat.S_ISLNK(st.st_mode):
        return f"{path} is a symbolic link"
    if st.st_uid != os.getuid():
        return f"{path} belongs to another user (uid {st.st_uid})"
    if st.st_mode & 0o022:
        return f"others may write {path} (mode {stat.S_IMODE(st.st_mode):04o}; chmod go-w)"
    return None


def _jars(spark_home: str) -> list[tuple[str, int, int]] | None:
    folder = Path(spark_home) / "jars" if spark_home else paths.pyspark_jars_dir()
    if folder is None or not folder.is_dir():
        return None
    return [(jar.name, (st := jar.stat()).st_size, st.st_mtime_ns) for jar in folder.glob("*.jar")]


def installation(env: Mapping[str, str]) -> tuple[int | None, str | None]:
    """This machine's JDK major version and the archive's name for it and Spark's jars (None: not found)."""
    java = paths.java_executable()
    release = _release(java)
    spark_home = env.get("SPARK_HOME", "")
    jars = _jars(spark_home)
    return java_major(release), archive_name(java, release, spark_home, jars) if jars and release else None


def kept(env: Mapping[str, str]) -> dict[str, object]:
    """What the cache holds for this machine's JDK and Spark (``doctor``): its folder (None: off), the archive's path
    and size when there is one."""
    folder = cache_folder(env)
    _, name = installation(env)
    archive = folder / name if folder is not None and name else None
    size = archive.stat().st_size if archive is not None and archive.is_file() else 0
    return {"folder": str(folder) if folder else None, "archive": str(archive) if size else None, "bytes": size}


def plan(profile: Profile, env: Mapping[str, str]) -> Plan:
    """Ask what :func:`decide` needs (the JDK's release file, Spark's jars, the cache folder), then decide; the folder
    is made (0700) when an archive is to be used or written."""
    spark = profile.mirror.spark
    driver = [str(spark.conf.get(f"spark.driver.{key}", "")) for key in ("extraJavaOptions", "defaultJavaOptions")]
    folder = cache_folder(env)
    major, name = installation(env)
    chosen = decide(
        driver_here=spark.deploy_mode == "client",
        callers_options=[env.get("SPARK_SUBMIT_OPTS", ""), *driver],
        folder=folder,
        major=major,
        name=name,
        archive_exists=bool(folder and name and (folder / name).is_file()),
        pid=os.getpid(),
    )
    if chosen.options and folder is not None:
        try:
            folders.make(folder, CACHE_VARIABLE)
        except BadInputError as exc:  # a cache it cannot make only costs the faster start
            return Plan(f"not used: {exc}")
        if why := not_private(folder) or (chosen.archive and not_private(chosen.archive)):
            return Plan(f"not used: {why}")
    if chosen.dump is not None:
        chosen.dump.unlink(missing_ok=True)  # an earlier process's of the same id: the JVM writes it read-only
    return chosen


def finish(chosen: Plan, ended_well: bool) -> str | None:
    """After the job: keep the archive it wrote when it ended well, else remove it; a sentence when one was kept."""
    if chosen.dump is None or chosen.archive is None or not chosen.dump.exists():
        return None
    if not ended_well:
        chosen.dump.unlink(missing_ok=True)
        return None
    chosen.dump.chmod(0o600)
    chosen.dump.replace(chosen.archive)
    remove_others(chosen.archive)
    return f"class-data archive written: {chosen.archive}"


def remove_others(archive: Path, grace: float = DUMP_GRACE_SECONDS) -> None:
    """Remove the archives of earlier JDKs or jars and left dumps beside ``archive``; a dump younger than ``grace``
    seconds may still be written by another run and is left. A JVM that has a removed archive open keeps it."""
    for other in archive.parent.glob("spark-*"):
        try:
            age = time.time() - other.stat().st_mtime
        except FileNotFoundError:
            continue
        if other != archive and not (other.suffix == ".partial" and age < grace):
            other.unlink(missing_ok=True)
