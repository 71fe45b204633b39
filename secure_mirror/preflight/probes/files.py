"""The local files a side names, asked about: the keytab's presence, access and exposure, and krb5.conf's text.
(The TLS files are read in ``tls``.)"""

from __future__ import annotations

import os
from pathlib import Path

from secure_mirror.profile.warnings import secret_file_warning


def keytab(path: Path, field: str) -> dict:
    """{"exists", "readable" (by this user), "uid" (this user's), "exposure": the profile's warning about the file
    (``profile/warnings.secret_file_warning``, as validate warns) or None}; ``field`` names it in that warning."""
    exists = path.exists()
    readable = exists and os.access(path, os.R_OK)
    exposure = secret_file_warning(field, path, "keytab") if readable else None
    return {"exists": exists, "readable": readable, "uid": os.getuid(), "exposure": exposure}


def krb5_conf(given: str | None) -> dict:
    """{"path", "text"} of the krb5.conf Kerberos reads here (``given``, else ``KRB5_CONFIG``, else /etc/krb5.conf), or
    {"path", "error": why it cannot be read}."""
    path = given or os.environ.get("KRB5_CONFIG") or "/etc/krb5.conf"
    try:
        return {"path": path, "text": Path(path).read_text()}
    except OSError as exc:
        return {"path": path, "error": exc.strerror}
