"""A throwaway certificate authority and server certificates for the sandbox's brokers (PEM files)."""

from __future__ import annotations

import datetime as dt
import os
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

from secure_mirror.errors import EnvironmentNotReady

VALIDITY = dt.timedelta(days=30)


def _name(common_name: str) -> x509.Name:
    return x509.Name(
        [
            x509.NameAttribute(NameOID.ORGANIZATION_NAME, "secure_mirror sandbox"),
            x509.NameAttribute(NameOID.COMMON_NAME, common_name),
        ]
    )


def write_private(path: Path, data: bytes) -> None:
    """``data`` in a new file of mode 0600 (an existing one is truncated, its mode kept)."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "wb") as fh:
        fh.write(data)


def ec_key(pem: bytes) -> ec.EllipticCurvePrivateKey:
    """The private key in ``pem`` as this module writes them (PKCS#8, unencrypted, P-256)."""
    key = serialization.load_pem_private_key(pem, None)
    if not isinstance(key, ec.EllipticCurvePrivateKey):
        raise EnvironmentNotReady(f"the sandbox's key is {type(key).__name__}, not the EC key it wrote")
    return key


def _key_pem(key: ec.EllipticCurvePrivateKey) -> bytes:
    return key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )


class CertificateAuthority:
    def __init__(self, name: str = "secure_mirror sandbox CA"):
        self.key = ec.generate_private_key(ec.SECP256R1())
        self._self_sign(name)

    @classmethod
    def load(cls, cert_path: Path, key_path: Path) -> CertificateAuthority:
        """The CA written by :meth:`write_ca` and :meth:`write_key` (to issue more certificates later)."""
        ca = cls.__new__(cls)
        ca.key = ec_key(key_path.read_bytes())
        ca.cert = x509.load_pem_x509_certificate(cert_path.read_bytes())
        return ca

    def write_key(self, path: Path) -> Path:
        write_private(path, _key_pem(self.key))
        return path

    def _self_sign(self, name: str) -> None:
        now = dt.datetime.now(dt.timezone.utc)
        self.cert = (
            x509.CertificateBuilder()
            .subject_name(_name(name))
            .issuer_name(_name(name))
            .public_key(self.key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - dt.timedelta(minutes=5))
            .not_valid_after(now + VALIDITY)
            .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
            .add_extension(x509.KeyUsage(False, False, False, False, False, True, True, False, False), critical=True)
            .sign(self.key, hashes.SHA256())
        )

    def cert_pem(self) -> bytes:
        return self.cert.public_bytes(serialization.Encoding.PEM)

    def write_ca(self, path: Path) -> Path:
        path.write_bytes(self.cert_pem())
        return path

    def issue(self, hostnames: list[str], *, client: bool = False) -> tuple[bytes, bytes]:
        """A certificate for ``hostnames`` (subjectAltName) and its key, both PEM."""
        key = ec.generate_private_key(ec.SECP256R1())
        now = dt.datetime.now(dt.timezone.utc)
        usage = (
            [ExtendedKeyUsageOID.CLIENT_AUTH]
            if client
            else [ExtendedKeyUsageOID.SERVER_AUTH, ExtendedKeyUsageOID.CLIENT_AUTH]
        )
        cert = (
            x509.CertificateBuilder()
            .subject_name(_name(hostnames[0]))
            .issuer_name(self.cert.subject)
            .public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - dt.timedelta(minutes=5))
            .not_valid_after(now + VALIDITY)
            .add_extension(x509.SubjectAlternativeName([x509.DNSName(h) for h in hostnames]), critical=False)
            .add_extension(x509.ExtendedKeyUsage(usage), critical=False)
            .sign(self.key, hashes.SHA256())
        )
        return cert.public_bytes(serialization.Encoding.PEM), _key_pem(key)

    def write_server_keystore(self, path: Path, hostnames: list[str]) -> Path:
        """One PEM file with the certificate chain and the private key, as Kafka's PEM keystore reads it."""
        cert, key = self.issue(hostnames)
        write_private(path, key + cert + self.cert_pem())
        return path

    def write_client_pair(self, cert_path: Path, key_path: Path, name: str) -> None:
        cert, key = self.issue([name], client=True)
        cert_path.write_bytes(cert + self.cert_pem())
        write_private(key_path, key)
