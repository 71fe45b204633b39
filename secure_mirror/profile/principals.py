"""Kerberos principal names and the Kafka principal an authorizer sees for them."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from secure_mirror.profile import kafka_names

# primary[/instance]@REALM; '/' and '@' may not appear unescaped inside a component.
_PRINCIPAL = re.compile(r"^(?P<primary>[^/@\s]+)(?:/(?P<instance>[^/@\s]+))?@(?P<realm>[^/@\s]+)$")


@dataclass(frozen=True)
class KerberosName:
    primary: str
    instance: str | None
    realm: str

    def __str__(self) -> str:
        middle = f"/{self.instance}" if self.instance else ""
        return f"{self.primary}{middle}@{self.realm}"


def parse_principal(text: str) -> KerberosName:
    """``mirror/host.example.com@EXAMPLE.COM`` -> its parts; a principal without ``@REALM`` is refused."""
    match = _PRINCIPAL.match(text)
    if match is None:
        if "@" not in text:
            raise ValueError(
                "principal has no realm; write it in full as name/host@REALM (e.g. mirror/host@EXAMPLE.COM)"
            )
        raise ValueError("not a Kerberos principal; write it as name@REALM or name/host@REALM")
    return KerberosName(match["primary"], match["instance"], match["realm"])


def kafka_principal_for_kerberos(
    principal: str, rules: Sequence[str] = ("DEFAULT",), default_realm: str | None = None
) -> str:
    """The principal Kafka's authorizer sees under the brokers' ``sasl.kerberos.principal.to.local.rules``.

    Kafka's DEFAULT rule keeps the first component of a name of the brokers' default realm only (here the
    principal's own realm unless ``default_realm`` is given), so ``mirror/host@REALM`` and ``mirror@REALM`` both
    become ``User:mirror``; names of other realms need a rule (:mod:`kafka_names`).
    """
    realm = default_realm or parse_principal(principal).realm
    return f"User:{kafka_names.kerberos_short_name(principal, rules, realm)}"
