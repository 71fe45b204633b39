"""Profiles for the unit tests: every referenced file is created under a tmp_path, nothing else is touched."""

from __future__ import annotations

import datetime
from pathlib import Path

import yaml

PASSWORD = 'p"a\\ss;w=rd é'  # the secret the tests look for in everything that was written


def keytab(path: Path, mode: int = 0o600) -> str:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"\x05\x02" + b"\x00" * 30)
    path.chmod(mode)
    return str(path)


def secret_file(path: Path, value: str, newline: bool = True) -> str:
    """``file:PATH`` of a new 0600 file holding ``value``, with a line break after it (``echo pw > file``) unless
    ``newline`` is false (``printf '%s' pw > file``: what a reference to it needs, render/providers.py)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(value + ("\n" if newline else ""), encoding="utf-8")
    path.chmod(0o600)
    return f"file:{path}"


def certificate_pair(folder: Path) -> tuple[str, str]:
    """A deterministic EC (P-256) client certificate and PKCS#8 key (same bytes on every run: the certificate is
    signed with a fixed Ed25519 key, whose signatures are deterministic; Kafka's Java client reads no Ed25519
    client key, see profile/compat.py)."""
    from cryptography import x509
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
    from cryptography.x509.oid import NameOID

    key = ec.derive_private_key(int.from_bytes(bytes(range(1, 33)), "big"), ec.SECP256R1())
    signer = Ed25519PrivateKey.from_private_bytes(bytes(range(32)))
    name = x509.Name(
        [x509.NameAttribute(NameOID.ORGANIZATION_NAME, "Example"), x509.NameAttribute(NameOID.COMMON_NAME, "mirror")]
    )
    start = datetime.datetime(2025, 1, 1, tzinfo=datetime.timezone.utc)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(42)
        .not_valid_before(start)
        .not_valid_after(start + datetime.timedelta(days=3650))
        .sign(signer, None)
    )
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "client.pem").write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    (folder / "client.key").write_bytes(
        key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    )
    (folder / "client.key").chmod(0o600)
    return str(folder / "client.pem"), str(folder / "client.key")


def ca(tmp: Path) -> str:
    (tmp / "ca.pem").write_text("-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n")
    return str(tmp / "ca.pem")


def gssapi(tmp: Path, side: str, protocol: str = "SASL_SSL") -> dict:
    realm = f"{side.upper()}.TEST"
    cluster = {
        "alias": {"source": "src", "target": "tgt"}[side],
        "bootstrap_servers": [f"kafka.{side}.test:9093"],
        "security_protocol": protocol,
        "sasl": {
            "mechanism": "GSSAPI",
            "principal": f"mirror/mirror.{side}.test@{realm}",
            "keytab": keytab(tmp / side / "mirror.keytab"),
        },
    }
    if protocol == "SASL_SSL":
        cluster["tls"] = {"ca": ca(tmp)}
    return cluster


def password(
    tmp: Path, side: str, mechanism: str, protocol: str = "SASL_SSL", value: str = PASSWORD, newline: bool = True
) -> dict:
    cluster = gssapi(tmp, side, protocol)
    cluster["sasl"] = {
        "mechanism": mechanism,
        "username": "mirror",
        "password": secret_file(tmp / side / "password.txt", value, newline),
    }
    return cluster


def oauth(tmp: Path, side: str) -> dict:
    """Reads its secret from SM_TEST_CLIENT_SECRET: set it with monkeypatch.setenv."""
    cluster = gssapi(tmp, side, "SASL_SSL")
    cluster["sasl"] = {
        "mechanism": "OAUTHBEARER",
        "client_id": "mirror-client",
        "client_secret": "env:SM_TEST_CLIENT_SECRET",
        "token_endpoint_url": "https://idp.example.com/oauth2/token",
        "scope": "kafka",
    }
    return cluster


def mutual_tls(tmp: Path, side: str) -> dict:
    cluster = gssapi(tmp, side, "SSL")
    del cluster["sasl"]
    certificate, key = certificate_pair(tmp / side)
    cluster["tls"] = {"ca": ca(tmp), "certificate": certificate, "key": key, "hostname_verification": False}
    return cluster


CROSS_REALM_RULE = "RULE:[1:$1@$0](.*@CORP\\.TEST)s/@.*//"


def cross_realm(data: dict) -> dict:
    """``data`` with the source's mirror in CORP.TEST, mapped by a rule of the source brokers (default realm
    SOURCE.TEST), and the target's certificate subjects mapped to their lower-cased CN."""
    data["kerberos"]["realms"]["CORP.TEST"] = {"kdcs": ["127.0.0.1:41001"], "domains": ["corp.test"]}
    data["source"]["sasl"]["principal"] = "mirror@CORP.TEST"
    data["source"]["principal_mapping"] = {
        "default_realm": "SOURCE.TEST",
        "principal_to_local_rules": [CROSS_REALM_RULE, "DEFAULT"],
    }
    if data["target"].get("sasl") is None:
        data["target"]["principal_mapping"] = {"ssl_principal_mapping_rules": "RULE:^CN=([^,]*),.*$/$1/L,DEFAULT"}
    return data


def plaintext(tmp: Path, side: str) -> dict:
    cluster = gssapi(tmp, side, "PLAINTEXT")
    del cluster["sasl"]
    return cluster


def profile_data(tmp: Path, source: dict | None = None, target: dict | None = None, **mirror) -> dict:
    return {
        "version": 1,
        "kerberos": {
            "realms": {
                "SOURCE.TEST": {
                    "kdcs": ["127.0.0.1:41001"],
                    "admin_server": "127.0.0.1:41002",
                    "domains": ["source.test"],
                },
                "TARGET.TEST": {"kdcs": ["127.0.0.1:41001"], "domains": ["target.test"]},
            }
        },
        "source": source or gssapi(tmp, "source"),
        "target": target or gssapi(tmp, "target"),
        "mirror": {
            "topics": {"include": "orders.*,payments", "exclude": ".*\\.tmp"},
            "checkpoint_location": str(tmp / "checkpoints"),
            **mirror,
        },
    }


def write_profile(tmp: Path, data: dict) -> Path:
    path = tmp / "profile.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return path


def load(tmp: Path, source: dict | None = None, target: dict | None = None, **mirror):
    """The validated Profile of :func:`profile_data` (written to ``tmp/profile.yaml`` and loaded as a user's is)."""
    from secure_mirror.profile import load_profile

    return load_profile(write_profile(tmp, profile_data(tmp, source, target, **mirror)))


def ranger_profile(tmp: Path, **mirror):
    """Both sides' grants as Apache Ranger policies (docs/ranger.md): the source's alone, the target's beside its
    Kafka ACLs, in the Ranger service ``cl1_kafka``."""
    source, target = gssapi(tmp, "source"), gssapi(tmp, "target")
    source["acls"] = {"format": "ranger"}
    target["acls"] = {"format": "both", "ranger_service": "cl1_kafka"}
    return load(tmp, source, target, **mirror)
