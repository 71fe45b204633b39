"""The local files' decisions (``preflight/checks/settings.py``): the keytab, krb5.conf, the CA bundle and the client
certificate, fed answers as ``probes.files`` and ``probes.tls`` return them; and the order the files are asked in."""

from __future__ import annotations

from pathlib import Path

import pytest

from secure_mirror.preflight.checks import settings
from secure_mirror.preflight.checks.base import SideChecks
from secure_mirror.preflight.model import FAIL, PASS, WARN, Check
from secure_mirror.profile.warnings import ProfileWarning
from tests.support import profiles as pf

KEYTAB = Path("/etc/security/mirror.keytab")


def keytab(**answer) -> dict:
    return {"exists": True, "readable": True, "uid": 1000, "exposure": None, **answer}


def test_keytab():
    assert settings.keytab_check("source", KEYTAB, keytab()) == Check(
        "source.files.keytab",
        PASS,
        f"{KEYTAB} exists, is this user's own file and only its owner can read it",
    )
    assert settings.keytab_check("source", KEYTAB, keytab(exists=False, readable=False)) == Check(
        "source.files.keytab", FAIL, f"{KEYTAB} does not exist", "deploy the keytab or fix source.sasl.keytab"
    )
    assert settings.keytab_check("target", KEYTAB, keytab(readable=False)) == Check(
        "target.files.keytab",
        FAIL,
        f"{KEYTAB} is not readable by this user (uid 1000)",
        f"chown the keytab to the job's user and chmod 600 {KEYTAB}",
    )
    exposure = ProfileWarning("source.sasl.keytab", "readable by others", "chmod 0600 it")
    assert settings.keytab_check("source", KEYTAB, keytab(exposure=exposure)) == Check(
        "source.files.keytab", WARN, "readable by others", "chmod 0600 it"
    )


KRB5_FIX = "declare the realms under kerberos.realms in the profile, or fix kerberos.krb5_conf"


@pytest.mark.parametrize(
    "text",
    [
        "[libdefaults]\n default_realm = X\n[realms]\n SOURCE.TEST = {\n  kdc = k:88\n }\n",
        "[realms]\nSOURCE.TEST={\n kdc = k\n}\n[domain_realm]\n .source.test = SOURCE.TEST\n",
    ],
)
def test_krb5_conf_declaring_the_realm_passes(text):
    answer = {"path": "/etc/krb5.conf", "text": text}
    assert settings.krb5_conf_check("source", "SOURCE.TEST", answer) == Check(
        "source.kerberos.krb5-conf", PASS, "/etc/krb5.conf declares the realm SOURCE.TEST"
    )


@pytest.mark.parametrize(
    "text",
    ["[libdefaults]\n default_realm = SOURCE.TEST\n", "[realms]\n OTHER.TEST = {}\n[domain_realm]\n SOURCE.TEST = x\n"],
)
def test_krb5_conf_naming_the_realm_elsewhere_fails(text):
    answer = {"path": "/etc/krb5.conf", "text": text}
    assert settings.krb5_conf_check("source", "SOURCE.TEST", answer) == Check(
        "source.kerberos.krb5-conf",
        FAIL,
        "/etc/krb5.conf does not declare the realm SOURCE.TEST under [realms]",
        "add SOURCE.TEST with its kdc lines, or declare it under kerberos.realms in the profile",
    )


def test_an_unreadable_krb5_conf_fails():
    answer = {"path": "/etc/krb5.conf", "error": "No such file or directory"}
    assert settings.krb5_conf_check("target", "TARGET.TEST", answer) == Check(
        "target.kerberos.krb5-conf", FAIL, "cannot read /etc/krb5.conf: No such file or directory", KRB5_FIX
    )


def test_ca_bundle():
    ca = Path("/etc/ssl/kafka-ca.pem")
    assert settings.ca_check("target", ca, {"count": 2}) == Check(
        "target.files.ca", PASS, f"{ca} holds 2 CA certificate(s)"
    )
    assert settings.ca_check("target", ca, {"error": "Unable to load PEM file"}) == Check(
        "target.files.ca",
        FAIL,
        f"{ca} is not a PEM CA bundle (Unable to load PEM file)",
        "point target.tls.ca at the PEM file of the CA that signed the brokers",
    )


def test_client_certificate(tmp_path):
    tls = pf.load(tmp_path, target=pf.mutual_tls(tmp_path, "target")).target.tls_settings
    cert, key = tls.certificate, tls.key

    def check(answer):
        return settings.client_certificate_check("target", tls, answer)

    assert check({"matches": True, "pbes2": False}) == Check(
        "target.files.client-certificate", PASS, f"{cert} matches its private key"
    )
    assert check({"matches": False, "pbes2": False}) == Check(
        "target.files.client-certificate",
        FAIL,
        f"{cert} does not match {key}",
        "give the key the certificate was issued for",
    )
    assert check({"matches": True, "pbes2": True}) == Check(
        "target.files.client-certificate",
        FAIL,
        f"{key} is encrypted with PBES2 (openssl's default), which Kafka's Java client on Java 17 cannot read (the "
        "Spark job would fail to connect)",
        f"re-encrypt it: openssl pkcs8 -topk8 -v1 PBE-SHA1-3DES -in {key} -out NEW.key",
    )
    assert check({"error": "Could not deserialize key data"}) == Check(
        "target.files.client-certificate",
        FAIL,
        "cannot read the client certificate or key (Could not deserialize key data)",
        "check target.tls.certificate and target.tls.key (PEM)",
    )


def test_the_files_a_side_names_are_asked_in_order(tmp_path):
    """Kerberos over TLS: the keytab, krb5.conf (here, one that does not declare the realm) and the CA (the test's
    is no certificate); the real probes read the files."""
    profile = pf.load(tmp_path)
    conf = tmp_path / "krb5.conf"
    conf.write_text("[realms]\n TARGET.TEST = {\n }\n")
    run = SideChecks("source")
    settings.local_files(run, profile.source, str(conf))
    assert [(c.id, c.status) for c in run.checks] == [
        ("source.files.keytab", PASS),
        ("source.kerberos.krb5-conf", FAIL),
        ("source.files.ca", FAIL),
    ]
