"""Kerberos with the ``gssapi`` package: read a keytab, get an initial ticket into a private in-memory cache,
ask for a broker's service ticket; and the typed errors a security engineer recognises.

No ``kinit``, no change to the process environment: credentials are acquired with a credential store
(``client_keytab`` + a ``MEMORY:`` cache named per side), so two sides never share a cache. Which krb5.conf
the library reads is decided by the process's ``KRB5_CONFIG``: the runner starts one process per side for that.
``keytab_entries``, ``login`` and ``service_tickets`` answer as plain data (a failure as its kind, sentence and fix).
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from pathlib import Path
from typing import TypedDict, final

from secure_mirror.preflight.probes import Failed
from secure_mirror.profile.principals import parse_principal

# krb5 error codes (com_err table "krb5", base -1765328384) as carried in GSS minor status codes.
_KRB5 = -1765328384
KINDS = {
    _KRB5 + 6: "unknown-client",  # KRB5KDC_ERR_C_PRINCIPAL_UNKNOWN
    _KRB5 + 7: "server-not-found",  # KRB5KDC_ERR_S_PRINCIPAL_UNKNOWN
    _KRB5 + 18: "client-revoked",  # KRB5KDC_ERR_CLIENT_REVOKED
    _KRB5 + 14: "enctype-unsupported",  # KRB5KDC_ERR_ETYPE_NOSUPP
    _KRB5 + 23: "key-expired",  # KRB5KDC_ERR_KEY_EXP
    _KRB5 + 24: "wrong-key",  # KRB5KDC_ERR_PREAUTH_FAILED
    _KRB5 + 31: "wrong-key",  # KRB5KRB_AP_ERR_BAD_INTEGRITY
    _KRB5 + 37: "clock-skew",  # KRB5KRB_AP_ERR_SKEW
    -1765328228: "kdc-unreachable",  # KRB5_KDC_UNREACH
    -1765328164: "kdc-unreachable",  # KRB5_REALM_CANT_RESOLVE
    -1765328203: "not-in-keytab",  # KRB5_KT_NOTFOUND
    -1765328198: "wrong-key",  # KRB5_KT_KVNONOTFOUND
}
ENCTYPES = {
    17: "aes128-cts-hmac-sha1-96",
    18: "aes256-cts-hmac-sha1-96",
    19: "aes128-cts-hmac-sha256-128",
    20: "aes256-cts-hmac-sha384-192",
    23: "arcfour-hmac",
    25: "camellia128-cts-cmac",
    26: "camellia256-cts-cmac",
    16: "des3-cbc-sha1",
    1: "des-cbc-crc",
    3: "des-cbc-md5",
}
WEAK_ENCTYPES = {"arcfour-hmac", "des3-cbc-sha1", "des-cbc-crc", "des-cbc-md5"}


class KerberosRefusal(TypedDict):
    kind: str  # one of KINDS
    message: str
    fix: str


class HostRefusal(KerberosRefusal):
    host: str  # whose service ticket was refused


@final
class KeytabRead(TypedDict):
    entries: list[KeytabEntry]


@final
class Login(TypedDict):
    lifetime: int  # seconds the initial ticket lives


@final
class LoginRefused(TypedDict):
    failure: KerberosRefusal


class ServiceTickets(TypedDict):
    hosts: list[str]  # the hosts asked, in order
    failure: HostRefusal | None  # the first refusal (the hosts after it are not asked)


class KerberosFailure(Exception):
    """A Kerberos failure with its kind (see ``KINDS``), a sentence naming what is wrong, and the fix."""

    def __init__(self, kind: str, message: str, fix: str):
        super().__init__(message)
        self.kind, self.fix = kind, fix

    def answer(self) -> KerberosRefusal:
        return {"kind": self.kind, "message": str(self), "fix": self.fix}


# ---- keytab (MIT file format 0x0502) ------------------------------------------------------------------
@dataclass(frozen=True)
class KeytabEntry:
    principal: str
    kvno: int
    enctype: str


def read_keytab(path: Path) -> list[KeytabEntry]:
    data = Path(path).read_bytes()
    if data[:2] != b"\x05\x02":
        raise ValueError("not an MIT keytab (version 0x0502)")
    entries, pos = [], 2
    while pos + 4 <= len(data):
        (size,) = struct.unpack_from(">i", data, pos)
        pos += 4
        if size > 0:
            entries.append(_keytab_entry(data[pos : pos + size]))
        pos += abs(size)
    return entries


def _keytab_entry(rec: bytes) -> KeytabEntry:
    def counted(at: int) -> tuple[str, int]:
        (n,) = struct.unpack_from(">H", rec, at)
        return rec[at + 2 : at + 2 + n].decode("utf-8", "replace"), at + 2 + n

    (ncomp,) = struct.unpack_from(">H", rec, 0)
    realm, at = counted(2)
    comps = []
    for _ in range(ncomp):
        comp, at = counted(at)
        comps.append(comp)
    at += 8  # name type, timestamp
    kvno = rec[at]
    (enctype,) = struct.unpack_from(">H", rec, at + 1)
    (keylen,) = struct.unpack_from(">H", rec, at + 3)
    at += 5 + keylen
    if len(rec) >= at + 4:
        (kvno32,) = struct.unpack_from(">I", rec, at)
        kvno = kvno32 or kvno
    return KeytabEntry(f"{'/'.join(comps)}@{realm}", kvno, ENCTYPES.get(enctype, f"enctype-{enctype}"))


def keytab_entries(path: Path) -> KeytabRead | Failed:
    """The keytab's entries, or why the file is not a keytab."""
    try:
        return {"entries": read_keytab(path)}
    except (OSError, ValueError) as exc:
        return {"error": str(exc)}


# ---- tickets ------------------------------------------------------------------------------------------
def login(principal: str, keytab: Path, cache: str) -> tuple[object | None, Login | LoginRefused]:
    """(credentials, their lifetime) from the KDC, or (None, why it refused)."""
    try:
        creds = initial_ticket(principal, keytab, cache)
    except KerberosFailure as exc:
        return None, {"failure": exc.answer()}
    return creds, {"lifetime": creds.lifetime}


def service_tickets(creds, service: str, hosts: list[str]) -> ServiceTickets:
    """A ticket for ``service/host`` of each host, up to the KDC's first refusal."""
    hosts = sorted(set(hosts))
    for host in hosts:
        try:
            service_ticket(creds, service, host)
        except KerberosFailure as exc:
            return {"hosts": hosts, "failure": {**exc.answer(), "host": host}}
    return {"hosts": hosts, "failure": None}


def _signed(code: int) -> int:
    return code - 2**32 if code >= 2**31 else code


def failure_kind(error: Exception) -> str:
    kind = KINDS.get(_signed(getattr(error, "min_code", 0) or 0))
    if kind:
        return kind
    text = str(error)
    for needle, name in (
        ("Cannot contact any KDC", "kdc-unreachable"),
        ("not found in Kerberos database", "server-not-found"),
        ("Clock skew", "clock-skew"),
        ("integrity check failed", "wrong-key"),
    ):
        if needle in text:
            return name
    return "other"


def initial_ticket(principal: str, keytab: Path, cache: str):
    """Credentials for ``principal`` from ``keytab`` in the in-memory cache ``cache`` (asks the KDC now)."""
    import gssapi

    store: dict[bytes | str, bytes | str] = {
        b"client_keytab": str(keytab).encode(),
        b"ccache": f"MEMORY:{cache}".encode(),
    }
    name = gssapi.Name(principal, gssapi.NameType.kerberos_principal)
    try:
        creds = gssapi.Credentials(name=name, usage="initiate", store=store)
        creds.lifetime  # noqa: B018 - inquiring forces the AS exchange with the KDC
    except gssapi.exceptions.GSSError as exc:
        raise client_failure(exc, principal, keytab) from None
    return creds


def service_ticket(creds, service: str, host: str) -> None:
    """Ask the KDC for ``service/host`` as Kafka clients do (host-based service name, realm from domain_realm)."""
    import gssapi

    target = gssapi.Name(f"{service}@{host}", gssapi.NameType.hostbased_service)
    ctx = gssapi.SecurityContext(name=target, creds=creds, usage="initiate", mech=gssapi.MechType.kerberos)
    try:
        ctx.step()
    except gssapi.exceptions.GSSError as exc:
        raise server_failure(exc, service, host) from None


def client_failure(exc: Exception, principal: str, keytab: Path) -> KerberosFailure:
    kind = failure_kind(exc)
    realm = parse_principal(principal).realm
    text = {
        "unknown-client": (
            f"the KDC of {realm} has no principal {principal}",
            f"create it (kadmin: addprinc -randkey {principal}) and export its keytab, or fix sasl.principal",
        ),
        "wrong-key": (
            f"the keys in {keytab} for {principal} do not match the KDC's: the keytab is out of date "
            "(the key was rotated to a newer version) or belongs to another principal",
            f"export a fresh keytab (kadmin: ktadd -norandkey -k {keytab} {principal}) and deploy it",
        ),
        "kdc-unreachable": (
            f"no KDC of {realm} answered",
            f"check kerberos.realms.{realm}.kdcs (host:port), that the KDC runs, and the firewall",
        ),
        "clock-skew": (
            f"this machine's clock differs from the KDC of {realm} by more than the allowed skew",
            "synchronise the clock with NTP (chrony/timedatectl)",
        ),
        "client-revoked": (
            f"the KDC refuses {principal}: the principal is locked or disabled",
            f"unlock it (kadmin: modprinc -unlock {principal}) or ask the KDC's administrators",
        ),
        "key-expired": (f"the key of {principal} has expired", "change it and export a new keytab"),
        "not-in-keytab": (
            f"{keytab} has no key for {principal}",
            "export the principal's keys into the keytab or fix sasl.keytab / sasl.principal",
        ),
    }.get(kind, (f"no initial ticket for {principal}: {exc}", "see the Kerberos message"))
    return KerberosFailure(kind, *text)


def server_failure(exc: Exception, service: str, host: str) -> KerberosFailure:
    kind = failure_kind(exc)
    spn = f"{service}/{host}"
    text = {
        "server-not-found": (
            f"the KDC has no principal {spn} (the broker's service principal as Kafka asks for it)",
            f"check the broker's SPN in its keytab/JAAS, the host name in bootstrap_servers, "
            f"and sasl.service_name ('{service}')",
        ),
        "kdc-unreachable": (
            f"no KDC answered for the realm of {host}",
            "check [domain_realm] maps the broker's domain to a realm with reachable KDCs",
        ),
        "clock-skew": (f"clock skew with the KDC while asking for {spn}", "synchronise the clock with NTP"),
        "enctype-unsupported": (
            f"{spn} has no key of an encryption type this client accepts",
            "re-key the broker principal with aes256/aes128 enctypes",
        ),
    }.get(kind, (f"no service ticket for {spn}: {exc}", "see the Kerberos message"))
    return KerberosFailure(kind, *text)
