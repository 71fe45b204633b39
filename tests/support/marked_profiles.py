"""Generated profiles whose every secret is a distinctive marker, for the scans of ``render --secrets references``
(tests/unit/render/test_secret_references.py, test_reference_readers.py). Each secret is an ``env:`` or ``file:``
reference at random; files are written without a trailing line break (a reference reads a file whole)."""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from pathlib import Path

from tests.support import profiles as pf

KINDS = ("gssapi", "SCRAM-SHA-256", "SCRAM-SHA-512", "PLAIN", "oauth", "mutual-tls", "plaintext")
SPARK = ({}, {"master": "yarn", "deploy_mode": "cluster"}, {"master": "k8s://https://k8s.example.com:6443"})


@dataclass
class Marked:
    """A profile's data, the variables to set for it, and each secret's field -> its marker value."""

    case: str
    env: dict[str, str] = field(default_factory=dict)
    secrets: dict[str, str] = field(default_factory=dict)
    data: dict = field(default_factory=dict)

    def secret(self, tmp: Path, rng: random.Random, name: str) -> str:
        """A new marker for the profile field ``name``, as an env: or a file: reference."""
        value = f"MARK{self.case}Q{name.replace('.', 'Q')}Q{rng.randrange(10**9)}"
        self.secrets[name] = value
        if rng.random() < 0.5:
            variable = f"SM_MARK_{self.case}_{name.replace('.', '_')}".upper()
            self.env[variable] = value
            return f"env:{variable}"
        path = tmp / "secrets" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(value, encoding="utf-8")
        path.chmod(0o600)
        return f"file:{path}"


def _side(tmp: Path, side: str, kind: str, rng: random.Random, marked: Marked, full: bool) -> dict:
    if kind == "plaintext":
        return pf.plaintext(tmp, side)
    if kind == "mutual-tls":
        cluster = pf.mutual_tls(tmp, side)
        if full or rng.random() < 0.5:
            cluster["tls"]["key_password"] = marked.secret(tmp, rng, f"{side}.tls.key_password")
        key = Path(cluster["tls"]["key"]).read_text().splitlines()
        marked.secrets[f"{side}.tls.key"] = key[1]  # a line of the private key itself
        return cluster
    cluster = pf.gssapi(tmp, side, rng.choice(["SASL_SSL", "SASL_PLAINTEXT"]))
    if kind == "oauth":
        cluster = pf.oauth(tmp, side)
        cluster["sasl"]["client_secret"] = marked.secret(tmp, rng, f"{side}.sasl.client_secret")
    elif kind != "gssapi":
        password = marked.secret(tmp, rng, f"{side}.sasl.password")
        cluster["sasl"] = {"mechanism": kind, "username": "mirror", "password": password}
    if "tls" in cluster and (full or rng.random() < 0.4):  # a JKS truststore and its password
        store = tmp / side / "truststore.jks"
        store.write_bytes(b"\xfe\xed\xfe\xed" + bytes(28))
        cluster["tls"]["ca"] = str(store)
        cluster["tls"]["truststore_password"] = marked.secret(tmp, rng, f"{side}.tls.truststore_password")
    return cluster


def marked_profile(
    tmp: Path, rng: random.Random, case: str, kinds: tuple[str, str] | None = None, full: bool = False
) -> Marked:
    """A profile of two sides of random ``KINDS`` (or ``kinds``) and a random Spark master; ``full``: every optional
    secret present (a JKS truststore's password, the key's password)."""
    marked = Marked(case)
    source_kind, target_kind = kinds or (rng.choice(KINDS), rng.choice(KINDS))
    source = _side(tmp, "source", source_kind, rng, marked, full)
    target = _side(tmp, "target", target_kind, rng, marked, full)
    marked.data = pf.profile_data(tmp, source, target, spark=dict(rng.choice(SPARK)))
    return marked
