"""Reads an alias from a Hadoop credential provider through Hadoop's own ``CredentialProviderFactory``: a short JVM
(``jvm/tools/CredentialRead.java`` on pyspark's Hadoop client jars) hands the value back over its stdout, a pipe to
this process. The value is never in an argument list, an environment, a file or a log; a value read is kept for the
life of this process (each read starts a JVM), and only in its memory.

The JVM gets no environment of ours but ``PATH``, the keystore's password (``HADOOP_CREDSTORE_PASSWORD``, Hadoop reads
it there and nowhere else but a password file), and for a store on HDFS the Kerberos ticket cache ``KRB5CCNAME``;
``HADOOP_CONF_DIR`` goes first on its class path, where Hadoop looks for core-site.xml (and a password file it names).
This module answers plain data; ``secrets.SecretRef`` turns it into sentences.
"""

from __future__ import annotations

import base64
import binascii
import os
import shutil
import subprocess
import threading
from dataclasses import dataclass, field
from pathlib import Path

from secure_mirror import java_tools, paths
from secure_mirror.errors import EnvironmentNotReady

TIMEOUT = 120  # seconds: a JVM on Hadoop's client jars starts in about two, a loaded machine takes far longer
_LOCK = threading.Lock()
_VALUES: dict[tuple[str, str], str] = {}  # (provider, alias) -> value, read in this process


@dataclass(frozen=True)
class Answer:
    """What the store said of one alias: its ``value``; or it opened and ``aliases`` is how many it holds (this one
    not among them); or it could not be opened and ``error`` is Hadoop's reason (which names no value)."""

    value: str | None = field(default=None, repr=False)
    aliases: int | None = None
    error: str | None = None


def read(provider: str, alias: str, password: str | None) -> Answer:
    """The alias of the store ``provider``, opened with the keystore ``password`` (None: Hadoop's default)."""
    with _LOCK:
        if (provider, alias) in _VALUES:
            return Answer(value=_VALUES[(provider, alias)])
    answer = _ask(provider, alias, password)
    if answer.value is not None:
        with _LOCK:
            _VALUES[(provider, alias)] = answer.value
    return answer


def forget() -> None:
    """Drop the values read so far (the next read asks the store again)."""
    with _LOCK:
        _VALUES.clear()


def _ask(provider: str, alias: str, password: str | None) -> Answer:
    java = paths.java_executable()
    if shutil.which(java) is None:
        raise EnvironmentNotReady("reading a jceks:// secret reference needs java (17 or later); install one")
    env = {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"}
    if password:
        env["HADOOP_CREDSTORE_PASSWORD"] = password
    if os.environ.get("KRB5CCNAME"):
        env["KRB5CCNAME"] = os.environ["KRB5CCNAME"]
    options = [f"-Djava.security.krb5.conf={os.environ['KRB5_CONFIG']}"] if os.environ.get("KRB5_CONFIG") else []
    conf, tool = os.environ.get("HADOOP_CONF_DIR", ""), java_tools.class_path("CredentialRead")
    class_path = f"{conf}:{tool}" if conf and Path(conf).is_dir() else tool
    argv = [java, *options, "-cp", class_path, "CredentialRead"]
    try:
        res = subprocess.run(
            [*argv, provider, alias],
            capture_output=True,
            text=True,
            timeout=TIMEOUT,
            stdin=subprocess.DEVNULL,
            env=env,
        )
    except subprocess.TimeoutExpired:
        return Answer(error=f"Hadoop's client did not answer within {TIMEOUT} s")
    return _parse(res.stdout, res.returncode, res.stderr)


def _parse(stdout: str, returncode: int, stderr: str) -> Answer:
    kind, _, rest = stdout.partition("\n")[0].partition("\t")
    if returncode == 0 and kind == "value":
        try:
            return Answer(value=base64.b64decode(rest, validate=True).decode("utf-8"))
        except (binascii.Error, UnicodeDecodeError):  # say what, never the bytes
            return Answer(error="the value is not UTF-8 text")
    if returncode == 0 and kind == "missing" and rest.isdigit():
        return Answer(aliases=int(rest))
    if returncode == 0 and kind == "error":
        return Answer(error=rest)
    last = (stderr.strip().splitlines() or [f"exit {returncode}, no message"])[-1]
    return Answer(error=f"Hadoop's client failed: {last}")
