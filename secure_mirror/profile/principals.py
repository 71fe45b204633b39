"""Kerberos principal names and the Kafka principal an authorizer sees for them."""

from __future__ import annotations

import re
from dataclasses import dataclass

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
            raise ValueError("principal has no realm; write it in full as name/host@REALM (e.g. mirror/host@EXAMPLE.COM)")
        raise ValueError("not a Kerberos principal; write it as name@REALM or name/host@REALM")
    return KerberosName(match["primary"], match["instance"], match["realm"])


def kafka_principal_for_kerberos(principal: str) -> str:
    """The principal Kafka's authorizer sees under the DEFAULT ``sasl.kerberos.principal.to.local.rules``.

    Kafka's DEFAULT rule keeps the first component whatever the realm (unlike Hadoop's), so
    ``mirror/host@REALM`` and ``mirror@REALM`` both become ``User:mirror``.
    """
    return f"User:{parse_principal(principal).primary}"
