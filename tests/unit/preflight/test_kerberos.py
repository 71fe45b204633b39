"""Keytab reading and the typed Kerberos errors (GSS minor codes -> a sentence and a fix)."""

from __future__ import annotations

import struct

import pytest

from secure_mirror.preflight.probes import kerberos


def keytab_bytes(entries: list[tuple[str, int, int]]) -> bytes:
    """An MIT keytab (0x0502) with one entry per (principal, kvno, enctype)."""
    out = b"\x05\x02"
    for principal, kvno, enctype in entries:
        name, realm = principal.rsplit("@", 1)
        comps = name.split("/")
        rec = struct.pack(">H", len(comps)) + struct.pack(">H", len(realm)) + realm.encode()
        for comp in comps:
            rec += struct.pack(">H", len(comp)) + comp.encode()
        rec += struct.pack(">IIB", 1, 0, kvno % 256) + struct.pack(">HH", enctype, 32) + b"k" * 32
        rec += struct.pack(">I", kvno)
        out += struct.pack(">i", len(rec)) + rec
    return out


def test_read_keytab_lists_principals_key_versions_and_enctypes(tmp_path):
    path = tmp_path / "k.keytab"
    path.write_bytes(
        keytab_bytes(
            [("mirror/h.example@EXAMPLE", 3, 18), ("mirror/h.example@EXAMPLE", 300, 17), ("other@EXAMPLE", 1, 23)]
        )
    )
    entries = kerberos.read_keytab(path)
    assert [(e.principal, e.kvno, e.enctype) for e in entries] == [
        ("mirror/h.example@EXAMPLE", 3, "aes256-cts-hmac-sha1-96"),
        ("mirror/h.example@EXAMPLE", 300, "aes128-cts-hmac-sha1-96"),  # the 32-bit kvno beats the 8-bit one
        ("other@EXAMPLE", 1, "arcfour-hmac"),
    ]


def test_read_keytab_refuses_other_files(tmp_path):
    path = tmp_path / "k.keytab"
    path.write_text("not a keytab")
    with pytest.raises(ValueError, match="not an MIT keytab"):
        kerberos.read_keytab(path)


class FakeGssError(Exception):  # the two attributes gssapi.exceptions.GSSError carries
    def __init__(self, min_code: int, text: str = ""):
        super().__init__(text)
        self.min_code = min_code


@pytest.mark.parametrize(
    "minor, kind",
    [
        (2529638918, "unknown-client"),
        (2529638919, "server-not-found"),
        (2529638943, "wrong-key"),
        (2529638936, "wrong-key"),
        (2529638949, "clock-skew"),
        (2529639068, "kdc-unreachable"),
        (12345, "other"),
    ],
)
def test_minor_codes_map_to_kinds(minor, kind):  # minor codes as gssapi reports them (unsigned 32-bit)
    assert kerberos.failure_kind(FakeGssError(minor)) == kind


def test_typed_messages_name_the_principal_and_the_fix():
    wrong = kerberos.client_failure(FakeGssError(2529638943), "mirror/h@EX", "/k.keytab")
    assert wrong.kind == "wrong-key" and "out of date" in str(wrong) and "ktadd" in wrong.fix
    skew = kerberos.client_failure(FakeGssError(2529638949), "mirror/h@EX", "/k.keytab")
    assert str(skew) == "this machine's clock differs from the KDC of EX by more than the allowed skew"
    spn = kerberos.server_failure(FakeGssError(2529638919), "kafka", "b1.example")
    assert str(spn).startswith("the KDC has no principal kafka/b1.example") and "service_name" in spn.fix
