"""Settings that are legal but weaken the run, found in one place: validate, render, pre-flight and run report each as
``warning: <field>: <finding>; <fix>``, pre-flight as WARN checks (``<side>.config.weak-settings``, a keytab's as
``<side>.files.keytab``, the rest as ``profile.config.weak-settings``), and ``--strict`` makes them errors.

Each rule below is a small function of the validated profile (and, for secret files, of the files' metadata: never
their contents). A finding names what it saw, never a value that could be a secret: a debug flag is named, not the
option string around it; a secret file by its path.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

from secure_mirror.errors import BadInputError
from secure_mirror.profile.base import option_matches
from secure_mirror.profile.cluster import Cluster
from secure_mirror.profile.code_loading import spark_class_path_finding
from secure_mirror.profile.fields import secret_file_exposure, secret_file_fix
from secure_mirror.profile.jvm_options import environment_variable, holds_jvm_options, system_properties
from secure_mirror.profile.loader import ProfileError
from secure_mirror.profile.models import ALL_TOPICS_KEY, Profile
from secure_mirror.profile.policy import printable, shorten
from secure_mirror.profile.principals import parse_principal
from secure_mirror.profile.redaction import string_redaction_finding
from secure_mirror.profile.secrets import SecretRef
from secure_mirror.profile.security import GssapiSasl, OAuthSasl, PasswordSasl


@dataclass(frozen=True)
class ProfileWarning:
    """A setting that works but weakens the run: where it is (a field path), what it does, how to fix it."""

    field: str
    finding: str
    fix: str

    def __str__(self) -> str:
        return f"{self.field}: {self.finding}; {self.fix}"

    @property
    def section(self) -> str:
        """The profile's top-level section the field is in: ``source``, ``target``, ``mirror``, ``hadoop`` ..."""
        return self.field.split(".", 1)[0]


def profile_warnings(profile: Profile) -> list[ProfileWarning]:
    """Every warning of ``profile``, sides first, each on one line whatever a file name holds."""
    found = [warning for side, cluster in profile.clusters().items() for warning in _side(side, cluster)]
    found += [*_kerberos(profile), *_hadoop(profile), *_spark_conf(profile), *_mm2(profile), *_isolation(profile)]
    found += [*_all_topics(profile)]
    return [_one_line(warning) for warning in found]


def _one_line(w: ProfileWarning) -> ProfileWarning:
    """``w`` with control characters escaped (a file name may hold a line break): one line on the terminal."""
    return dataclasses.replace(w, field=printable(w.field), finding=printable(w.finding), fix=printable(w.fix))


def refuse_warnings(source: Path | str, warnings: list[ProfileWarning]) -> None:
    """``--strict``: the warnings as the profile's problems (a :class:`ProfileError`, exit 2), each one listed."""
    if warnings:
        raise ProfileError(source, [str(warning) for warning in warnings])


# ---- secret files: keytabs, password files, the mutual-TLS key ------------------------------------------------------
def secret_file_warning(field: str, path: Path, what: str) -> ProfileWarning | None:
    """Another user can get at the file (:func:`fields.secret_file_exposure`, the rule pre-flight shares)."""
    exposure = secret_file_exposure(path, what)
    return _one_line(ProfileWarning(field, exposure, secret_file_fix(path))) if exposure else None


def _secret_files(side: str, cluster: Cluster) -> Iterator[ProfileWarning]:
    sasl, tls = cluster.sasl, cluster.tls_settings
    files: list[tuple[str, Path | SecretRef | None, str]] = [
        ("sasl.keytab", sasl.keytab if isinstance(sasl, GssapiSasl) else None, "keytab"),
        ("sasl.password", sasl.password if isinstance(sasl, PasswordSasl) else None, "password file"),
        ("sasl.client_secret", sasl.client_secret if isinstance(sasl, OAuthSasl) else None, "client secret file"),
        ("tls.key", tls.key, "private key"),
        ("tls.key_password", tls.key_password, "password file"),
        ("tls.truststore_password", tls.truststore_password, "password file"),
    ]
    for field, where, what in files:
        path = where.local_file() if isinstance(where, SecretRef) else where
        what = "credential store" if isinstance(where, SecretRef) and where.kind == "jceks" else what
        if isinstance(path, Path) and (warning := secret_file_warning(f"{side}.{field}", path, what)):
            yield warning


def _hadoop(profile: Profile) -> Iterator[ProfileWarning]:
    if profile.hadoop is not None and (
        warning := secret_file_warning("hadoop.keytab", profile.hadoop.keytab, "keytab")
    ):
        yield warning


# ---- a side's connection ------------------------------------------------------------------------------------------
def _side(side: str, cluster: Cluster) -> Iterator[ProfileWarning]:
    yield from _secret_files(side, cluster)
    yield from _tls(side, cluster)
    yield from _sasl(side, cluster)
    yield from _anonymous(side, cluster)
    yield from _class_loading(
        f"{side}.client_options",
        cluster.client_options,
        "the mirror's clients (Spark's driver and executors, MirrorMaker 2's workers)",
    )


def _tls(side: str, cluster: Cluster) -> Iterator[ProfileWarning]:
    if cluster.uses_tls and not cluster.tls_settings.hostname_verification:
        yield ProfileWarning(
            f"{side}.tls.hostname_verification",
            "off, so any certificate the CA signed is accepted for any broker",
            f"set {side}.tls.hostname_verification: true and connect by the names the certificates list",
        )
    if (kind := cluster.tls.truststore_type if cluster.tls else None) not in (None, "PEM"):
        yield ProfileWarning(
            f"{side}.tls.ca",
            f"librdkafka (kcat) cannot read a {kind} truststore",
            "also provide the CA as PEM to use librdkafka.conf",
        )


def _sasl(side: str, cluster: Cluster) -> Iterator[ProfileWarning]:
    sasl = cluster.sasl
    if cluster.security_protocol == "SASL_PLAINTEXT" and cluster.mechanism == "PLAIN":
        yield ProfileWarning(
            f"{side}.security_protocol",
            "PLAIN over SASL_PLAINTEXT sends the password unencrypted to every broker",
            f"use security_protocol SASL_SSL on {side}",
        )
    if isinstance(sasl, OAuthSasl) and sasl.token_endpoint_url.lower().startswith("http://"):
        yield ProfileWarning(
            f"{side}.sasl.token_endpoint_url",
            "plain http: the client secret and the tokens travel unencrypted",
            f"use an https:// {side}.sasl.token_endpoint_url",
        )
    if isinstance(sasl, GssapiSasl) and parse_principal(sasl.principal).primary == sasl.service_name:
        yield ProfileWarning(
            f"{side}.sasl.principal",
            f"the mirror logs in as {sasl.principal}, a principal of the brokers' own service "
            f"({sasl.service_name}/...), which brokers usually list as a super user",
            "create a dedicated principal for the mirror (e.g. mirror/HOST@REALM) and grant it the rendered ACLs",
        )


ANONYMOUS = "User:ANONYMOUS"  # Kafka's KafkaPrincipal.ANONYMOUS: every client of a listener that authenticates none


def _anonymous(side: str, cluster: Cluster) -> Iterator[ProfileWarning]:
    """The ACLs render grants to the principal the brokers see (``Cluster.kafka_principal``); when that is
    ``User:ANONYMOUS`` they grant the mirror's rights to every client that reaches the listener unauthenticated."""
    try:
        if cluster.kafka_principal != ANONYMOUS:
            return
    except BadInputError:  # the brokers' rules give no principal: validate says so where it reads the certificate
        return
    grants = (
        "so the rendered ACLs grant the mirror's rights (its topics, groups and transactional ids) to User:ANONYMOUS, "
        "every client that reaches the brokers' listener without authenticating"
    )
    if cluster.sasl is None and not cluster.tls_settings.mutual:
        yield ProfileWarning(
            f"{side}.security_protocol",
            f"{cluster.security_protocol} without a client certificate authenticates no one, {grants}",
            f"authenticate the mirror: security_protocol SASL_SSL with a sasl section, or SSL with tls.certificate "
            f"and tls.key, on {side}",
        )
    else:
        yield ProfileWarning(
            f"{side}.{cluster._principal_source[0]}",  # the field the principal comes from
            f"the brokers see the mirror as User:ANONYMOUS, the principal of unauthenticated clients, {grants}",
            "give the mirror an identity of its own, which the brokers name otherwise",
        )


def _kerberos(profile: Profile) -> Iterator[ProfileWarning]:
    if profile.uses_kerberos and profile.kerberos is None:
        yield ProfileWarning(
            "kerberos", "not set, so clients use the system krb5.conf", "declare kerberos.realms or kerberos.krb5_conf"
        )


# ---- options that load classes into the processes holding both identities' credentials ----------------------------
# Kafka clients (and MirrorMaker 2's workers) instantiate the classes these name; after any prefix (consumer.,
# producer., <alias>.consumer., source->target.producer.), as protected_option matches prefixed keys.
CLASS_LOADING_OPTION = re.compile(r"^(metric\.reporters|interceptor\.classes|security\.providers)$")


def class_loading_option(key: str) -> bool:
    return option_matches(CLASS_LOADING_OPTION, key)


def _class_loading(field: str, options: Mapping[str, object], processes: str) -> Iterator[ProfileWarning]:
    for key, value in options.items():
        if class_loading_option(key) and str(value).strip():
            yield ProfileWarning(
                f"{field}.{shorten(key, 60)}",
                f"loads the classes it names into {processes}, which hold both clusters' credentials (keytabs, "
                "passwords, TLS keys); any such class can read and send them",
                "remove it, or name only classes from jars your security team has reviewed",
            )


def _mm2(profile: Profile) -> Iterator[ProfileWarning]:
    yield from _class_loading("mirror.mm2.properties", profile.mirror.mm2.properties, "MirrorMaker 2's workers")


# ---- Spark: debug output that prints credentials -------------------------------------------------------------------
# -D<name> -> (what it prints, whether it prints only when true): Java reads the first three as booleans
# (Boolean.parseBoolean); javax.net.debug prints with any value (empty included), java.security.debug with any option.
_DEBUG_PROPERTIES = {
    "sun.security.krb5.debug": ("Kerberos tickets and key material", True),
    "sun.security.jgss.debug": ("GSS-API tokens and Kerberos key material", True),
    "sun.security.spnego.debug": ("SPNEGO tokens, which carry Kerberos tickets", True),
    "javax.net.debug": (
        "TLS handshakes and, with its usual settings (all, ssl:record:plaintext), the decrypted traffic with the SASL "
        "logins in it",
        False,
    ),
    "java.security.debug": ("key store, provider and login internals (with some options, key material)", False),
}


def debug_flags(options: str) -> Iterator[tuple[str, str]]:
    """Each ``-D`` option in ``options`` that turns on a debug output printing credentials: (the flag, what it
    prints). The flag is written as a fixed name, never with the option's value."""
    for name, value in system_properties(options):
        if name not in _DEBUG_PROPERTIES:
            continue
        prints, boolean = _DEBUG_PROPERTIES[name]
        if (value.lower() == "true") if boolean else (name == "javax.net.debug" or value):
            yield (f"-D{name}=true" if boolean else f"-D{name}"), prints


def _krb5_trace_finding(key: str) -> str | None:
    if environment_variable(key) != "KRB5_TRACE":
        return None
    return (
        "KRB5_TRACE makes MIT Kerberos write a trace of every ticket exchange (principals, tickets, the start of each "
        "key) to the file it names"
    )


# What a mirror.spark.conf key alone may give away, in the order the warnings are said: (its finding, the fix).
_SPARK_CONF_KEYS: tuple[tuple[Callable[[str], str | None], str], ...] = (
    (
        spark_class_path_finding,
        "remove it, or set it in the Spark configuration of the machine that submits (spark-defaults.conf in "
        "SPARK_CONF_DIR), naming only what your security team has reviewed",
    ),
    (
        string_redaction_finding,
        "make each of its alternatives match a whole setting with its value (db\\.password=[^,\\s]*), or remove it",
    ),
    (_krb5_trace_finding, "remove it (set it only to debug a failing login, then delete the trace)"),
)


def _spark_conf(profile: Profile) -> Iterator[ProfileWarning]:
    for key, value in profile.mirror.spark.conf.items():
        field = f"mirror.spark.conf.{shorten(key, 60)}"
        if holds_jvm_options(key):
            yield from _debug_warnings(field, debug_flags(str(value)))
        for finding_of, fix in _SPARK_CONF_KEYS:
            if (finding := finding_of(key)) is not None:
                yield ProfileWarning(field, finding, fix)


def _debug_warnings(field: str, flags: Iterable[tuple[str, str]]) -> Iterator[ProfileWarning]:
    for flag, prints in flags:
        yield ProfileWarning(
            field,
            f"{flag} prints {prints} into the JVM's output, which Spark keeps in its logs",
            f"remove {flag} (set it only to debug a failing login, then delete the logs)",
        )


# ---- what the mirror copies ---------------------------------------------------------------------------------------
def _isolation(profile: Profile) -> Iterator[ProfileWarning]:
    if profile.mirror.source_isolation_level == "read_uncommitted":
        yield ProfileWarning(
            "mirror.source_isolation_level",
            "read_uncommitted: records of aborted and open transactions are copied as committed records",
            "drop it (read_committed is the default) unless no producer of the source uses transactions",
        )


def _all_topics(profile: Profile) -> Iterator[ProfileWarning]:
    if profile.mirror.topics.grant_all_topics and any(p.strip() == ".*" for p in profile.selection().include):
        yield ProfileWarning(
            ALL_TOPICS_KEY,
            "include .* is granted as TOPIC '*', which covers Kafka's internal topics too (__consumer_offsets: every "
            "group's offsets; __transaction_state), though the job never mirrors them",
            "list the topics or prefixes to mirror instead, and drop grant_all_topics",
        )
