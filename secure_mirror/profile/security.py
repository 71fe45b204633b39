"""How the mirror proves who it is to a cluster, and whom the brokers then see: the SASL kinds (``sasl``), TLS
(``tls``), the brokers' naming rules (``principal_mapping``), and the Kerberos realms (the ``kerberos`` section)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Annotated, Any, Literal, Union

from pydantic import Field, field_validator, model_validator

from secure_mirror.errors import BadInputError
from secure_mirror.profile import kafka_names
from secure_mirror.profile.base import Strict
from secure_mirror.profile.fields import CertificateFile, InputFile, KeytabFile, PrivateKeyFile, Problem, Secret
from secure_mirror.profile.principals import parse_principal

MECHANISMS = ("GSSAPI", "SCRAM-SHA-256", "SCRAM-SHA-512", "PLAIN", "OAUTHBEARER")
WILDCARD = "*"  # Kafka's authorizer reads User:* as every user; a name holding '*' is refused wherever it arises


def wildcard_problem(what: str) -> str:
    return (
        f"{what} holds '*': Kafka's authorizer reads User:* as every user, so every user of the cluster would get "
        "the mirror's grants; name the mirror's own dedicated identity"
    )


def _check_kafka_principal(value: str | None) -> str | None:
    if value is not None and not re.match(r"^[A-Za-z]+:.+$", value):
        raise ValueError("must be written Type:name as Kafka's authorizer sees it, e.g. User:mirror")
    if value is not None and WILDCARD in value:
        raise ValueError(wildcard_problem("the principal"))
    return value


class _SaslBase(Strict):
    kafka_principal: str | None = Field(
        None,
        description="principal the authorizer sees, e.g. User:mirror; "
        "without it, derived as the brokers derive it (principal_mapping)",
    )

    _check_principal = field_validator("kafka_principal")(_check_kafka_principal)


class GssapiSasl(_SaslBase):
    mechanism: Literal["GSSAPI"]
    principal: str = Field(description="the mirror's Kerberos principal, e.g. mirror/host@REALM")
    keytab: KeytabFile
    service_name: str = Field("kafka", min_length=1, description="the brokers' Kerberos service name")

    @field_validator("principal")
    @classmethod
    def _principal(cls, value: str) -> str:
        parse_principal(value)
        return value

    def authorizer_principal(self, mapping: PrincipalMapping) -> str:
        return self.kafka_principal or f"User:{mapping.kerberos_name(self.principal)}"

    @property
    def realm(self) -> str:
        """The realm of the principal (``mirror/host@REALM`` -> ``REALM``)."""
        return parse_principal(self.principal).realm


class PasswordSasl(_SaslBase):
    mechanism: Literal["SCRAM-SHA-256", "SCRAM-SHA-512", "PLAIN"]
    username: str = Field(min_length=1)
    password: Secret

    def authorizer_principal(self, mapping: PrincipalMapping) -> str:
        return self.kafka_principal or f"User:{self.username}"


class OAuthSasl(_SaslBase):
    mechanism: Literal["OAUTHBEARER"]
    client_id: str = Field(min_length=1)
    client_secret: Secret
    token_endpoint_url: str = Field(pattern=r"^https?://\S+$")
    scope: str | None = None
    token_endpoint_ca: InputFile | None = Field(
        None,
        description="PEM CA bundle the token endpoint's certificate "
        "chains to; unset, the system's (and the JVM's) trusted CAs",
    )

    def authorizer_principal(self, mapping: PrincipalMapping) -> str:
        # The broker sees the token's subject; for client-credentials tokens that is usually the client id.
        return self.kafka_principal or f"User:{self.client_id}"


Sasl = Annotated[Union[GssapiSasl, PasswordSasl, OAuthSasl], Field(discriminator="mechanism")]


class Tls(Strict):
    ca: InputFile | None = Field(None, description="PEM CA bundle, or a JKS/PKCS12 truststore")
    certificate: CertificateFile | None = Field(None, description="client certificate (PEM) for mutual TLS")
    key: PrivateKeyFile | None = Field(None, description="client private key (PEM, PKCS#8) for mutual TLS")
    key_password: Secret | None = None
    hostname_verification: bool = True
    truststore_password: Secret | None = None

    @model_validator(mode="after")
    def _pairs(self) -> Tls:
        if (self.certificate is None) != (self.key is None):
            raise Problem(
                "key" if self.key is None else "certificate",
                "mutual TLS needs both certificate and key; give both or neither",
            )
        if self.ca is not None and truststore_type(self.ca) != "PEM" and self.truststore_password is None:
            raise Problem(
                "truststore_password", "a JKS/PKCS12 truststore needs truststore_password (env:NAME or file:/path)"
            )
        if self.ca is not None and truststore_type(self.ca) == "PEM" and self.truststore_password is not None:
            raise Problem(  # Kafka's Java clients refuse ssl.truststore.password beside ssl.truststore.type=PEM
                "truststore_password",
                "a PEM CA file has no password, and Kafka's Java clients refuse to start with one; remove it",
            )
        return self

    @property
    def mutual(self) -> bool:
        return self.certificate is not None

    @property
    def truststore_type(self) -> str | None:
        """``PEM``, ``JKS`` or ``PKCS12`` (from the CA file's suffix), or None without a CA."""
        return truststore_type(self.ca) if self.ca is not None else None

    @property
    def pem_ca(self) -> Path | None:
        """The CA file when it is PEM (what librdkafka and Python's ssl can read), else None."""
        return self.ca if self.truststore_type == "PEM" else None


def truststore_type(path: Path) -> str:
    suffix = path.suffix.lower()
    return {".jks": "JKS", ".p12": "PKCS12", ".pfx": "PKCS12"}.get(suffix, "PEM")


class UnmappedPrincipal(BadInputError):
    """The brokers' rules give the mirror's identity no principal; ``field`` is the rule set's path in a cluster."""

    def __init__(self, field: str, message: str):
        super().__init__(message)
        self.field = field


KERBEROS_RULES = "principal_mapping.principal_to_local_rules"
SSL_RULES = "principal_mapping.ssl_principal_mapping_rules"


class PrincipalMapping(Strict):
    """How the cluster's brokers turn the mirror's identity into the principal their authorizer sees: their
    settings, copied from server.properties. ACLs, pre-flight and the audit all use the principal they give."""

    default_realm: Krb5Name | None = Field(
        None,
        description="the brokers' Kerberos default realm (default_realm "
        "of their krb5.conf): DEFAULT maps only names of this realm; unset, the "
        "realm of sasl.principal",
    )
    principal_to_local_rules: list[str] = Field(
        default_factory=lambda: ["DEFAULT"],
        description="the brokers' sasl.kerberos.principal.to.local.rules, one rule per item",
    )
    ssl_principal_mapping_rules: str = Field(
        "DEFAULT", description="the brokers' ssl.principal.mapping.rules, as written in their server.properties"
    )

    @field_validator("principal_to_local_rules")
    @classmethod
    def _kerberos_rules(cls, value: list[str]) -> list[str]:
        for index, rule in enumerate(value):
            if "," in rule:
                raise Problem(
                    str(index),
                    "holds ',', which Kafka reads as the end of a rule (the setting is a "
                    "comma-separated list); write the regex without ','",
                )
        _rule_problem(lambda: kafka_names.parse_kerberos_rules(value, ""))
        return value

    @field_validator("ssl_principal_mapping_rules")
    @classmethod
    def _ssl_rules(cls, value: str) -> str:
        _rule_problem(lambda: kafka_names.parse_ssl_rules(value))
        return value

    def kerberos_name(self, principal: str) -> str:
        """The short name the brokers give ``principal`` (its realm is the default realm unless one is set)."""
        realm = self.default_realm or parse_principal(principal).realm
        return _mapped(
            KERBEROS_RULES,
            principal,
            lambda: kafka_names.kerberos_short_name(principal, self.principal_to_local_rules, realm),
            self._kerberos_fix(principal, realm),
        )

    def ssl_name(self, subject: str) -> str:
        """The name the brokers give a client certificate whose subject (RFC 2253) is ``subject``."""
        return _mapped(
            SSL_RULES,
            f"the certificate subject {subject}",
            lambda: kafka_names.ssl_principal_name(subject, self.ssl_principal_mapping_rules),
            "add a rule for it (e.g. RULE:^CN=([^,]*),.*$/$1/) or DEFAULT "
            "to the brokers' ssl.principal.mapping.rules and here",
        )

    def _kerberos_fix(self, principal: str, realm: str) -> str:
        name = parse_principal(principal)
        escaped = re.sub(r"([^A-Za-z0-9])", r"\\\1", name.realm)  # Java reads \. as a literal '.'
        example = (
            f"RULE:[{1 if name.instance is None else 2}:$1{'' if name.instance is None else '/$2'}@$0]"
            f"(.*@{escaped})s/@.*//"
        )
        default = (
            f" (DEFAULT maps only the brokers' default realm {realm})"
            if name.realm != realm and "DEFAULT" in self.principal_to_local_rules
            else ""
        )
        return (
            f"{default}; add the brokers' rule for it (e.g. {example}) to their "
            "sasl.kerberos.principal.to.local.rules and here, or set principal_mapping.default_realm to the "
            "brokers' default realm"
        )


def _rule_problem(parse: Any) -> None:
    """A rule set the brokers would refuse, or that we cannot evaluate exactly, as a Problem at its index."""
    try:
        parse()
    except kafka_names.UnsupportedRule as exc:
        raise Problem(
            str(exc.index), f"{exc}; rewrite it, or set sasl.kafka_principal to the principal the brokers give"
        ) from None
    except kafka_names.NameRuleError as exc:
        raise ValueError(f"{exc}; Kafka's brokers would not start with it") from None


def _mapped(field: str, what: str, compute: Any, fix: str) -> str:
    try:
        name = compute()
    except kafka_names.UnsupportedRule as exc:
        raise UnmappedPrincipal(
            field, f"{exc} (on {what}); rewrite the rule, or set sasl.kafka_principal to the principal the brokers give"
        ) from None
    except kafka_names.NameRuleError as exc:
        if exc.java_error == "NoMatchingRule" and str(exc).startswith("no rule maps"):
            raise UnmappedPrincipal(
                field, f"no rule maps {what} to a Kafka principal, so the brokers would refuse the mirror's login{fix}"
            ) from None
        raise UnmappedPrincipal(
            field,
            f"the brokers' rules fail on {what}: {exc} (Kafka: {exc.java_error}), so "
            "they would refuse the mirror's login; fix the rule",
        ) from None
    if not name:
        raise UnmappedPrincipal(
            field, f"the brokers' rules map {what} to an empty name, which no ACL can name; fix the rule"
        )
    return name


_KRB5_WORD = r"^[^\s{}=#;\"\\]+$"  # one krb5.conf token: no blanks, braces, '=', comment characters, quotes or \
Krb5Word = Annotated[str, Field(pattern=_KRB5_WORD)]
# A name (realm, domain) is the tag of a relation: MIT's parser also cuts it at '*' and reads '[' as a section.
Krb5Name = Annotated[str, Field(pattern=r"^[^\s{}=#;\"\\*\[\]]+$")]


class Realm(Strict):
    kdcs: list[Krb5Word] = Field(min_length=1, description="host:port of each KDC")
    admin_server: Krb5Word | None = None
    domains: list[Krb5Name] = Field(default_factory=list, description="DNS domains whose hosts belong to this realm")


class Kerberos(Strict):
    krb5_conf: InputFile | None = Field(None, description="an existing krb5.conf (instead of realms)")
    realms: dict[Krb5Name, Realm] = Field(default_factory=dict)
    default_realm: Krb5Name | None = None

    @model_validator(mode="after")
    def _one_source(self) -> Kerberos:
        if self.krb5_conf is not None and self.realms:
            raise Problem("realms", "give either krb5_conf or realms, not both")
        if self.default_realm and self.realms and self.default_realm not in self.realms:
            raise Problem(
                "default_realm", f"{self.default_realm} is not one of the realms declared ({', '.join(self.realms)})"
            )
        return self
