"""A checkpoint on a remote file system (hdfs:// ...) read through Hadoop's own client, in place: a small Java
program (``jvm/tools/HdfsCheckpointRead.java``) on pyspark's Hadoop client jars, with the configuration folder and
krb5.conf rendered from the profile into a private temporary folder, logged in from the ``hadoop`` section's
keytab. It lists the offsets and commits and returns the few files lag, verify and the fingerprint check read."""

from __future__ import annotations

import base64
import subprocess
from dataclasses import dataclass, field

from secure_mirror import java_tools, paths
from secure_mirror.errors import BadInputError, EnvironmentNotReady
from secure_mirror.profile.job_settings import FINGERPRINT_FILE
from secure_mirror.profile.models import Profile

TIMEOUT = 120


@dataclass
class Snapshot:
    """Batch ids of ``offsets/`` and ``commits/``, and the text of the files read (relative name -> text)."""

    offsets: list[int] = field(default_factory=list)
    commits: set[int] = field(default_factory=set)
    files: dict[str, str] = field(default_factory=dict)


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
        argv = [
            paths.java_executable(),
            *java_options,
            "-cp",
            f"{conf}:{java_tools.class_path('HdfsCheckpointRead')}",  # the wheel's, else compiled from jvm/tools
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
