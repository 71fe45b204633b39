"""Kafka's PEM keystore on Java 17 cannot read PBES2-encrypted keys (openssl's default): pre-flight says so."""

from __future__ import annotations

import subprocess

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec

from secure_mirror.preflight.probes.tls import pbes2_encrypted


def test_pbes2_keys_are_recognised_and_pbes1_plain_keys_are_not(tmp_path):
    key = ec.generate_private_key(ec.SECP256R1())
    plain, pbes2, pbes1 = tmp_path / "plain.key", tmp_path / "pbes2.key", tmp_path / "pbes1.key"
    plain.write_bytes(
        key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    )
    pbes2.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.BestAvailableEncryption(b"pw")
        )
    )
    subprocess.run(
        [
            "openssl",
            "pkcs8",
            "-topk8",
            "-v1",
            "PBE-SHA1-3DES",
            "-in",
            str(plain),
            "-out",
            str(pbes1),
            "-passout",
            "stdin",
        ],
        input=b"pw",
        check=True,
        capture_output=True,
    )
    assert pbes2_encrypted(pbes2)
    assert not pbes2_encrypted(pbes1)
    assert not pbes2_encrypted(plain)
