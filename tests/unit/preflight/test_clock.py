"""The KDC clock probe's encoding and parsing (the real KDC reads and answers it in
tests/integration/test_clock_skew.py)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from secure_mirror.preflight.probes import clock
from secure_mirror.preflight.probes.clock import _context, _der, _integer, _sequence, _string


def krb_error(stime: str, usec: int | None, code: int) -> bytes:
    fields = [_context(0, _integer(5)), _context(1, _integer(30)), _context(4, _der(0x18, stime.encode()))]
    if usec is not None:
        fields.append(_context(5, _integer(usec)))
    fields += [_context(6, _integer(code)), _context(9, _string("SOURCE.TEST"))]
    return _der(0x7E, _sequence(*fields))


def test_the_kdc_time_and_error_code_are_read_from_a_krb_error():
    when, resolution, code = clock.krb_error_time(krb_error("20261122183005Z", 250000, 14))
    assert when == datetime(2026, 11, 22, 18, 30, 5, 250000, tzinfo=UTC).timestamp()
    assert (resolution, code) == (1e-6, 14)
    assert clock.krb_error_time(krb_error("20261122183005Z", None, 6))[1:] == (1.0, 6)


@pytest.mark.parametrize(
    "reply, reason",
    [
        (b"", "cut short"),
        (_der(0x6B, _sequence()), "issued a ticket"),
        (_der(0x30, b""), "not a Kerberos error"),
        (krb_error("20261122183005Z", 1, 14)[:-5], "cut short"),
        (_der(0x7E, _sequence(_context(6, _integer(14)))), "no server time"),
        (krb_error("yesterday", 0, 14), "not a KerberosTime"),
    ],
)
def test_answers_without_a_readable_time_are_refused_with_a_reason(reply, reason):
    with pytest.raises(clock.ClockProbeError, match=reason):
        clock.krb_error_time(reply)


def test_the_request_offers_only_des_for_the_principal_and_krbtgt():
    request = clock.as_req("mirror/host.example", "EXAMPLE.COM", 12345)
    assert request[0] == 0x6A  # [APPLICATION 10] AS-REQ
    for text in (b"mirror", b"host.example", b"EXAMPLE.COM", b"krbtgt"):
        assert text in request
    assert _context(8, _sequence(_integer(clock.DES_CBC_CRC))) in request


@pytest.mark.parametrize(
    "kdc, expected",
    [
        ("kdc.example:750", ("kdc.example", 750)),
        ("kdc.example", ("kdc.example", 88)),
        ("[::1]:7088", ("::1", 7088)),
        ("[::1]", ("::1", 88)),
    ],
)
def test_kdc_addresses(kdc, expected):
    assert clock.split_kdc(kdc) == expected


def test_long_lengths_round_trip():
    content = b"x" * 300
    assert clock._read(_der(0x04, content), 0) == (0x04, content, 304)
