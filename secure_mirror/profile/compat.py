"""What the real clients refuse at start, refused at validate instead (one sentence each, naming the field).

Found by tests/integration/test_client_start.py, which constructs Kafka's Java clients (what Spark and
MirrorMaker 2 run) and librdkafka on the rendered files for every TLS/SASL combination the schema allows:
- Kafka's PEM keystore (``ssl.keystore.key``) reads RSA, EC and DSA keys only: an Ed25519/Ed448 key fails with
  "Not a SEQUENCE" when the client is constructed;
- on Java 17 it cannot decrypt a PKCS#8 key encrypted with PBES2 (openssl's and Python's default):
  "PBES2 SecretKeyFactory not available".
"""

from __future__ import annotations

import base64
from pathlib import Path

from secure_mirror.profile.models import Profile

PBES2_OID = bytes.fromhex("06092a864886f70d01050d")  # 1.2.840.113549.1.5.13
_ENCRYPTED = ("-----BEGIN ENCRYPTED PRIVATE KEY-----", "-----END ENCRYPTED PRIVATE KEY-----")


def client_problems(profile: Profile) -> list[str]:
    """One sentence per setting a Java Kafka client or librdkafka would refuse at start."""
    problems: list[str] = []
    for side, cluster in profile.clusters().items():
        tls = cluster.tls
        if tls is not None and tls.key is not None:
            problems.extend(f"{side}.tls.key: {problem}" for problem in _key_problems(Path(tls.key)))
    return problems


def _key_problems(key: Path) -> list[str]:
    text = key.read_text(encoding="ascii", errors="replace")
    if _ENCRYPTED[0] in text and _ENCRYPTED[1] in text:
        der = base64.b64decode("".join(text.split(_ENCRYPTED[0], 1)[1].split(_ENCRYPTED[1], 1)[0].split()))
        if PBES2_OID in der[:32]:
            return [
                "the key is encrypted with PBES2 (openssl's default), which Kafka's Java client (Spark, "
                "MirrorMaker 2) cannot decrypt on Java 17; re-encrypt it with "
                "`openssl pkcs8 -topk8 -v1 PBE-SHA1-3DES -in KEY -out NEW.key`"
            ]
        return []
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import dsa, ec, rsa

    try:
        loaded = serialization.load_pem_private_key(key.read_bytes(), password=None)
    except (TypeError, ValueError):  # encrypted or unreadable: the field's own check says so
        return []
    if not isinstance(loaded, (rsa.RSAPrivateKey, ec.EllipticCurvePrivateKey, dsa.DSAPrivateKey)):
        kind = type(loaded).__name__.removesuffix("PrivateKey")
        return [
            f"Kafka's Java client (Spark, MirrorMaker 2) reads only RSA, EC and DSA keys from PEM, not "
            f"{kind}; issue the client certificate with an RSA or EC key"
        ]
    return []
