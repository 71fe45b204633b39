"""The profile: two clusters and a mirror, validated once and then the only input of every renderer."""

from __future__ import annotations

import dataclasses
import hashlib
import re
import string
from pathlib import Path
from typing import Annotated, Any, Literal, Union

from pydantic import BaseModel, ConfigDict, Field, ValidationInfo, field_validator, model_validator

from secure_mirror.errors import BadInputError
from secure_mirror.profile import cycles, groups, kafka_names, policy, topic_shape, topics
from secure_mirror.profile.fields import (
    CertificateFile,
    InputFile,
    KeytabFile,
    PrivateKeyFile,
    Problem,
    Secret,
    certificate_subject,
)
from secure_mirror.profile.policy import shorten
from secure_mirror.profile.principals import parse_principal
from secure_mirror.profile.redaction import redaction_problem

Protocol = Literal["PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL"]
Side = Literal["source", "target"]  # which cluster of a profile: Profile.cluster(side)
SIDES: tuple[Side, Side] = ("source", "target")
OptionValue = Union[str, int, float, bool]
MECHANISMS = ("GSSAPI", "SCRAM-SHA-256", "SCRAM-SHA-512", "PLAIN", "OAUTHBEARER")
# Keys an extra client option may not set: the profile's security and bootstrap settings own them.
# Config providers too: with one, any setting could be replaced at start by what a file or variable holds.
PROTECTED_OPTION = re.compile(
    r"^(bootstrap\.servers|security\.protocol|sasl\..*|ssl\..*|client\.dns\.lookup"
    r"|config\.providers(\..*)?)$"
)
# Spark conf the profile owns: the connector jars, and Spark's own Kafka settings, which carry SASL settings
# (spark.kafka.clusters.*) or may come to; only the caches of Spark's Kafka connector are an operator's to tune
# (issue 26: with mirror.spark.source: kafka at scale, spark.kafka.consumer.cache.capacity), as they bear no identity.
PROTECTED_SPARK_CONF = re.compile(
    r"^(spark\.jars|spark\.kafka\.(?!(consumer\.cache|consumer\.fetchedData\.cache|producer\.cache)\.).*)$"
)
# Spark's own connections (driver <-> executors: task closures carrying the job's Kafka options, block transfers) and
# its local spill files, authenticated and AES-encrypted. On YARN Spark makes a secret and a key per application and
# hands them to the containers in YARN's credentials, so nothing is to configure; elsewhere the cluster's operators
# must share a secret (README, Security model).
SPARK_INTERNAL_SECURITY = {
    "spark.authenticate": "true",
    "spark.network.crypto.enabled": "true",
    "spark.io.encryption.enabled": "true",
}


# Spark conf keys that hold a secret (their last words, as Spark's own redaction would see them): mirror.spark.conf is
# written into the rendered spark-submit.sh and reaches spark-submit's argument list, so such a value has no place in
# it. ``spark.authenticate.secret`` and ``spark.ssl.keyStorePassword`` belong to the submitting machine's
# spark-defaults.conf; ``spark.hadoop.dfs.block.access.token.enable`` is no secret and passes, nor does
# ``spark.kerberos.renewal.credentials`` (it names a kind: keytab or ccache).
SPARK_SECRET_KEY = re.compile(r"(secret|password|passwd|token|access[._-]?key|secret[._-]?key|credentials?)$", re.I)
SPARK_KEYS_NAMING_NO_SECRET = frozenset({"spark.kerberos.renewal.credentials"})
# Spark settings that encrypt its own connections (any one of them, with spark.authenticate): AES-based encryption,
# the older SASL encryption, or TLS for RPC (Spark 4.0).
SPARK_NETWORK_ENCRYPTION = (
    "spark.network.crypto.enabled",
    "spark.authenticate.enableSaslEncryption",
    "spark.ssl.rpc.enabled",
)


def option_matches(pattern: re.Pattern[str], key: str) -> bool:
    """True when ``key``, or the part after any prefix (``producer.``, ``<alias>.admin.``), matches ``pattern``:
    MirrorMaker 2 and Kafka apply ``<alias>.producer.sasl.jaas.config`` as the producer's login module. Compared
    without case, as Spark's option map compares keys (``kafka.SASL.JAAS.CONFIG`` is ``kafka.sasl.jaas.config``)."""
    parts = key.lower().split(".")
    return any(pattern.match(".".join(parts[i:])) for i in range(len(parts)))


def protected_option(key: str) -> bool:
    """True when ``key`` sets a protected key (:data:`PROTECTED_OPTION`), after any prefix (:func:`option_matches`)."""
    return option_matches(PROTECTED_OPTION, key)


def _option_keys(value: dict[str, Any], protected: Any, owner: str) -> dict[str, Any]:
    for key in value:
        if (reason := policy.option_key_problem(key)) is not None:
            raise Problem(key, reason)
        if protected(key):
            raise Problem(key, owner)
    return value


_HOST_PORT = re.compile(r"^(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9_.-]+):\d{1,5}$")
_ALIAS = re.compile(r"^[A-Za-z0-9_-]+$")


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


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


ExecutorAuth = Literal["keytab", "delegation_token"]


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
        return _option_keys(
            value,
            protected_option,
            "overrides a security or bootstrap setting the profile owns; "
            "set it through bootstrap_servers, security_protocol, sasl or tls instead",
        )

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


class Topics(Strict):
    include: str = Field(min_length=1, description="Java regexes; a comma means 'or'")
    exclude: str | None = Field(
        None,
        description="Java regexes; internal and reserved topics (__*, *.internal, *.replica, heartbeats, Connect's and "
        "Schema Registry's) are always excluded",
    )
    grant_all_topics: bool = Field(
        False,
        description="with include .*: render ACLs on every topic (TOPIC '*', which covers Kafka's internal topics "
        "too: __consumer_offsets, __transaction_state); without it such a selection is refused",
    )

    @field_validator("include", "exclude")
    @classmethod
    def _patterns(cls, value: str | None) -> str | None:
        problems = [p for piece in topics.split_patterns(value or "") if (p := topics.check_pattern(piece))]
        if problems:
            raise ValueError("; ".join(problems))
        return value

    def selection(self) -> topics.TopicSelection:
        return topics.TopicSelection.parse(self.include, self.exclude)


TEMPLATE_FIELDS = {"topic", "source_alias", "target_alias"}


class Rename(Strict):
    rule: Literal["identity", "alias_prefix", "template"] = "alias_prefix"
    template: str | None = Field(None, description="with rule template: e.g. mirror.{topic}")

    @field_validator("template")
    @classmethod
    def _template(cls, value: str | None, info: ValidationInfo) -> str | None:
        if info.data.get("rule") == "template":
            _check_template(value)
        elif value is not None:
            raise ValueError("template is only used with rule: template; set the rule or drop the template")
        return value

    @property
    def template_text(self) -> str:
        """The rule as a template: ``{topic}`` (identity), ``{source_alias}.{topic}`` (alias_prefix), or the template."""
        if self.rule == "identity":
            return "{topic}"
        if self.rule == "alias_prefix":
            return "{source_alias}.{topic}"
        assert self.template is not None  # _template refuses rule: template without one
        return self.template

    @property
    def mm2_separator(self) -> str | None:
        """The separator of MirrorMaker 2's DefaultReplicationPolicy that names topics as this rule does
        (``{source_alias}<separator>{topic}``), or None when none does (identity, or another template)."""
        template = self.template_text
        if template.startswith("{source_alias}") and template.endswith("{topic}"):
            separator = template.removeprefix("{source_alias}").removesuffix("{topic}")
            return separator if separator and "{" not in separator else None
        return None


def _check_template(template: str | None) -> None:
    if not template:
        raise ValueError("rule template needs a template, e.g. mirror.{topic}")
    how = "use placeholders {topic}, {source_alias}, {target_alias}"
    try:
        fields = [
            (name, spec, conversion)
            for _, name, spec, conversion in string.Formatter().parse(template)
            if name is not None
        ]
    except ValueError as exc:
        raise ValueError(f"template does not parse ({exc}); {how}") from None
    for name, spec, conversion in fields:
        # Only bare names: a format spec ({topic:>999999999}) or conversion would run for every topic.
        if name not in TEMPLATE_FIELDS or spec or conversion:
            shown = name if len(name) <= 40 else name[:40] + "..."
            raise ValueError(
                f"template does not parse (placeholder {{{shown}}} is not one of ours, or has a "
                f"format spec or conversion); {how}"
            )
    if "topic" not in {name for name, _, _ in fields}:
        raise ValueError("template must contain {topic}, or every topic would land in the same target topic")
    if not topics.LEGAL_TOPIC.match(template.format(topic="t", source_alias="s", target_alias="d")):
        raise ValueError("template yields illegal topic names; use only letters, digits, '.', '_' and '-'")


Guarantee = Literal["at_least_once", "exactly_once"]


class Delivery(Strict):
    # docs/exactly-once.md: exactly_once writes each source partition in transactions that also commit its position
    guarantee: Guarantee = Field("at_least_once", description="at_least_once or exactly_once (docs/exactly-once.md)")
    acks: Literal["all", "-1", "0", "1"] = "all"
    enable_idempotence: bool = True
    compression: Literal["none", "gzip", "snappy", "lz4", "zstd"] = "lz4"
    delivery_timeout_ms: int = Field(120000, gt=0)
    # Batching (benchmarks/NOTES.md): Kafka's defaults (16 KiB, 0-5 ms) send small requests; a mirror copying a
    # backlog fills bigger batches at once. Keep batch_size under the brokers' message.max.bytes (1 MiB default).
    linger_ms: int = Field(20, ge=0, le=60000, description="producer linger.ms")
    batch_size: int = Field(262144, gt=0, le=1048576, description="producer batch.size in bytes")

    @field_validator("acks", mode="before")
    @classmethod
    def _acks_text(cls, value: Any) -> Any:
        return str(value) if isinstance(value, int) else value

    @model_validator(mode="after")
    def _transactions_need_idempotence(self) -> Delivery:
        if self.exactly_once and self.acks not in ("all", "-1"):
            raise Problem(
                "acks", "exactly_once needs acks: all (Kafka's transactions require it); drop acks or set all"
            )
        if self.exactly_once and not self.enable_idempotence:
            raise Problem(
                "enable_idempotence",
                "exactly_once needs enable_idempotence: true (transactions are "
                "idempotent); drop enable_idempotence or set it true",
            )
        return self

    @property
    def exactly_once(self) -> bool:
        return self.guarantee == "exactly_once"


class SparkJars(Strict):
    """Where the job gets Spark's Kafka connector (spark-sql-kafka-0-10 for Spark 4.0.0, Scala 2.13, and the jars it
    needs): from ``local_dir``; else resolved by Spark at start (``spark.jars.packages``) from ``repositories`` or the
    Ivy settings file, Maven Central when neither is named. A checkout set up by scripts/setup uses its ``.deps``
    unless repositories or Ivy settings are named."""

    repositories: list[str] = Field(
        default_factory=list,
        description="Maven repositories Spark resolves the connector from (spark.jars.repositories), e.g. an "
        "internal proxy; credentials belong in an Ivy settings file, never in the URL",
    )
    ivy_settings: InputFile | None = Field(
        None, description="an Ivy settings file for the resolution (spark.jars.ivySettings)"
    )
    local_dir: Path | None = Field(
        None, description="a folder holding the connector's jars (a bundle's jars/): no resolution, nothing fetched"
    )

    @field_validator("repositories")
    @classmethod
    def _repositories(cls, value: list[str]) -> list[str]:
        for index, url in enumerate(value):
            if not re.fullmatch(r"(https?|file)://[^\s,@]+", url):
                raise Problem(
                    str(index),
                    "must be an http(s):// or file:// URL without a comma or user@ (spark-submit's argument list "
                    "shows it; put credentials in an Ivy settings file and name it in ivy_settings)",
                )
        return value

    @field_validator("local_dir")
    @classmethod
    def _local_dir(cls, value: Path | None, info: ValidationInfo) -> Path | None:
        if value is None:
            return None
        base = (info.context or {}).get("base_dir")
        path = value.expanduser() if value.expanduser().is_absolute() or base is None else Path(base) / value
        if (info.context or {}).get("check_files") and not any(path.glob("spark-sql-kafka-0-10_2.13-*.jar")):
            raise ValueError(
                f"{shorten(str(path))} holds no spark-sql-kafka-0-10_2.13-*.jar; name the folder of the connector's "
                "jars (secure-mirror bundle writes them into its jars/)"
            )
        return path

    @model_validator(mode="after")
    def _one_source(self) -> SparkJars:
        if self.local_dir is not None and self.resolves:
            raise Problem("local_dir", "name either local_dir or repositories/ivy_settings, not both")
        return self

    @property
    def resolves(self) -> bool:
        """True when the profile asks Spark to resolve the connector from named repositories or Ivy settings."""
        return bool(self.repositories) or self.ivy_settings is not None


class Spark(Strict):
    master: str = "local[2]"
    deploy_mode: Literal["client", "cluster"] = "client"
    conf: dict[str, OptionValue] = Field(default_factory=dict, description="extra Spark configuration")
    max_offsets_per_trigger: int | None = Field(None, gt=0)
    # The micro-batch source (docs/architecture.md, "The source"): "mirror" is the mirror's own (jvm/sink,
    # securemirror.source), whose tasks each read many partitions with one consumer; "kafka" is Spark's Kafka source
    # (one task and one cached consumer per topic-partition per micro-batch). A continuous trigger always uses Spark's.
    source: Literal["mirror", "kafka"] = Field(
        "mirror", description="micro-batch source: mirror (tasks each read many partitions) or kafka (Spark's)"
    )
    tasks: int | None = Field(
        None,
        gt=0,
        le=10000,
        description="with source mirror: the tasks of each micro-batch, each reading its share of the partitions "
        "with one consumer (default: Spark's default parallelism, the master's cores)",
    )
    # Continuous processing (docs/continuous.md): each source partition is one long-running task that writes records
    # as they arrive; every continuous_interval_ms an epoch commits (the sink flushes, the offsets are checkpointed).
    trigger: Literal["micro_batch", "continuous"] = Field(
        "micro_batch", description="micro_batch (default) or continuous: low latency, at_least_once only"
    )
    continuous_interval_ms: int = Field(
        1000,
        gt=0,
        le=3600000,
        description="with trigger continuous: ms between epoch commits (a stop or crash re-sends at most the records "
        "since the last one)",
    )
    jars: SparkJars = Field(default_factory=SparkJars, description="where the job gets Spark's Kafka connector")

    require_encrypted_cluster: bool = Field(
        True,
        description="on a standalone or Kubernetes master, the job starts only when the cluster's Spark configuration "
        "authenticates and encrypts Spark's own connections (spark.authenticate with spark.network.crypto.enabled), "
        "which carry the job's Kafka options and shipped keytabs to executors; false accepts them in clear",
    )

    @field_validator("conf")
    @classmethod
    def _conf(cls, value: dict[str, OptionValue]) -> dict[str, OptionValue]:
        _option_keys(
            value,
            PROTECTED_SPARK_CONF.match,
            "is rendered from the profile (connector jars, Kafka security); change the profile instead",
        )
        for key in value:
            if SPARK_SECRET_KEY.search(key) and key.lower() not in SPARK_KEYS_NAMING_NO_SECRET:
                raise Problem(
                    key,
                    "names a secret, and mirror.spark.conf is written into the rendered spark-submit.sh and "
                    "spark-submit's argument list; set it in the Spark configuration of the machine that submits "
                    "(spark-defaults.conf in SPARK_CONF_DIR, readable only by the mirror's user)",
                )
            if (reason := redaction_problem(key, value[key])) is not None:  # Spark would hide less than by default
                raise Problem(key, reason)
        return value

    @model_validator(mode="after")
    def _internal_security_kept(self) -> Spark:
        if self.secures_internal_traffic:
            for key in self.conf:
                if key.lower() in SPARK_INTERNAL_SECURITY:
                    raise Problem(
                        f"conf.{key}",
                        "on YARN secure-mirror turns on Spark's authentication and encryption of its own connections "
                        "and spill files (the job's options travel to executors over them); remove the setting",
                    )
        return self

    @property
    def is_local(self) -> bool:
        return self.master.startswith("local")

    @property
    def secures_internal_traffic(self) -> bool:
        """True when render turns on ``SPARK_INTERNAL_SECURITY``: on YARN, which distributes the secret itself."""
        return self.master == "yarn"

    @property
    def checks_cluster_security(self) -> bool:
        """True when the job must find Spark's own connections authenticated and encrypted by the cluster's
        configuration before it runs a task (``SPARK_NETWORK_ENCRYPTION``): executors elsewhere, on a master where
        the cluster's operators share the secret (standalone, Kubernetes), unless the profile accepts clear text."""
        return self.require_encrypted_cluster and not self.is_local and not self.secures_internal_traffic


class MirrorMaker2(Strict):
    replication_factor: int = Field(-1, ge=-1, description="for created topics; -1 uses the broker's default")
    properties: dict[str, OptionValue] = Field(default_factory=dict, description="extra mm2.properties lines")

    @field_validator("replication_factor")
    @classmethod
    def _not_zero(cls, value: int) -> int:
        if value == 0:
            raise ValueError("must be -1 (the broker's default) or at least 1")
        return value

    @field_validator("properties")
    @classmethod
    def _not_security(cls, value: dict[str, OptionValue]) -> dict[str, OptionValue]:
        return _option_keys(
            value,
            lambda key: protected_option(key) or key.lower() == "clusters",
            "is rendered from the profile (clusters, flows, security); change the profile instead",
        )


KeepPartition = Literal["auto"] | bool


MM2_GROUPS_EXCLUDED = groups.MM2_GROUPS_EXCLUDED


class Groups(Strict):
    """Consumer groups whose committed offsets follow the mirror (issue 28): off unless ``include`` is given. Each
    include piece is granted as written, so it is a literal group id or a prefix ``prefix.*`` (:mod:`.groups`)."""

    include: str | None = Field(
        None,
        description="consumer groups whose committed offsets follow the mirror, as Java regexes a Kafka ACL can "
        "express: a literal group id (app\\.orders) or a prefix (app\\..*); a comma means 'or'. A general "
        "regex and .* (every group) are refused. Off when not given",
    )
    exclude: str = Field(
        MM2_GROUPS_EXCLUDED,
        description="Java regexes of groups never synced (default: MirrorMaker 2's groups.exclude); the mirror's "
        "own groups (secure-mirror-*) are always excluded",
    )
    sync_interval_seconds: int = Field(
        5, ge=1, le=3600, description="seconds between translations of the groups' offsets onto the target"
    )

    @field_validator("include")
    @classmethod
    def _include(cls, value: str | None) -> str | None:
        pieces = topics.split_patterns(value or "")
        problems = [p for piece in pieces if (p := topics.check_pattern(piece) or groups.piece_problem(piece))]
        if problems:
            raise ValueError("; ".join(problems))
        return value

    @field_validator("exclude")
    @classmethod
    def _exclude(cls, value: str) -> str:
        problems = [p for piece in topics.split_patterns(value) if (p := topics.check_pattern(piece))]
        if problems:
            raise ValueError("; ".join(problems))
        return value

    @model_validator(mode="after")
    def _named_groups_are_synced(self) -> Groups:
        if excluded := self.selection().excluded_literals():
            raise Problem(
                "include",
                f"names {', '.join(map(repr, excluded))}, which mirror.groups.exclude (or the mirror's own "
                f"{groups.MIRROR_GROUPS}*) excludes: it would never be synced; remove it, or narrow "
                "mirror.groups.exclude",
            )
        return self

    @property
    def enabled(self) -> bool:
        return bool(self.include and topics.split_patterns(self.include))

    def selection(self) -> groups.GroupSelection:
        """The groups selected (whole name, Java regex; never the mirror's own); selects nothing when disabled."""
        return groups.GroupSelection.parse(self.include or "", self.exclude)


def keeps_partitions(keep_partition: KeepPartition, source_partitions: int, target_partitions: int) -> bool:
    """Whether records keep their partition number on the target topic: with ``true`` always (the job refuses a
    target with fewer partitions: :func:`too_few_partitions`), with ``auto`` when both topics have as many, never with
    ``false``. The job writes by it, verify compares by it (per partition, else per topic)."""
    return keep_partition is True or (keep_partition == "auto" and source_partitions == target_partitions)


def too_few_partitions(keep_partition: KeepPartition, source_partitions: int, target_partitions: int) -> bool:
    """``keep_partition: true`` with a target topic that lacks some of the source's partitions (refused)."""
    return keep_partition is True and target_partitions < source_partitions


class Heartbeats(Strict):
    """MirrorMaker 2's heartbeats, written to the target's ``heartbeats`` topic while the flow is alive
    (docs/heartbeats.md)."""

    interval_seconds: int = Field(
        1, ge=0, le=3600, description="seconds between heartbeats (MirrorMaker 2's default 1); 0 turns them off"
    )
    stale_after_seconds: int = Field(
        60,
        ge=1,
        le=86400,
        description="lag and verify flag the flow when its newest heartbeat is older than this; the job stops "
        "heartbeating while one trigger runs longer",
    )

    @model_validator(mode="after")
    def _stale_after_an_interval(self) -> Heartbeats:
        if self.enabled and self.stale_after_seconds <= self.interval_seconds:
            raise Problem(
                "stale_after_seconds",
                f"must be more than interval_seconds ({self.interval_seconds}), or every flow would look stale "
                "between two heartbeats; raise it, e.g. to 10 times the interval",
            )
        return self

    @property
    def enabled(self) -> bool:
        return self.interval_seconds > 0


class TopicShape(Strict):
    """The target topic takes the source's shape (docs/replica.md): created with the source topic's own configs less
    ``exclude_configs``, those configs kept in step, and its partitions grown with the source's, every
    ``interval_seconds`` while the job runs (MirrorMaker 2: 600 s)."""

    sync_configs: bool = Field(
        True,
        description="create target topics with the source topic's own configs (less exclude_configs) and keep them in "
        "step; needs DESCRIBE_CONFIGS on the source topics and ALTER_CONFIGS on the target topics",
    )
    exclude_configs: list[str] = Field(
        default_factory=lambda: list(topic_shape.MM2_EXCLUDED_CONFIGS),
        description="topic configs never copied, Java regexes matching the whole name (MirrorMaker 2's "
        "config.properties.exclude default)",
    )
    grow_partitions: bool = Field(
        True,
        description="add partitions to a target topic whose source grew them, before a record of a new partition is "
        "written (with keep_partition true or auto); needs ALTER on the target topics",
    )
    interval_seconds: int = Field(
        30,
        ge=1,
        le=3600,
        description="seconds between two comparisons of the source's and target's configs and "
        "partitions while the job runs",
    )

    @field_validator("exclude_configs")
    @classmethod
    def _java_regexes(cls, value: list[str]) -> list[str]:
        for i, item in enumerate(value):
            try:
                topic_shape.excluded("", [item])
            except Exception as error:  # noqa: BLE001 - the regex module's reason, in one sentence
                raise Problem(
                    f"{i}",
                    f"{item!r} is not a regex the mirror can evaluate as Java does ({error}); write the "
                    "config name with its dots escaped (min\\.insync\\.replicas)",
                ) from None
        return value


class Mirror(Strict):
    topics: Topics
    rename: Rename = Field(default_factory=Rename)
    starting_offsets: Literal["earliest", "latest"] = "earliest"
    # Read the source as a read_committed consumer does in every guarantee and trigger (source_consumer_settings).
    source_isolation_level: Literal["read_committed", "read_uncommitted"] = Field(
        "read_committed",
        description="read_committed (default): records of aborted source transactions are never mirrored, and a "
        "transaction still open holds the mirror at its first record until it ends; read_uncommitted copies records "
        "of aborted and open transactions as ordinary records (at_least_once only)",
    )
    checkpoint_location: str = Field(min_length=1, description="a path or a URI (hdfs://, s3a://) Spark checkpoints to")
    keep_partition: KeepPartition = "auto"
    provenance_headers: bool = False
    delivery: Delivery = Field(default_factory=Delivery)
    spark: Spark = Field(default_factory=Spark)
    mm2: MirrorMaker2 = Field(default_factory=MirrorMaker2)
    groups: Groups = Field(default_factory=Groups)
    heartbeats: Heartbeats = Field(default_factory=Heartbeats)
    topic_shape: TopicShape = Field(default_factory=TopicShape)

    @field_validator("checkpoint_location")
    @classmethod
    def _absolute_checkpoint(cls, value: str, info: ValidationInfo) -> str:
        base = (info.context or {}).get("base_dir")
        if "://" in value or Path(value).is_absolute() or base is None:
            return policy.check(value)
        return policy.check(str(Path(base) / value))

    @model_validator(mode="after")
    def _groups_need_acknowledged_offsets(self) -> Mirror:
        if self.groups.enabled and self.delivery.acks == "0":
            raise Problem(
                "groups",
                "group offsets follow the mirror through the target offsets the brokers acknowledge, and acks: 0 "
                "acknowledges none (no offset map could be written); set mirror.delivery.acks: all, or drop "
                "mirror.groups.include",
            )
        return self

    @model_validator(mode="after")
    def _continuous_is_at_least_once(self) -> Mirror:
        if self.continuous and self.delivery.exactly_once:
            raise Problem(
                "spark.trigger",
                "continuous processing is at_least_once only (an epoch Spark replays after a stop or crash is "
                "written again, and the sink's transactions are per micro-batch task); set "
                "mirror.delivery.guarantee: at_least_once, or drop mirror.spark.trigger (micro_batch)",
            )
        return self

    @model_validator(mode="after")
    def _exactly_once_reads_committed(self) -> Mirror:
        if self.delivery.exactly_once and self.source_isolation_level == "read_uncommitted":
            raise Problem(
                "source_isolation_level",
                "exactly_once mirrors what a read_committed reader of the source sees, and read_uncommitted would "
                "copy records of aborted source transactions as committed ones; drop "
                "mirror.source_isolation_level (read_committed), or set mirror.delivery.guarantee: at_least_once",
            )
        return self

    @property
    def source_consumer_settings(self) -> dict[str, str]:
        """How every reader of the source reads it, spelt alike by Kafka's Java client and librdkafka: the job's
        Spark source (``kafka.``), MirrorMaker 2's source consumer (``<alias>.consumer.``), lag and verify."""
        return {"isolation.level": self.source_isolation_level}

    @property
    def continuous(self) -> bool:
        return self.spark.trigger == "continuous"

    def keeps_partitions(self, source_partitions: int, target_partitions: int) -> bool:
        return keeps_partitions(self.keep_partition, source_partitions, target_partitions)


HADOOP_SITE_FILE = re.compile(r"^[a-z][a-z0-9-]*-site\.xml$")


class Hadoop(Strict):
    """A Hadoop cluster the job runs on (YARN) or checkpoints to (HDFS): its client configuration and the Kerberos
    identity Spark logs in with to obtain and renew HDFS delegation tokens (``--principal``/``--keytab``)."""

    conf_dir: Path | None = Field(
        None,
        description="the cluster's client configuration folder (its *-site.xml "
        "files are read and rendered again into the output's hadoop/ folder)",
    )
    properties: dict[str, dict[str, OptionValue]] = Field(
        default_factory=dict,
        description="per file (core-site.xml, hdfs-site.xml, yarn-site.xml): properties set over the folder's",
    )
    principal: str = Field(description="the Kerberos principal Spark logs in with for HDFS and YARN")
    keytab: KeytabFile

    @field_validator("principal")
    @classmethod
    def _principal(cls, value: str) -> str:
        parse_principal(value)
        return value

    @field_validator("conf_dir")
    @classmethod
    def _conf_dir(cls, value: Path | None, info: ValidationInfo) -> Path | None:
        if value is None:
            return None
        base = (info.context or {}).get("base_dir")
        folder = value if value.is_absolute() or base is None else Path(base) / value
        if not folder.is_dir() or not any(folder.glob("*-site.xml")):
            raise Problem(
                "conf_dir",
                f"{folder} is not a folder holding *-site.xml files; point it at the cluster's "
                "client configuration (e.g. /etc/hadoop/conf)",
            )
        return Path(policy.check(str(folder)))

    @field_validator("properties")
    @classmethod
    def _files(cls, value: dict[str, dict[str, OptionValue]]) -> dict[str, dict[str, OptionValue]]:
        for name, properties in value.items():
            if not HADOOP_SITE_FILE.match(name):
                raise Problem(name, "is not a Hadoop site file name; use core-site.xml, hdfs-site.xml, yarn-site.xml")
            for key in properties:
                if (reason := policy.option_key_problem(key)) is not None:
                    raise Problem(f"{name}.{key}", reason)
        return value

    @model_validator(mode="after")
    def _conf_dir_or_properties_given(self) -> Hadoop:
        if self.conf_dir is None and not self.properties:
            raise Problem(
                "conf_dir",
                "the hadoop section needs conf_dir or properties (at least fs.defaultFS in "
                "core-site.xml and the ResourceManager's addresses in yarn-site.xml)",
            )
        return self


def delegation_token_problem(cluster: Cluster, spark: Spark, hadoop: Hadoop | None) -> str | None:
    """Why ``executor_auth: delegation_token`` cannot work for this side, or None (docs/delegation-tokens.md)."""
    if not isinstance(cluster.sasl, GssapiSasl):
        return (
            f"delegation_token needs a GSSAPI identity to obtain the token with (this side uses "
            f"{cluster.mechanism or cluster.security_protocol}; a password would travel in Spark's configuration "
            "to every container); use sasl.mechanism GSSAPI or executor_auth: keytab"
        )
    tls = cluster.tls_settings
    if tls.truststore_password is not None or tls.mutual:
        return (
            "delegation_token passes this side's TLS settings to Spark's token manager through Spark's "
            "configuration, which reaches every container, so it takes no secret: use a PEM CA (tls.ca) without "
            "tls.truststore_password, tls.certificate and tls.key, or executor_auth: keytab"
        )
    if spark.master != "yarn":
        return (
            f"delegation_token needs mirror.spark.master: yarn (Spark obtains and hands out Kafka tokens only "
            f"on YARN and Kubernetes; here the master is {spark.master}); use executor_auth: keytab"
        )
    if spark.deploy_mode != "client":
        return (
            "delegation_token needs mirror.spark.deploy_mode: client (in cluster mode the driver's container "
            "would need the keytab to obtain new tokens); set deploy_mode: client or executor_auth: keytab"
        )
    if hadoop is None:
        return (
            "delegation_token needs the hadoop section (Spark obtains and renews tokens only with its "
            "--principal/--keytab on a kerberized cluster); add hadoop or use executor_auth: keytab"
        )
    return None


ALL_TOPICS_KEY = "mirror.topics.grant_all_topics"


def selection_problems(profile: Profile) -> list[str]:
    """Why the selection and rename cannot be mirrored safely, one sentence per include pattern: a pattern naming or
    selecting only internal or reserved topics; "every topic" (``.*``) without :data:`ALL_TOPICS_KEY`; a target
    name Kafka would refuse or that is reserved (:func:`topics.target_name_problem`), checked for every literal topic
    and, for a prefix or regex, for the shortest name it can give (one more character), which is the longest
    alias/prefix combination's least."""
    rename = f"rename {profile.mirror.rename.rule}"
    problems = []
    for piece in profile.selection().include:
        resource = topics.classify(piece)
        shown = shorten(piece, 80)
        if resource.kind == "literal" and (why := topics.reserved(resource.value)):
            problems.append(f"{shown} names a topic that is never mirrored ({why}); remove it")
            continue
        if resource.kind == "prefix" and resource.value and topics.reserved(resource.value + "x"):
            problems.append(
                f"{shown} selects only topics that are never mirrored ({topics.reserved(resource.value)}); remove it"
            )
            continue
        if resource.kind == "prefix" and not resource.value and not profile.mirror.topics.grant_all_topics:
            problems.append(
                f"{shown} selects every topic, and its ACLs would grant on TOPIC '*', which covers Kafka's internal "
                "topics (__consumer_offsets: every group's offsets; __transaction_state) too; list the topics or "
                f"prefixes to mirror, or set {ALL_TOPICS_KEY}: true to grant on '*' knowingly"
            )
        example = (
            resource.value
            if resource.kind == "literal"
            else (resource.value if resource.kind == "prefix" else "") + "x"
        )
        target = profile.target_topic(example)
        if (problem := topics.target_name_problem(target)) is not None:
            what = f"{shown} is mirrored as" if resource.kind == "literal" else f"{shown} can be mirrored as short as"
            problems.append(
                f"{what} {shorten(target, 80)} ({rename}), which {problem}; shorten the aliases or the prefix, "
                "or choose a rename that gives a legal, unreserved name"
            )
    return problems


class Profile(Strict):
    """A whole mirror: how to reach and authenticate to both clusters, and what flows between them."""

    version: Literal[1]
    kerberos: Kerberos | None = None
    source: Cluster
    target: Cluster
    mirror: Mirror
    hadoop: Hadoop | None = None

    @field_validator("source", "target")
    @classmethod
    def _realm_declared(cls, cluster: Cluster, info: ValidationInfo) -> Cluster:
        kerberos = info.data.get("kerberos")
        if cluster.realm and kerberos and kerberos.realms and cluster.realm not in kerberos.realms:
            raise Problem(
                "sasl.principal", f"realm {cluster.realm} is not declared under kerberos.realms; add it there"
            )
        if info.field_name == "target" and "source" in info.data and cluster.alias == info.data["source"].alias:
            raise Problem("alias", "source and target need different aliases (MirrorMaker 2 names clusters by alias)")
        return cluster

    @model_validator(mode="after")
    def _names_and_grants(self) -> Profile:
        """Every topic the selection can name is one the mirror may read, and every target name one it may write
        (:func:`selection_problems`); all problems are told at once."""
        if problems := selection_problems(self):
            raise Problem("mirror.topics.include", "; ".join(problems))
        return self

    @model_validator(mode="after")
    def _group_topics_fit(self) -> Profile:
        """With ``mirror.groups`` the target gets the offset map and checkpoints topics, named after the source's
        alias: Kafka must accept the names (the alias's characters are legal; its length may not be)."""
        if not self.mirror.groups.enabled:
            return self
        names = (topics.offset_map_topic(self.source.alias), topics.checkpoints_topic(self.source.alias))
        if long := [name for name in names if len(name) > topics.MAX_TOPIC_LENGTH]:
            raise Problem(
                "source.alias",
                f"with mirror.groups the target gets the topic {shorten(long[0], 80)}, over Kafka's limit of "
                f"{topics.MAX_TOPIC_LENGTH} characters; shorten source.alias",
            )
        return self

    @model_validator(mode="after")
    def _token_mode_fits(self) -> Profile:
        """delegation_token needs what Spark's token support needs; every problem is reported with its fix."""
        problems = [
            (f"{side}.executor_auth", reason)
            for side, cluster in self.clusters().items()
            if cluster.uses_delegation_token
            and (reason := delegation_token_problem(cluster, self.mirror.spark, self.hadoop))
        ]
        if problems:  # one error per model: the other side's problem, if any, is named in the same sentence
            (field, reason), *more = problems
            also = "".join(f"; {other}: {why}" for other, why in more)
            raise Problem(field, reason + also)
        return self

    @model_validator(mode="after")
    def _isolation_level_in_one_place(self) -> Profile:
        """The source's isolation level is ``mirror.source_isolation_level`` alone: an ``isolation.level`` among the
        source's client options (the job's, and MirrorMaker 2's as ``<alias>.consumer.isolation.level``) or MirrorMaker
        2's source consumer properties would make the job, MirrorMaker 2, lag and verify read different records."""
        mm2_consumer = f"{self.source.alias}.consumer.isolation.level".lower()
        found = [
            f"source.client_options.{k}" for k in self.source.client_options if k.lower().endswith("isolation.level")
        ]
        found += [f"mirror.mm2.properties.{k}" for k in self.mirror.mm2.properties if k.lower() == mm2_consumer]
        if found:
            raise Problem(
                found[0],
                "the source's isolation level is mirror.source_isolation_level (the job, MirrorMaker 2, lag and verify "
                "read it from there); remove this key and set mirror.source_isolation_level (read_committed is the "
                "default)",
            )
        return self

    def clusters(self) -> dict[Side, Cluster]:
        return {"source": self.source, "target": self.target}

    def cluster(self, side: Side) -> Cluster:
        """The cluster on ``side`` ("source" or "target")."""
        return self.source if side == "source" else self.target

    @property
    def mechanisms(self) -> list[str | None]:
        """Each side's SASL mechanism (None: no SASL), for what a client of both sides must support."""
        return [cluster.mechanism for cluster in self.clusters().values()]

    @property
    def token_sides(self) -> list[Side]:
        """The sides ("source", "target") whose executors log in with a Kafka delegation token (``executor_auth``)."""
        return [side for side, cluster in self.clusters().items() if cluster.uses_delegation_token]

    @property
    def uses_delegation_tokens(self) -> bool:
        """True when some side's executors log in with a Kafka delegation token (``executor_auth``)."""
        return bool(self.token_sides)

    @property
    def uses_kerberos(self) -> bool:
        return self.hadoop is not None or any(cluster.mechanism == "GSSAPI" for cluster in (self.source, self.target))

    def selection(self) -> topics.TopicSelection:
        """The topics mirrored: ``mirror.topics``, less those the rename rule says came from the target
        (:mod:`~secure_mirror.profile.cycles`, MirrorMaker 2's ``isCycle``)."""
        chosen, rename = self.mirror.topics.selection(), self.mirror.rename
        cycle = cycles.cycle_pattern(rename.template_text, self.source.alias, self.target.alias, rename.mm2_separator)
        return chosen if cycle is None else dataclasses.replace(chosen, exclude=(*chosen.exclude, cycle))

    @property
    def target_topic_pieces(self) -> list[str]:
        """The target name around the source topic: ``alias_prefix`` -> ``["src.", ""]``; join them with the topic
        (the job builds its Spark expression from them, the ACLs see whether the topic comes last)."""
        marker = "\0"  # no alias or template holds it (the input policy refuses control characters)
        return self.mirror.rename.template_text.format(
            topic=marker, source_alias=self.source.alias, target_alias=self.target.alias
        ).split(marker)

    def target_topic(self, topic: str) -> str:
        """The name ``topic`` gets on the target cluster under the profile's rename rule."""
        return topic.join(self.target_topic_pieces)

    @property
    def mm2_target_topics(self) -> tuple[str, ...]:
        """MirrorMaker 2's own topics on the target named after the source alias (its checkpoints and the source's
        heartbeats), which a prefix grant on the target must not cover (:func:`topics.prefix_covers_reserved`)."""
        alias, separator = self.source.alias, self.mirror.rename.mm2_separator or "."
        return (f"{alias}{separator}checkpoints{separator}internal", f"{alias}{separator}heartbeats")

    @property
    def group_prefix(self) -> str:
        """The prefix of every consumer group the mirror uses (Spark's ``groupIdPrefix``; the ACLs grant READ on it)."""
        return f"secure-mirror-{self.source.alias}-{self.target.alias}"

    @property
    def transactional_prefix(self) -> str:
        """With exactly_once, the start of each source partition's transactional id, which is also the name of the
        target consumer group holding that partition's position: the sink appends ``<topic>-<partition>``
        (docs/exactly-once.md). Under the group prefix, so the group grant covers the groups."""
        return f"{self.group_prefix}-eos-"

    @property
    def job_key(self) -> str:
        """Eight hex digits telling this mirror job from others between the same two clusters (from its checkpoint
        location, the query's identity): exactly_once's per-task transactional ids carry it
        (``<transactional_prefix>task#<job_key>#<task>``), so two jobs never fence each other."""
        return hashlib.sha256(self.mirror.checkpoint_location.encode()).hexdigest()[:8]
