"""How far a KDC's clock is from ours, measured, not guessed from an error.

Kerberos refuses an authenticator whose time differs from the receiver's clock by more than the allowed skew
(``clockskew``, 300 s by default in MIT krb5 and the JDK). MIT's own client quietly adjusts to the KDC's time, so a
ticket from ``kinit`` proves nothing about the clock; Kafka's Java client and the brokers do not adjust. So we ask:
every KRB-ERROR a KDC sends carries its time (``stime``, ``susec``). The probe sends an AS-REQ for the mirror's
principal that offers only ``des-cbc-crc``, which no current KDC accepts: the KDC answers KDC_ERR_ETYPE_NOSUPP (or
another error) with its clock, issues nothing, and no key or password is involved. The offset is the KDC's time
minus the midpoint of our send and receive times; the error is about half the round trip (plus a second
allowed for a KDC that stamps its reply with a clock read a moment earlier: MIT's KDC was seen 0.3 s stale).

The brokers' clocks cannot be read over Kafka's protocol (no request returns the broker's time without writing a
record): they are not measured.
"""

from __future__ import annotations

import secrets
import socket
import struct
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TypedDict

from secure_mirror.preflight.probes.wire import recv_exactly

DEFAULT_MAX_SKEW_S = 300.0  # MIT krb5's and the JDK's default clockskew
DEFAULT_KDC_PORT = 88
DES_CBC_CRC = 1  # refused by every current KDC: the request can only get an error back


class ClockProbeError(Exception):
    """The KDC could not be asked, or its answer carried no time."""


@dataclass(frozen=True)
class KdcClock:
    kdc: str  # host:port as asked
    offset_s: float  # the KDC's clock minus ours
    uncertainty_s: float  # half the round trip
    error_code: int | None  # the KRB-ERROR code the KDC answered with


# ---- DER, only what an AS-REQ and a KRB-ERROR need ------------------------------------------------------
def _der(tag: int, content: bytes) -> bytes:
    n = len(content)
    if n < 0x80:
        length = bytes([n])
    else:
        raw = n.to_bytes((n.bit_length() + 7) // 8, "big")
        length = bytes([0x80 | len(raw)]) + raw
    return bytes([tag]) + length + content


def _integer(value: int) -> bytes:
    return _der(0x02, value.to_bytes(max(1, (value.bit_length() + 8) // 8), "big", signed=True))


def _string(value: str) -> bytes:
    return _der(0x1B, value.encode("utf-8"))  # GeneralString


def _context(number: int, content: bytes) -> bytes:
    return _der(0xA0 + number, content)


def _sequence(*items: bytes) -> bytes:
    return _der(0x30, b"".join(items))


def _principal_name(name_type: int, components: list[str]) -> bytes:
    return _sequence(_context(0, _integer(name_type)), _context(1, _sequence(*map(_string, components))))


def as_req(principal: str, realm: str, nonce: int, etypes: tuple[int, ...] = (DES_CBC_CRC,)) -> bytes:
    """An AS-REQ (RFC 4120 5.4.1) for ``krbtgt/realm`` as ``principal`` (without its realm), no pre-authentication."""
    till = datetime.fromtimestamp(time.time() + 3600, UTC).strftime("%Y%m%d%H%M%SZ").encode()
    body = _sequence(
        _context(0, _der(0x03, b"\x00" + b"\x00\x00\x00\x00")),  # kdc-options: none
        _context(1, _principal_name(1, principal.split("/"))),  # NT-PRINCIPAL
        _context(2, _string(realm)),
        _context(3, _principal_name(2, ["krbtgt", realm])),  # NT-SRV-INST
        _context(5, _der(0x18, till)),
        _context(7, _integer(nonce)),
        _context(8, _sequence(*map(_integer, etypes))),
    )
    return _der(0x6A, _sequence(_context(1, _integer(5)), _context(2, _integer(10)), _context(4, body)))


def _read(data: bytes, at: int) -> tuple[int, bytes, int]:
    """(tag, content, position after) of the DER element at ``at``."""
    if at + 2 > len(data):
        raise ClockProbeError("the KDC's answer is cut short")
    tag, first = data[at], data[at + 1]
    at += 2
    if first & 0x80:
        count = first & 0x7F
        if count == 0 or count > 4 or at + count > len(data):
            raise ClockProbeError("the KDC's answer is not DER")
        length = int.from_bytes(data[at : at + count], "big")
        at += count
    else:
        length = first
    if at + length > len(data):
        raise ClockProbeError("the KDC's answer is cut short")
    return tag, data[at : at + length], at + length


def krb_error_time(reply: bytes) -> tuple[float, float, int]:
    """(the KDC's time as a POSIX timestamp, its resolution in seconds, the error code) from a KRB-ERROR
    (RFC 4120 5.9.1)."""
    tag, content, _ = _read(reply, 0)
    if tag == 0x6B:  # AS-REP: a ticket was issued, whose times are encrypted
        raise ClockProbeError("the KDC issued a ticket for a request it should refuse; its time is not readable")
    if tag != 0x7E:
        raise ClockProbeError(f"the answer is not a Kerberos error (tag 0x{tag:02x})")
    tag, fields, _ = _read(content, 0)
    if tag != 0x30:
        raise ClockProbeError("the KRB-ERROR is not a SEQUENCE")
    found: dict[int, bytes] = {}
    at = 0
    while at < len(fields):
        tag, value, at = _read(fields, at)
        if 0xA0 <= tag <= 0xBF:
            found[tag - 0xA0] = value
    if 4 not in found or 6 not in found:
        raise ClockProbeError("the KRB-ERROR carries no server time")
    _, stime, _ = _read(found[4], 0)
    usec = int.from_bytes(_read(found[5], 0)[1], "big", signed=True) if 5 in found else 0
    code = int.from_bytes(_read(found[6], 0)[1], "big", signed=True)
    try:
        when = datetime.strptime(stime.decode("ascii"), "%Y%m%d%H%M%SZ").replace(tzinfo=UTC)
    except (UnicodeDecodeError, ValueError):
        raise ClockProbeError("the KRB-ERROR's server time is not a KerberosTime") from None
    return when.timestamp() + usec / 1e6, 1e-6 if 5 in found else 1.0, code


# ---- asking ---------------------------------------------------------------------------------------------
def split_kdc(kdc: str) -> tuple[str, int]:
    """``host[:port]`` (``[v6]:port`` too) -> (host, port); port 88 when none is given."""
    if kdc.startswith("["):
        host, _, rest = kdc[1:].partition("]")
        return host, int(rest[1:]) if rest.startswith(":") else DEFAULT_KDC_PORT
    host, sep, port = kdc.rpartition(":")
    return (host, int(port)) if sep and port.isdigit() else (kdc, DEFAULT_KDC_PORT)


STALE_S = 1.0  # a KDC may stamp its reply with the time its event loop read last (seen: 0.3 s on loopback)


def measure(kdc: str, principal: str, realm: str, timeout: float = 5.0) -> KdcClock:
    """Ask ``kdc`` (host:port) for its time over TCP, else UDP (see the module doc)."""
    host, port = split_kdc(kdc)
    request = as_req(principal.split("@", 1)[0], realm, secrets.randbits(31))
    try:
        sent, received, reply = _ask_tcp(host, port, request, timeout)
    except (OSError, ClockProbeError) as tcp_error:
        try:
            sent, received, reply = _ask_udp(host, port, request, timeout)
        except OSError:
            raise ClockProbeError(f"cannot ask the KDC {kdc}: {tcp_error}") from None
    kdc_time, resolution, code = krb_error_time(reply)
    return KdcClock(kdc, kdc_time - (sent + received) / 2, (received - sent) / 2 + resolution + STALE_S, code)


class KdcClocks(TypedDict):
    measured: list[KdcClock]
    failed: list[str]  # why a KDC could not be asked


def measure_all(kdcs: list[str], principal: str, realm: str, timeout: float) -> KdcClocks:
    """Each of ``kdcs``'s clock, asked in turn."""
    measured, failed = [], []
    for kdc in kdcs:
        try:
            measured.append(measure(kdc, principal, realm, timeout))
        except ClockProbeError as exc:
            failed.append(str(exc))
    return {"measured": measured, "failed": failed}


def _ask_tcp(host: str, port: int, request: bytes, timeout: float) -> tuple[float, float, bytes]:
    with socket.create_connection((host, port), timeout=timeout) as conn:
        sent = time.time()
        conn.sendall(struct.pack(">I", len(request)) + request)
        header = recv_exactly(conn, 4, ClockProbeError, "the KDC")
        received = time.time()
        (length,) = struct.unpack(">I", header)
        if length > 1 << 20:
            raise ClockProbeError("the KDC's answer is implausibly long")
        return sent, received, recv_exactly(conn, length, ClockProbeError, "the KDC")


def _ask_udp(host: str, port: int, request: bytes, timeout: float) -> tuple[float, float, bytes]:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_DGRAM) as conn:
        conn.settimeout(timeout)
        sent = time.time()
        conn.sendto(request, (host, port))
        reply = conn.recv(65535)
        return sent, time.time(), reply
