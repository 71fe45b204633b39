"""The sandbox's Hadoop credential store, made as a Hadoop administrator makes one: ``hadoop credential create ALIAS
-provider URI``, Hadoop's own CredentialShell on pyspark's Hadoop client jars, its prompt answered from a pipe by
``jvm/tools/CredentialCreate.java``, so the value is never on a command line. ``profile-jceks.yaml`` reads the
target's SCRAM password from it (docs/security.md, "Hadoop credential stores")."""

from __future__ import annotations

import subprocess
from pathlib import Path

from secure_mirror import java_tools, paths
from secure_mirror.errors import EnvironmentNotReady

STORE = "mirror.jceks"  # in the sandbox's secrets/ folder
TARGET_ALIAS = "target-scram"  # the target's SCRAM-SHA-512 password
TIMEOUT = 300


def provider(path: Path) -> str:
    """The store's credential provider URI (``jceks://file/ABSOLUTE/PATH``)."""
    return f"jceks://file{path}"


def create(store: str, alias: str, value: str, store_password: str | None = None) -> None:
    """``hadoop credential create ALIAS -provider STORE`` answering its prompt with ``value`` (a store that does not
    exist is made; ``store_password``: its keystore password, else Hadoop's default)."""
    env = {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"}
    if store_password:
        env["HADOOP_CREDSTORE_PASSWORD"] = store_password
    argv = [paths.java_executable(), "-cp", java_tools.class_path("CredentialCreate"), "CredentialCreate"]
    res = subprocess.run(
        [*argv, "create", alias, "-provider", store],
        input=value + "\n",
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        env=env,
    )
    if res.returncode != 0 or "has been successfully created" not in res.stdout:
        last = (res.stderr.strip().splitlines() or res.stdout.strip().splitlines() or ["no message"])[-1]
        raise EnvironmentNotReady(f"`hadoop credential create {alias} -provider {store}` failed: {last}")


def make(secrets_folder: Path, target_password: Path) -> None:
    """``secrets/mirror.jceks``, anew: the target's SCRAM password under ``target-scram`` (Hadoop's default keystore
    password: the file's mode 0600 is its protection, as for the password files beside it)."""
    store = secrets_folder / STORE
    store.unlink(missing_ok=True)
    create(provider(store), TARGET_ALIAS, target_password.read_text(encoding="utf-8"))
    store.chmod(0o600)
