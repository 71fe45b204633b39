"""The local files a side names, asked about: the keytab's presence, access and exposure, and krb5.conf's text.
(The TLS files are read in ``tls``.)"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TypedDict, final

from secure_mirror.profile.warnings import ProfileWarning, secret_file_warning


class KeytabFile(TypedDict):
    exists: bool
    readable: bool  # by this user
    uid: int  # this user's
    exposure: ProfileWarning | None  # the profile's warning about the file, as validate warns


@final
class Krb5Text(TypedDict):
    path: str
    text: str


@final
class Krb5Unread(TypedDict):
    path: str
    error: str | None  # why it cannot be read (the system's words)


def keytab(path: Path, field: str) -> KeytabFile:
    """The keytab's presence, access and exposure (``profile/warnings.secret_file_warning``); ``field`` names it in
    that warning."""
    exists = path.exists()
    readable = exists and os.access(path, os.R_OK)
    exposure = secret_file_warning(field, path, "keytab") if readable else None
    return {"exists": exists, "readable": readable, "uid": os.getuid(), "exposure": exposure}


def krb5_conf(given: str | None) -> Krb5Text | Krb5Unread:
    """The krb5.conf Kerberos reads here (``given``, else ``KRB5_CONFIG``, else /etc/krb5.conf), or why it cannot be
    read."""
    path = given or os.environ.get("KRB5_CONFIG") or "/etc/krb5.conf"
    try:
        return {"path": path, "text": Path(path).read_text()}
    except OSError as exc:
        return {"path": path, "error": exc.strerror}
