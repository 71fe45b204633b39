"""Hadoop credential providers as secret references: ``jceks://file/etc/secure-mirror/mirror.jceks#source-truststore``
is a credential provider URI, as ``hadoop credential create ALIAS -provider URI`` and
``hadoop.security.credential.provider.path`` take it, then ``#`` and the alias of the secret in that store.

The stores Hadoop estates keep their passwords in: ``jceks://file/PATH`` and ``localjceks://file/PATH`` (a file on
this machine), ``jceks://hdfs@NAMENODE:PORT/PATH`` (a file on HDFS, read with the Hadoop configuration in
``HADOOP_CONF_DIR`` and the Kerberos ticket of ``KRB5CCNAME``). The keystore's own password is Hadoop's:
``HADOOP_CREDSTORE_PASSWORD``, else the password file ``hadoop.security.credstore.java-keystore-provider.password-file``
names in the core-site.xml of ``HADOOP_CONF_DIR``, else Hadoop's default, ``none``.

This module is the syntax and the checks validate can make without Java (a local store exists and is readable); the
value is read through Hadoop's own ``CredentialProviderFactory`` (``credstore_reader``).
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from urllib.parse import unquote

from secure_mirror.profile.policy import printable, shorten

SCHEMES = ("jceks://", "localjceks://")
PASSWORD_ENV = "HADOOP_CREDSTORE_PASSWORD"  # Hadoop's own: the keystore password of jceks:// and localjceks://
HOW_TO_WRITE = "jceks://file/absolute/path.jceks#alias (an alias in a Hadoop credential store)"
FORMS = "jceks://file/ABSOLUTE/PATH, localjceks://file/ABSOLUTE/PATH or jceks://hdfs@NAMENODE:PORT/PATH"
# The file systems a store may be on (after jceks://): Hadoop's own and its cloud connectors'. Anything else is
# most likely a path missing its "file" (jceks://etc/mirror.jceks), which Hadoop would read as a file system "etc".
FILE_SYSTEMS = ("file", "hdfs", "viewfs", "webhdfs", "swebhdfs", "ofs", "o3fs", "s3a", "abfs", "abfss", "gs")
_STORE = re.compile(
    r"(?P<scheme>jceks|localjceks)://(?P<fs>[a-z][a-z0-9+.-]*)(?:@(?P<host>[A-Za-z0-9.-]+(?::[0-9]{1,5})?))?"
    r"(?P<path>/[A-Za-z0-9._~/+=@%-]*[A-Za-z0-9._~+=@%-])"
)
# An alias as `hadoop credential list` shows them (JCEKS keeps them lower-cased and finds them in any case); nothing
# Kafka's ``${provider:key}`` would split on (":", "}") or a properties file would need to escape.
_ALIAS = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,199}")


def is_reference(text: str) -> bool:
    return text.startswith(SCHEMES)


def parse(text: str) -> tuple[str, str]:
    """(provider URI, alias) of ``PROVIDER#ALIAS``; a ValueError with the fix when it is not one."""
    provider, hash_sign, alias = text.rpartition("#")
    shown = printable(shorten(text))
    if not hash_sign:
        provider, alias = text, ""
    if not (match := _STORE.fullmatch(provider)):
        raise ValueError(f"{shown}: not a Hadoop credential provider URI; write {FORMS}, then #alias")
    if match["fs"] not in FILE_SYSTEMS:
        raise ValueError(
            f"{shown}: {match['fs']} is not a file system Hadoop keeps credential stores on; write {FORMS}, then #alias"
        )
    if match["scheme"] == "localjceks" and (match["fs"] != "file" or match["host"]):
        raise ValueError(f"{shown}: localjceks:// names a file on this machine; write localjceks://file/ABSOLUTE/PATH")
    if match["fs"] == "file" and match["host"]:
        raise ValueError(f"{shown}: a file:// store has no host; write {match['scheme']}://file/ABSOLUTE/PATH")
    if "%" in match["path"] and not _decodes(match["path"]):
        raise ValueError(f"{shown}: the path has a % that is not %XX; write a space as %20 and % as %25")
    if not alias:
        raise ValueError(f"{shown}: names no alias; write the alias after #, as in {provider}#source-truststore")
    if not _ALIAS.fullmatch(alias):
        raise ValueError(
            f"{shown}: the alias {printable(shorten(alias, 40))} is not one Hadoop and Kafka's config references "
            "both carry; use letters, digits, '.', '_' and '-' (as `hadoop credential list` shows them)"
        )
    return provider, alias


def local_file(provider: str) -> Path | None:
    """The file of a store on this machine (``jceks://file/...``, ``localjceks://file/...``), else None."""
    match = _STORE.fullmatch(provider)
    return Path(unquote(match["path"])) if match and match["fs"] == "file" else None


def problem(provider: str, alias: str) -> str | None:
    """Why the store cannot be read, as far as can be seen without opening it (a file on this machine that is
    missing or unreadable), with the fix; None otherwise. The alias is looked up when the value is read."""
    path = local_file(provider)
    if path is None:
        return None
    if not path.exists():
        return (
            f"credential store {path} does not exist; create it with {create_command(provider, alias)}, or fix the path"
        )
    if not path.is_file():
        return f"credential store {path} is not a file; name the .jceks file itself"
    if not os.access(path, os.R_OK):
        return f"credential store {path} is not readable by this user; fix its owner or mode"
    return None


def create_command(provider: str, alias: str) -> str:
    """How a Hadoop administrator puts the alias into the store (the value is asked for, not typed on the line)."""
    return f"`hadoop credential create {alias} -provider {provider}`"


def _decodes(path: str) -> bool:
    return re.fullmatch(r"(?:[^%]|%[0-9A-Fa-f]{2})*", path) is not None
