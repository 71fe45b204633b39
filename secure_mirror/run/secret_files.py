"""How ``run`` hands the job a profile's ``env:`` secrets when its files carry references (``--secrets references``).

The job's files say ``${directory:...}`` for a ``file:`` secret and ``${jceks-...:alias}`` for one in a Hadoop
credential store: the job's JVMs read those where they are. An ``env:`` secret is in this process's environment,
which no child of ours inherits (``profile.secrets.withheld_from_children``: Kafka's ``${env:NAME}`` would find
nothing there). So ``run`` writes each one, alone, into ``RUN_DIR/secrets/env.NAME`` (0600 in a 0700 folder, removed
when the run ends, ``--keep-run-dir`` or not) and runs the job with a profile naming that file instead
(:func:`job_profile`): the rendered options then hold ``${directory:RUN_DIR/secrets:env.NAME}``, never the value.

So is a secret in a credential store whose keystore password is ``HADOOP_CREDSTORE_PASSWORD``, withheld from our
children too (a store with Hadoop's default password, or a password file on the class path, is read by the job), and
a ``file:`` secret ending in a line break (``echo pw > file``): the profile drops it, Kafka's DirectoryConfigProvider
would not, so the job gets the secret without it.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from secure_mirror import folders
from secure_mirror.profile import credstores
from secure_mirror.profile.cluster import Cluster
from secure_mirror.profile.models import Profile
from secure_mirror.profile.secrets import SecretRef
from secure_mirror.profile.security import OAuthSasl, PasswordSasl
from secure_mirror.render.providers import ends_in_a_line_break

FOLDER = "secrets"


def job_profile(profile: Profile, run_dir: Path) -> Profile:
    """``profile`` with each ``env:`` secret written to ``run_dir/secrets/NAME`` and named as that file."""
    folder = run_dir / FOLDER
    handed: dict[str, SecretRef] = {}

    def as_file(secret: SecretRef | None) -> SecretRef | None:
        if secret is None or not _handed_over(secret):
            return secret
        name = f"env.{secret.name}" if secret.kind == "env" else f"{secret.kind}.{len(handed)}"
        if str(secret) not in handed:
            folders.make(folder, "--run-dir's secrets folder")
            folders.replace(folder / name, secret.resolve(), 0o600)  # alone, no line break: read whole
            handed[str(secret)] = SecretRef("file", str(folder / name))
        return handed[str(secret)]

    sides = {side: _handed(profile.cluster(side), as_file) for side in ("source", "target")}
    return profile.model_copy(update=sides)


def remove(run_dir: Path) -> None:
    """The handed secrets go when the run ends."""
    shutil.rmtree(run_dir / FOLDER, ignore_errors=True)


def _handed_over(secret: SecretRef) -> bool:
    if secret.kind == "file":
        try:
            return ends_in_a_line_break(Path(secret.name))
        except OSError:  # unreadable: resolving it says so, naming the reference
            return False
    return secret.kind == "env" or (secret.kind == "jceks" and bool(os.environ.get(credstores.PASSWORD_ENV)))


def _handed(cluster: Cluster, as_file) -> Cluster:
    update: dict[str, object] = {}
    sasl = cluster.sasl
    if isinstance(sasl, PasswordSasl):
        update["sasl"] = sasl.model_copy(update={"password": as_file(sasl.password)})
    elif isinstance(sasl, OAuthSasl):
        update["sasl"] = sasl.model_copy(update={"client_secret": as_file(sasl.client_secret)})
    if (tls := cluster.tls) is not None:
        secrets = {"truststore_password": tls.truststore_password, "key_password": tls.key_password}
        update["tls"] = tls.model_copy(update={key: as_file(value) for key, value in secrets.items()})
    return cluster.model_copy(update=update)
