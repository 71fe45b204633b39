"""A checkpoint on a remote file system (hdfs:// ...) read through Hadoop's own client, in place: a small Java
program (``jvm/tools/HdfsCheckpointRead.java``) on pyspark's Hadoop client jars, with the configuration folder and
krb5.conf rendered from the profile into a private temporary folder, logged in from the ``hadoop`` section's
keytab. It lists the offsets and commits and returns the few files lag, verify and the fingerprint check read."""

from __future__ import annotations

import base64
import hashlib
import os
import shutil
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from secure_mirror import paths
from secure_mirror.errors import BadInputError, EnvironmentNotReady
from secure_mirror.profile.job_settings import FINGERPRINT_FILE
from secure_mirror.profile.models import Profile

READER = paths.REPO_ROOT / "jvm" / "tools" / "HdfsCheckpointRead.java"
TIMEOUT = 120


@dataclass
class Snapshot:
    """Batch ids of ``offsets/`` and ``commits/``, and the text of the files read (relative name -> text)."""

    offsets: list[int] = field(default_factory=list)
    commits: set[int] = field(default_factory=set)
    files: dict[str, str] = field(default_factory=dict)


def _pyspark_jars() -> Path:
    try:
        import pyspark
    except ImportError:
        raise EnvironmentNotReady("pyspark is not installed in this Python; run scripts/setup") from None
    return Path(pyspark.__file__).resolve().parent / "jars"


def _compiled(jars: Path) -> Path:
    """The reader's classes, compiled once per source version into .deps/build (a single-file launch compiles on
    every call: 3 s more for each lag)."""
    digest = hashlib.sha256(READER.read_bytes() + str(jars).encode()).hexdigest()[:16]
    folder = paths.deps_dir() / "build" / f"hdfs-checkpoint-read-{digest}"
    if (folder / "HdfsCheckpointRead.class").exists():
        return folder
    folder.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=".hdfs-checkpoint-read-", dir=folder.parent))
    javac = str(Path(shutil.which(paths.java_executable()) or "java").resolve().parent / "javac")
    res = subprocess.run(
        [javac, "-nowarn", "-d", str(staging), "-cp", f"{jars}/*", str(READER)],
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
    )
    if res.returncode != 0:
        shutil.rmtree(staging, ignore_errors=True)
        raise EnvironmentNotReady(f"compiling {READER} failed: {res.stderr.strip()[-1000:]}")
    try:
        os.rename(staging, folder)
    except OSError:  # compiled at the same time by another process
        shutil.rmtree(staging, ignore_errors=True)
    return folder


def read(location: str, profile: Profile | None) -> Snapshot:
    """The snapshot of the remote checkpoint ``location`` through the Hadoop client of ``profile.hadoop``."""
    # Imported here, not above: the job imports this module (through run.checkpoint) in a YARN container, where
    # the package comes as a zip without the templates render's import needs.
    from secure_mirror.identities import IdentityFolder
    from secure_mirror.render import hadoop_conf

    if profile is None or profile.hadoop is None:
        raise BadInputError(
            f"mirror.checkpoint_location: {location} is remote; reading it needs the profile's hadoop "
            "section (the cluster's configuration and the principal and keytab to log in with)"
        )
    folder = IdentityFolder.for_profile(profile, prefix="secure-mirror-hadoop-")  # the Hadoop client's identity
    try:
        conf, krb5_path = folder.path, folder.krb5_config
        for name, text in hadoop_conf.site_files(profile.hadoop).items():
            (conf / name).write_text(text, encoding="utf-8")
        java_options = [f"-Djava.security.krb5.conf={krb5_path}"] if krb5_path else []
        jars = _pyspark_jars()
        argv = [
            paths.java_executable(),
            *java_options,
            "-cp",
            f"{conf}:{paths.tools_jar() or _compiled(jars)}:{jars}/*",  # the wheel's, else compiled from jvm/tools
            "HdfsCheckpointRead",
            location,
            profile.hadoop.principal,
            str(profile.hadoop.keytab),
            FINGERPRINT_FILE,
        ]
        res = subprocess.run(
            argv,
            capture_output=True,
            text=True,
            timeout=TIMEOUT,
            stdin=subprocess.DEVNULL,
            env={"PATH": "/usr/bin:/bin", "HADOOP_CONF_DIR": str(conf), "LANG": "C.UTF-8"},
        )
    finally:
        folder.remove()
    if res.returncode != 0:
        last = (res.stderr.strip().splitlines() or ["no message"])[-1]
        raise EnvironmentNotReady(
            f"the checkpoint {location} could not be read through the Hadoop client as "
            f"{profile.hadoop.principal}: {last}"
        )
    return _parse(res.stdout)


def _parse(output: str) -> Snapshot:
    snapshot = Snapshot()
    for line in output.splitlines():
        kind, _, rest = line.partition("\t")
        if kind == "offsets":
            snapshot.offsets = sorted(int(i) for i in rest.split(",") if i)
        elif kind == "commits":
            snapshot.commits = {int(i) for i in rest.split(",") if i}
        elif kind == "file":
            name, _, data = rest.partition("\t")
            snapshot.files[name] = base64.b64decode(data).decode("utf-8", errors="replace")
    return snapshot
