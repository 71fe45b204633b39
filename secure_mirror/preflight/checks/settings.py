"""Local files and settings: the profile's warnings (``config.weak-settings``), the keytab, krb5.conf, the CA
bundle and the client certificate. Asked through ``probes.files`` and ``probes.tls``; judged by the pure
``*_check`` functions."""

from __future__ import annotations

from pathlib import Path

from secure_mirror.preflight.checks.base import SideChecks, check
from secure_mirror.preflight.model import FAIL, PASS, WARN, Check, Status
from secure_mirror.preflight.probes import Failed, files, tls
from secure_mirror.profile.cluster import Cluster
from secure_mirror.profile.models import Profile
from secure_mirror.profile.security import GssapiSasl, Tls
from secure_mirror.profile.warnings import ProfileWarning, profile_warnings


# ---- the profile's warnings ---------------------------------------------------------------------------------------
def weak_settings(profile: Profile, side: str) -> Check:
    """The profile's warnings for this side (``profile/warnings.py``: validate and render print the same), but its
    keytab's (``files.keytab``): one warning check, which ``--strict`` fails."""
    keytab = f"{side}.sasl.keytab"
    found = [w for w in profile_warnings(profile) if w.section == side and w.field != keytab]
    return check(side, "config.weak-settings", *_warned(found, "no setting of this side weakens the run"))


def profile_settings(profile: Profile) -> Check:
    """``profile.config.weak-settings``: the profile's warnings outside both sides (Spark, MirrorMaker 2, Hadoop,
    Kerberos, the isolation level)."""
    found = [w for w in profile_warnings(profile) if w.section not in ("source", "target")]
    passed = "no Spark, MirrorMaker 2 or Hadoop setting weakens the run"
    return check("profile", "config.weak-settings", *_warned(found, passed))


def _warned(found: list[ProfileWarning], passed: str) -> tuple[Status, str, str]:
    """(status, finding, fix) of a check reporting ``found`` warnings, each finding named by its field."""
    if not found:
        return PASS, passed, ""
    return WARN, "; ".join(f"{w.field}: {w.finding}" for w in found), "; ".join(w.fix for w in found)


# ---- the side's files ---------------------------------------------------------------------------------------------
def local_files(run: SideChecks, cluster: Cluster, krb5_conf: str | None) -> None:
    if isinstance(cluster.sasl, GssapiSasl):
        keytab_file(run, cluster.sasl.keytab)
        run.extend(krb5_conf_check(run.side, cluster.sasl.realm, files.krb5_conf(krb5_conf)))
    settings = cluster.tls_settings
    if cluster.uses_tls and settings.pem_ca is not None:
        run.extend(ca_check(run.side, settings.pem_ca, tls.ca_bundle(settings.pem_ca)))
    if settings.certificate is not None and settings.key is not None:  # mutual TLS: validate asks for both
        password = settings.key_password.resolve().encode() if settings.key_password else None
        answer = tls.client_certificate(settings.certificate, settings.key, password)
        run.extend(client_certificate_check(run.side, settings, answer))


def keytab_file(run: SideChecks, keytab: Path) -> None:
    run.extend(keytab_check(run.side, keytab, files.keytab(keytab, f"{run.side}.sasl.keytab")))


def keytab_check(side: str, keytab: Path, answer: files.KeytabFile) -> Check:
    """``files.keytab`` from ``probes.files.keytab``'s answer."""
    if not answer["exists"]:
        return check(
            side, "files.keytab", FAIL, f"{keytab} does not exist", f"deploy the keytab or fix {side}.sasl.keytab"
        )
    if not answer["readable"]:
        return check(
            side,
            "files.keytab",
            FAIL,
            f"{keytab} is not readable by this user (uid {answer['uid']})",
            f"chown the keytab to the job's user and chmod 600 {keytab}",
        )
    if (warning := answer["exposure"]) is not None:  # as validate warns
        return check(side, "files.keytab", WARN, warning.finding, warning.fix)
    return check(side, "files.keytab", PASS, f"{keytab} exists, is this user's own file and only its owner can read it")


def krb5_conf_check(side: str, realm: str, answer: files.Krb5Text | files.Krb5Unread) -> Check:
    """``kerberos.krb5-conf`` from ``probes.files.krb5_conf``'s answer: does it declare the side's realm?"""
    path = answer["path"]
    if "error" in answer:
        return check(
            side,
            "kerberos.krb5-conf",
            FAIL,
            f"cannot read {path}: {answer['error']}",
            "declare the realms under kerberos.realms in the profile, or fix kerberos.krb5_conf",
        )
    text = answer["text"]
    realms_section = text.split("[realms]", 1)[-1].split("\n[", 1)[0] if "[realms]" in text else ""
    if f"{realm} =" in realms_section or f"{realm}=" in realms_section:
        return check(side, "kerberos.krb5-conf", PASS, f"{path} declares the realm {realm}")
    return check(
        side,
        "kerberos.krb5-conf",
        FAIL,
        f"{path} does not declare the realm {realm} under [realms]",
        f"add {realm} with its kdc lines, or declare it under kerberos.realms in the profile",
    )


def ca_check(side: str, pem_ca: Path, answer: tls.CaCount | Failed) -> Check:
    """``files.ca`` from ``probes.tls.ca_bundle``'s answer."""
    if "error" in answer:
        return check(
            side,
            "files.ca",
            FAIL,
            f"{pem_ca} is not a PEM CA bundle ({answer['error']})",
            f"point {side}.tls.ca at the PEM file of the CA that signed the brokers",
        )
    return check(side, "files.ca", PASS, f"{pem_ca} holds {answer['count']} CA certificate(s)")


def client_certificate_check(side: str, settings: Tls, answer: tls.KeyMatch | Failed) -> Check:
    """``files.client-certificate`` from ``probes.tls.client_certificate``'s answer."""
    what = "files.client-certificate"
    if "error" in answer:
        return check(
            side,
            what,
            FAIL,
            f"cannot read the client certificate or key ({answer['error']})",
            f"check {side}.tls.certificate and {side}.tls.key (PEM)",
        )
    if answer["matches"] and answer["pbes2"]:
        return check(
            side,
            what,
            FAIL,
            f"{settings.key} is encrypted with PBES2 (openssl's default), "
            "which Kafka's Java client on Java 17 cannot read (the Spark job would fail to connect)",
            f"re-encrypt it: openssl pkcs8 -topk8 -v1 PBE-SHA1-3DES -in {settings.key} -out NEW.key",
        )
    if answer["matches"]:
        return check(side, what, PASS, f"{settings.certificate} matches its private key")
    return check(
        side,
        what,
        FAIL,
        f"{settings.certificate} does not match {settings.key}",
        "give the key the certificate was issued for",
    )
