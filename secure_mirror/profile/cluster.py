"""A cluster (``source`` and ``target``): how to reach it, how the mirror authenticates to it, and the principal its
brokers' authorizer sees for the mirror."""

from __future__ import annotations

import re
from typing import Any, Literal

from pydantic import Field, ValidationInfo, field_validator, model_validator

from secure_mirror.profile.base import OptionValue, Strict, option_keys, protected_option
from secure_mirror.profile.code_loading import refuse_kafka_code
from secure_mirror.profile.fields import Problem, certificate_subject
from secure_mirror.profile.security import (
    KERBEROS_RULES,
    SSL_RULES,
    WILDCARD,
    GssapiSasl,
    OAuthSasl,
    PasswordSasl,
    PrincipalMapping,
    Sasl,
    Tls,
    UnmappedPrincipal,
    wildcard_problem,
)

Protocol = Literal["PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL"]
Side = Literal["source", "target"]  # which cluster of a profile: Profile.cluster(side)
SIDES: tuple[Side, Side] = ("source", "target")
_HOST_PORT = re.compile(r"^(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9_.-]+):\d{1,5}$")
_ALIAS = re.compile(r"^[A-Za-z0-9_-]+$")


ExecutorAuth = Literal["keytab", "delegation_token"]
AclFormat = Literal["kafka", "ranger", "both"]
# What Ranger's resource matcher reads as a pattern in a value, with no escape (render/ranger.py, docs/ranger.md).
RANGER_PATTERN_CHARACTERS = {
    "*": "'*' (a wildcard)",
    "?": "'?' (a wildcard)",
    "{": "'{' (a macro)",
    "}": "'}' (a macro)",
}


def ranger_pattern_problem(name: str) -> str | None:
    """What in ``name`` Ranger would read as a pattern (``'?' (a wildcard)``), or None."""
    found = [what for char, what in RANGER_PATTERN_CHARACTERS.items() if char in name]
    return " and ".join(found) or None


_RANGER_SERVICE = re.compile(r"^[A-Za-z0-9_.-]{1,255}$")


class AclSettings(Strict):
    """How this side's brokers authorize, so render writes the grants in the form its security team applies."""

    format: AclFormat = Field(
        "kafka",
        description="kafka: Kafka ACLs (acls/<side>.acls.json, apply-acls.sh); ranger: Apache Ranger policies for "
        "the kafka service definition (ranger/<side>.policies.json, ranger/apply-policies.sh); both: the two",
    )
    ranger_service: str = Field(
        "kafka",
        pattern=_RANGER_SERVICE.pattern,
        description="the Ranger service (of type kafka) the policies belong to, as Ranger Admin names it",
    )

    @property
    def kafka(self) -> bool:
        return self.format in ("kafka", "both")

    @property
    def ranger(self) -> bool:
        return self.format in ("ranger", "both")


class Cluster(Strict):
    alias: str = Field(pattern=_ALIAS.pattern, description="short name (MirrorMaker 2 cluster alias)")
    bootstrap_servers: list[str] = Field(min_length=1)
    security_protocol: Protocol
    sasl: Sasl | None = None
    tls: Tls | None = None
    client_options: dict[str, OptionValue] = Field(default_factory=dict, description="extra Java client options")
    principal_mapping: PrincipalMapping = Field(
        default_factory=PrincipalMapping, description="how the brokers name the mirror's identity"
    )
    acls: AclSettings = Field(
        default_factory=AclSettings, description="the form of the grants render writes for this side's brokers"
    )
    executor_auth: ExecutorAuth = Field(
        "keytab",
        description="how Spark's executors authenticate to this cluster: keytab (the side's keytab ships with the "
        "job) or delegation_token (the driver obtains a Kafka delegation token with the side's identity and "
        "executors log in with it; no keytab reaches a container; needs GSSAPI and a YARN master in client mode)",
    )

    @property
    def uses_delegation_token(self) -> bool:
        """True when this side's executors log in with a Kafka delegation token instead of its keytab."""
        return self.executor_auth == "delegation_token"

    @field_validator("bootstrap_servers")
    @classmethod
    def _servers(cls, value: list[str]) -> list[str]:
        for index, server in enumerate(value):
            if not _HOST_PORT.match(server):
                raise Problem(str(index), f"{server!r} is not host:port; write e.g. broker1.example.com:9093")
        return value

    @field_validator("sasl")
    @classmethod
    def _sasl_matches_protocol(cls, value: Any, info: ValidationInfo) -> Any:
        protocol = info.data.get("security_protocol")
        if protocol and protocol.startswith("SASL_") and value is None:
            raise ValueError(f"security_protocol {protocol} needs a sasl section (mechanism and credentials)")
        if protocol and not protocol.startswith("SASL_") and value is not None:
            raise ValueError(f"security_protocol {protocol} does not use SASL; use SASL_{protocol} or drop sasl")
        return value

    @field_validator("tls")
    @classmethod
    def _tls_matches_protocol(cls, value: Any, info: ValidationInfo) -> Any:
        protocol = info.data.get("security_protocol")
        if protocol and protocol.endswith("PLAINTEXT") and value is not None:
            raise ValueError(f"security_protocol {protocol} does not use TLS; use SSL or SASL_SSL, or drop tls")
        return value

    @field_validator("client_options")
    @classmethod
    def _client_options(cls, value: dict[str, OptionValue]) -> dict[str, OptionValue]:
        owned = option_keys(
            value,
            protected_option,
            "overrides a security or bootstrap setting the profile owns; "
            "set it through bootstrap_servers, security_protocol, sasl or tls instead",
        )
        return refuse_kafka_code(owned)

    @model_validator(mode="after")
    def _principal_mapped(self, info: ValidationInfo) -> Cluster:
        """The brokers' rules must map the identity; a certificate is read only when files are checked."""
        if self.sasl is not None or (self.tls_settings.mutual and (info.context or {}).get("check_files")):
            try:
                principal = self.kafka_principal
            except UnmappedPrincipal as exc:
                raise Problem(exc.field, str(exc)) from None
            if WILDCARD in principal:
                field, what = self._principal_source
                raise Problem(field, wildcard_problem(f"the principal the brokers see ({principal}, from {what})"))
        return self

    @property
    def _principal_source(self) -> tuple[str, str]:
        """The field the authorizer's principal comes from, and its name in words."""
        sasl = self.sasl
        if sasl is not None and sasl.kafka_principal:
            return "sasl.kafka_principal", "sasl.kafka_principal"
        if isinstance(sasl, GssapiSasl):
            return KERBEROS_RULES, f"{sasl.principal} by the principal-to-local rules"
        if isinstance(sasl, PasswordSasl):
            return "sasl.username", "sasl.username"
        if isinstance(sasl, OAuthSasl):
            return "sasl.client_id", "sasl.client_id"
        return SSL_RULES, "the certificate's subject by the SSL principal mapping rules"

    @property
    def kafka_principal(self) -> str:
        """The principal the brokers' authorizer sees for the mirror, derived as they derive it (their
        principal_mapping); :class:`UnmappedPrincipal` when their rules give none."""
        if self.sasl is not None:
            return self.sasl.authorizer_principal(self.principal_mapping)
        if (certificate := self.tls_settings.certificate) is not None:  # mutual TLS
            try:
                subject = certificate_subject(certificate)
            except ValueError as exc:
                raise UnmappedPrincipal("tls.certificate", str(exc)) from None
            return f"User:{self.principal_mapping.ssl_name(subject)}"
        return "User:ANONYMOUS"

    @property
    def principal_derivation(self) -> str | None:
        """How the brokers' rules name the identity (for a reviewer of the ACLs), when the profile gives them."""
        mapping = self.principal_mapping
        if "principal_mapping" not in self.model_fields_set:
            return None
        if isinstance(self.sasl, GssapiSasl) and not self.sasl.kafka_principal:
            realm = mapping.default_realm or self.sasl.realm
            return (
                f"{self.sasl.principal} by sasl.kerberos.principal.to.local.rules="
                f"{','.join(mapping.principal_to_local_rules)} (default realm {realm})"
            )
        if self.sasl is None and self.tls_settings.mutual:
            return f"the certificate's subject by ssl.principal.mapping.rules={mapping.ssl_principal_mapping_rules}"
        return None

    @property
    def uses_tls(self) -> bool:
        return self.security_protocol in ("SSL", "SASL_SSL")

    @property
    def tls_settings(self) -> Tls:
        return self.tls or Tls()

    @property
    def mechanism(self) -> str | None:
        return self.sasl.mechanism if self.sasl else None

    @property
    def realm(self) -> str | None:
        return self.sasl.realm if isinstance(self.sasl, GssapiSasl) else None

    @property
    def brokers(self) -> list[tuple[str, int]]:
        """``bootstrap_servers`` as (host, port) pairs; an IPv6 host loses its brackets."""
        return [(host.strip("[]"), int(port)) for host, port in (s.rsplit(":", 1) for s in self.bootstrap_servers)]

    @property
    def first_broker(self) -> str:
        """The first bootstrap server as written (``host:port``), for a tool's ``--bootstrap-server``."""
        return self.bootstrap_servers[0]
