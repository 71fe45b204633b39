"""krb5.conf for both realms, when the profile declares them (no DNS guessing: every fact is written down)."""

from __future__ import annotations

from pathlib import Path

from secure_mirror.profile.models import Profile
from secure_mirror.render import templating


def default_realm(profile: Profile) -> str | None:
    kerberos = profile.kerberos
    if kerberos is None or not kerberos.realms:
        return None
    return kerberos.default_realm or profile.source.realm or profile.target.realm or next(iter(kerberos.realms))


def krb5_conf(profile: Profile) -> str | None:
    """The krb5.conf text, or None when the profile declares no realms."""
    realm = default_realm(profile)
    if realm is None or profile.kerberos is None:  # a default realm means realms are declared
        return None
    return templating.render("templates/krb5.conf.j2", default_realm=realm, realms=profile.kerberos.realms)


def krb5_conf_path(profile: Profile, out_dir: Path) -> str | None:
    """The krb5.conf clients should use: the rendered one, the profile's ``krb5_conf``, or None (system default)."""
    if default_realm(profile) is not None:
        return str(out_dir / "krb5.conf")
    if profile.kerberos is not None and profile.kerberos.krb5_conf is not None:
        return str(profile.kerberos.krb5_conf)
    return None


def write_into(profile: Profile, folder: Path) -> str | None:
    """For a client run from ``folder`` (a private temporary folder): write the profile's krb5.conf there when it
    declares realms, and return the krb5.conf to use, as :func:`krb5_conf_path` says (None: the system's)."""
    if (text := krb5_conf(profile)) is not None:
        (folder / "krb5.conf").write_text(text, encoding="utf-8")
    return krb5_conf_path(profile, folder)
