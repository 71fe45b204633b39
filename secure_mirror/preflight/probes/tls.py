"""TLS with Python's ssl module: does a server's certificate chain to the configured CA and name its host? And the
local TLS files: how many CA certificates a bundle holds, whether the client certificate matches its key."""

from __future__ import annotations

import socket
import ssl
from pathlib import Path
from typing import Any, TypedDict, final

from secure_mirror.preflight.probes import Failed
from secure_mirror.profile.security import Tls

# OpenSSL verify codes worth their own sentence.
_UNTRUSTED = {2, 18, 19, 20, 21}  # unable to get issuer / self-signed / self-signed in chain / local issuer
_HOSTNAME_MISMATCH = 62
_EXPIRED = 10


class TlsFailure(Exception):
    def __init__(self, kind: str, message: str, fix: str):
        super().__init__(message)
        self.kind, self.fix = kind, fix


def context(
    ca: Path | None,
    certificate: Path | None = None,
    key: Path | None = None,
    verify_hostname: bool = True,
    key_password: str | None = None,
) -> ssl.SSLContext:
    ctx = ssl.create_default_context(cafile=str(ca) if ca else None)
    ctx.check_hostname = verify_hostname
    if certificate is not None:  # without a password OpenSSL would prompt on the terminal for an encrypted key
        ctx.load_cert_chain(str(certificate), str(key), password=key_password or "")
    return ctx


def context_for(settings: Tls) -> ssl.SSLContext:
    """The context a side's TLS settings make: its PEM CA (else the system's), its client certificate, host names."""
    password = settings.key_password.resolve() if settings.key_password else None
    return context(settings.pem_ca, settings.certificate, settings.key, settings.hostname_verification, password)


class TlsRefusal(TypedDict):
    kind: str  # untrusted, hostname, expired, not-tls, timeout, refused, unreachable, verify
    message: str
    fix: str
    server: str  # host:port


class Handshakes(TypedDict):
    seen: list[str]  # host:port of each broker that completed a handshake, in order
    refused: list[TlsRefusal]  # each that did not, in order


UNREACHED = ("timeout", "refused", "unreachable")  # refusals that say nothing of the certificate


@final
class CaCount(TypedDict):
    count: int  # CA certificates in the PEM file


@final
class KeyMatch(TypedDict):
    matches: bool  # the certificate is the key's
    pbes2: bool  # the key is PBES2-encrypted (asked only when it matches)


def handshakes(brokers: list[tuple[str, int]], ctx: ssl.SSLContext, timeout: float) -> Handshakes:
    """A TLS handshake with each broker in turn (one that cannot be reached does not stop the others)."""
    answer: Handshakes = {"seen": [], "refused": []}
    for host, port in brokers:
        try:
            handshake(host, port, ctx, timeout)
        except TlsFailure as exc:
            answer["refused"].append(TlsRefusal(kind=exc.kind, message=str(exc), fix=exc.fix, server=f"{host}:{port}"))
            continue
        answer["seen"].append(f"{host}:{port}")
    return answer


def handshake(host: str, port: int, ctx: ssl.SSLContext, timeout: float) -> dict:
    """Complete a TLS handshake; the peer certificate's subject and expiry, or :class:`TlsFailure`."""
    try:
        with socket.create_connection((host, port), timeout=timeout) as sock:
            with ctx.wrap_socket(sock, server_hostname=host) as tls:
                cert: dict[str, Any] = dict(tls.getpeercert() or {})
                return {"subject": dict(x[0] for x in cert.get("subject", ())), "not_after": cert.get("notAfter")}
    except ssl.SSLCertVerificationError as exc:
        raise _verify_failure(exc, host) from None
    except (ssl.SSLError, ConnectionResetError, ssl.SSLEOFError) as exc:
        raise TlsFailure(
            "not-tls",
            f"{host}:{port} does not complete a TLS handshake ({_short(exc)}): the port "
            "probably serves PLAINTEXT or SASL_PLAINTEXT",
            "use the broker's SSL/SASL_SSL listener port, or set security_protocol to match",
        ) from None
    except (TimeoutError, socket.timeout):
        raise TlsFailure(
            "timeout",
            f"{host}:{port} gave no answer within {timeout:g}s",
            "check the host and port in bootstrap_servers and the firewall",
        ) from None
    except ConnectionRefusedError:
        raise TlsFailure(
            "refused",
            f"nothing listens on {host}:{port} (connection refused)",
            "check the port in bootstrap_servers (the broker's SASL_SSL/SSL listener)",
        ) from None
    except OSError as exc:
        raise TlsFailure(
            "unreachable",
            f"cannot reach {host}:{port}: {exc.strerror or exc}",
            "check the host name in bootstrap_servers, DNS and routing",
        ) from None


def _short(exc: Exception) -> str:
    return getattr(exc, "reason", None) or type(exc).__name__


def _verify_failure(exc: ssl.SSLCertVerificationError, host: str) -> TlsFailure:
    code = exc.verify_code
    if code in _UNTRUSTED:
        return TlsFailure(
            "untrusted",
            f"the certificate of {host} does not chain to the configured CA ({exc.verify_message})",
            "set tls.ca to the CA that signed the brokers' certificates",
        )
    if code == _HOSTNAME_MISMATCH:
        return TlsFailure(
            "hostname",
            f"the certificate of {host} does not name {host} ({exc.verify_message})",
            "connect with a host name the certificate lists (subjectAltName), or re-issue it",
        )
    if code == _EXPIRED:
        return TlsFailure("expired", f"the certificate of {host} has expired", "renew the broker's certificate")
    return TlsFailure(
        "verify",
        f"the certificate of {host} was refused: {exc.verify_message}",
        "check tls.ca and the broker's certificate chain",
    )


def ca_bundle(path: Path) -> CaCount | Failed:
    """The CA certificates in the PEM file, or why it is not a PEM CA bundle."""
    try:
        return {"count": ca_certificates(path)}
    except (OSError, ValueError) as exc:
        return {"error": str(exc)}


def client_certificate(certificate: Path, key: Path, password: bytes | None) -> KeyMatch | Failed:
    """Whether the certificate is the key's (and the key's encryption), or why the files cannot be read."""
    try:
        matches = certificate_matches_key(certificate, key, password)
    except (OSError, ValueError, TypeError) as exc:
        return {"error": str(exc)}
    return {"matches": matches, "pbes2": matches and pbes2_encrypted(key)}


def ca_certificates(path: Path) -> int:
    """How many CA certificates ``path`` holds (PEM); ValueError when it holds none or does not parse."""
    from cryptography import x509

    certs = x509.load_pem_x509_certificates(Path(path).read_bytes())
    return len(certs)


PBES2_OID = bytes.fromhex("06092a864886f70d01050d")  # 1.2.840.113549.1.5.13


def pbes2_encrypted(key: Path) -> bool:
    """True for an ENCRYPTED PRIVATE KEY (PKCS#8) whose encryption scheme is PBES2: Java 17's
    ``EncryptedPrivateKeyInfo`` (Kafka's PEM keystore) finds no "PBES2 SecretKeyFactory" for it."""
    import base64

    text = Path(key).read_text(encoding="ascii", errors="replace")
    begin, end = "-----BEGIN ENCRYPTED PRIVATE KEY-----", "-----END ENCRYPTED PRIVATE KEY-----"
    if begin not in text or end not in text:
        return False
    der = base64.b64decode("".join(text.split(begin, 1)[1].split(end, 1)[0].split()))
    return PBES2_OID in der[:32]


def certificate_matches_key(certificate: Path, key: Path, password: bytes | None = None) -> bool:
    from cryptography import x509
    from cryptography.hazmat.primitives import serialization

    cert = x509.load_pem_x509_certificate(Path(certificate).read_bytes())
    private = serialization.load_pem_private_key(Path(key).read_bytes(), password)
    fmt = (serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo)
    return cert.public_key().public_bytes(*fmt) == private.public_key().public_bytes(*fmt)
