"""Secrets as references that Kafka's own config providers resolve (``render --secrets references``), in one place.

In that mode no file a Java reader reads holds a secret. A profile's ``env:NAME`` is written ``${env:NAME}``
(``EnvVarConfigProvider``, Kafka 3.5+) and ``file:/dir/name`` ``${directory:/dir:name}`` (``DirectoryConfigProvider``,
Kafka 2.7+: the file's whole content), the mutual-TLS key file too; Kafka's ``AbstractConfig`` (2.3+) resolves them
when a client starts, MirrorMaker 2's ``MirrorMakerConfig`` from its top-level ``config.providers``. Each Kafka
configuration holding a reference declares the providers it uses (:func:`declarations`), each restricted to the
variables and folders the profile names (``allowlist.pattern``, 3.5+; ``allowed.paths``, 3.8+; older versions ignore
them), and the JVMs we start allow exactly those classes (:func:`automatic_option`: Kafka 3.8+'s allow-list; a class
not in it makes the client refuse to start). A secret in a Hadoop credential store (``jceks://file/PATH#alias``) is
``${jceks-XXXXXXXX:alias}``, resolved by our ``securemirror.config.HadoopCredentialConfigProvider`` (the sink jar)
through Hadoop's ``CredentialProviderFactory``: one provider per store, named after a digest of the store's URI (the
same name in every file), with the store as its ``param.path``; its reader needs the sink jar and Hadoop's client jars
on its class path (:func:`needs_hadoop`).

| encoder | reader | what it places |
| --- | --- | --- |
| :func:`properties_secret` | a Kafka client's or MirrorMaker 2's configuration | the value, or the reference |
| :func:`jaas_secret` (filter ``jaas_secret``) | Kafka's ``JaasConfig`` after resolution | the quoted value, or ``"${...}"`` |

What a reference cannot carry is refused, naming the field and the reference, never the value:

- in a JAAS option (a SASL password or client secret), a ``"`` or ``\\``: Kafka resolves the variable inside the whole
  ``sasl.jaas.config`` and then parses it, so the value lands between the quotes unescaped;
- a ``file:`` secret ending in a line break: the profile drops it (``echo pw > file``), Kafka's provider reads it;
- a name a reference cannot hold: an environment variable's other than letters, digits and ``_``; a path with one of
  ``: { } $ , " \\`` (Kafka's variable syntax, its ``allowed.paths`` list, a JAAS string's quoting).

To check them, render reads each referenced secret (it never writes it): like every command it takes only a profile
whose references resolve where it runs (``profile/loader.py``); a secret that went away since is refused, as in
values mode, by :meth:`SecretRef.resolve`.
"""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from secure_mirror import paths
from secure_mirror.profile.cluster import Cluster
from secure_mirror.profile.secrets import SecretRef, SecretUnavailable
from secure_mirror.profile.security import OAuthSasl, PasswordSasl
from secure_mirror.render import encoders, templating
from secure_mirror.render.encoders import UnrepresentableValue, sh

AUTOMATIC_PROVIDERS = "org.apache.kafka.automatic.config.providers"  # Kafka 3.8+: unset, every class is allowed
CONFIG_PROVIDERS = "config.providers"  # split on "," without trimming by AbstractConfig: written without blanks


@dataclass(frozen=True)
class Provider:
    name: str  # the name in config.providers and in ${name:...}
    java_class: str
    restriction: str  # its parameter limiting what it reads (config.providers.<name>.param.<restriction>)
    store: str = ""  # a Hadoop credential store's provider URI, the value of that parameter (one provider per store)


HADOOP_CREDENTIALS = "securemirror.config.HadoopCredentialConfigProvider"  # in the sink jar (jvm/sink)
ENV = Provider("env", "org.apache.kafka.common.config.provider.EnvVarConfigProvider", "allowlist.pattern")
DIRECTORY = Provider("directory", "org.apache.kafka.common.config.provider.DirectoryConfigProvider", "allowed.paths")
PROVIDERS = (DIRECTORY, ENV)  # in the order written, then the credential stores' in the order of their first use


def store_provider(store: str) -> Provider:
    """The provider reading the Hadoop credential store ``store``: the same name wherever the store is used."""
    digest = hashlib.sha256(store.encode("utf-8")).hexdigest()[:8]
    return Provider(f"jceks-{digest}", HADOOP_CREDENTIALS, "path", store)


@dataclass(frozen=True)
class Secrets:
    """How rendered files carry a secret: its value (``values``) or a reference Kafka resolves (``references``);
    ``librdkafka_values``: librdkafka.conf, whose readers cannot resolve references, holds the values anyway."""

    mode: Literal["values", "references"] = "values"
    librdkafka_values: bool = False

    @property
    def references(self) -> bool:
        return self.mode == "references"

    @property
    def librdkafka_holds_values(self) -> bool:
        return not self.references or self.librdkafka_values


VALUES = Secrets()
REFERENCES = Secrets("references")


@dataclass(frozen=True)
class Reference:
    """A secret as Kafka's variable ``${provider:[path:]key}``; ``str()`` is that text."""

    provider: Provider
    path: str  # "" for the environment
    key: str

    def __str__(self) -> str:
        return f"${{{self.provider.name}:{self.path + ':' if self.path else ''}{self.key}}}"


_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")  # also a literal in the allowlist.pattern regex
_PATH_UNSAFE = re.compile(r'[:{}$,"\\]')


def reference(secret: SecretRef | Path, field: str) -> Reference:
    """The reference for a profile's secret (or a secret file given as a path), or a refusal naming ``field``."""
    if isinstance(secret, SecretRef) and secret.kind == "jceks":  # its alias holds none of : } (profile/credstores)
        return Reference(store_provider(secret.name), "", secret.alias)
    if isinstance(secret, SecretRef) and secret.kind == "env":
        if not _ENV_NAME.fullmatch(secret.name):
            raise UnrepresentableValue(
                f"{field} ({secret}): a Kafka config provider reference needs a variable name of letters, digits "
                "and _ (not starting with a digit); rename the variable, or render with --secrets values"
            )
        return Reference(ENV, "", secret.name)
    path = Path(secret.name) if isinstance(secret, SecretRef) else Path(secret)
    if _PATH_UNSAFE.search(str(path)) or not path.name:
        raise UnrepresentableValue(
            f'{field} ({secret}): the path holds one of : {{ }} $ , " \\, which a Kafka config provider reference '
            "cannot carry (its variable syntax, its allowed.paths list, a JAAS string); move the file, or render with "
            "--secrets values"
        )
    return Reference(DIRECTORY, str(path.parent), path.name)


def properties_secret(secret: SecretRef, field: str, secrets: Secrets) -> str:
    """A secret setting's value in a Kafka configuration (``ssl.*.password``): the value, or its checked reference."""
    if not secrets.references:
        return secret.resolve()
    found = reference(secret, field)
    _check(secret, field, in_jaas=False)
    return str(found)


def jaas_option(secret: SecretRef, field: str, secrets: Secrets) -> str | Reference:
    """A secret JAAS option for the login-module templates, which place it with :func:`jaas_secret`."""
    if not secrets.references:
        return secret.resolve()
    found = reference(secret, field)
    _check(secret, field, in_jaas=True)
    return found


def jaas_secret(value: str | Reference, field: str) -> str:
    """Filter ``jaas_secret``: a reference in double quotes (its text holds no ``"`` nor ``\\``), a value quoted by
    :func:`encoders.jaas`. Only ``sasl.jaas.config`` resolves references: the JDK reads ``${`` in a jaas.conf file as a
    system property, so a reference never goes there (render/tree.py leaves that file out)."""
    return f'"{value}"' if isinstance(value, Reference) else encoders.jaas(value, field)


templating.register_filter("jaas_secret", jaas_secret)


def _check(secret: SecretRef, field: str, in_jaas: bool) -> None:
    """Refuse a secret whose value Kafka would read otherwise than the profile does."""
    value = secret.resolve()  # SecretUnavailable (naming the reference) when it cannot be read
    if secret.kind == "file":
        try:
            broken = ends_in_a_line_break(Path(secret.name))
        except OSError as exc:
            raise SecretUnavailable(f"{secret}: cannot read it ({exc.strerror}); fix the file") from None
        if broken:
            raise UnrepresentableValue(
                f"{field} ({secret}): the file ends in a line break, which the profile drops but Kafka's "
                "DirectoryConfigProvider reads as part of the secret; write the file without it (printf '%s' ...)"
            )
    if in_jaas and ('"' in value or "\\" in value):
        raise UnrepresentableValue(
            f'{field} ({secret}): the secret contains " or \\, which Kafka pastes unescaped into sasl.jaas.config '
            "when it resolves the reference; set a secret without them, or render with --secrets values"
        )


def ends_in_a_line_break(path: Path) -> bool:
    """True when the file's last byte is a line break (``echo pw > file``), which Kafka's DirectoryConfigProvider
    reads as part of the secret; OSError when it cannot be read."""
    with open(path, "rb") as fh:
        if fh.seek(0, os.SEEK_END) == 0:
            return False
        fh.seek(-1, os.SEEK_END)
        return fh.read(1) in (b"\n", b"\r")


def hadoop_classpath_note(clusters: Iterable[tuple[str, Cluster]]) -> list[str]:
    """The header line telling a reader of these references the class path it needs, when one is in a credential
    store (our provider in the sink jar, over Hadoop's client jars); none otherwise."""
    if not needs_hadoop(clusters):
        return []
    return [
        f"Some are read from a Hadoop credential store: export CLASSPATH={sh(paths.credential_provider_classpath())}"
    ]


def cluster_secrets(cluster: Cluster, side: str) -> Iterator[tuple[str, SecretRef | Path]]:
    """(field, secret) of each secret the Java files of ``cluster`` carry, a reference each in references mode."""
    sasl = cluster.sasl
    if isinstance(sasl, PasswordSasl):
        yield f"{side}.sasl.password", sasl.password
    if isinstance(sasl, OAuthSasl):
        yield f"{side}.sasl.client_secret", sasl.client_secret
    if cluster.uses_tls:
        tls = cluster.tls_settings
        if tls.truststore_type is not None and tls.truststore_password is not None:
            yield f"{side}.tls.truststore_password", tls.truststore_password
        if tls.mutual and tls.key is not None:
            yield f"{side}.tls.key", tls.key
            if tls.key_password is not None:
                yield f"{side}.tls.key_password", tls.key_password


def _references(clusters: Iterable[tuple[str, Cluster]]) -> list[Reference]:
    return [reference(secret, field) for side, c in clusters for field, secret in cluster_secrets(c, side)]


def _used(found: list[Reference]) -> list[Provider]:
    stores = [r.provider for r in found if r.provider.store]
    return [provider for provider in PROVIDERS if any(r.provider == provider for r in found)] + list(
        dict.fromkeys(stores)
    )


def declarations(clusters: Iterable[tuple[str, Cluster]]) -> dict[str, str]:
    """``config.providers`` and each used provider's class and parameter (what it may read, or its store), for a
    configuration holding the references of ``clusters`` (side, cluster); empty when it holds none."""
    found = _references(clusters)
    used = _used(found)
    if not used:
        return {}
    settings = {CONFIG_PROVIDERS: ",".join(provider.name for provider in used)}
    for provider in used:
        limits = sorted({r.key if provider == ENV else r.path for r in found if r.provider == provider})
        prefix = f"{CONFIG_PROVIDERS}.{provider.name}"
        settings[f"{prefix}.class"] = provider.java_class
        parameter = provider.store or ("|" if provider == ENV else ",").join(limits)
        settings[f"{prefix}.param.{provider.restriction}"] = parameter
    return settings


def provider_classes(clusters: Iterable[tuple[str, Cluster]]) -> list[str]:
    """The provider classes the references of ``clusters`` need, for Kafka's allow-list."""
    return list(dict.fromkeys(provider.java_class for provider in _used(_references(clusters))))


def needs_hadoop(clusters: Iterable[tuple[str, Cluster]]) -> bool:
    """True when a reference of ``clusters`` is read from a Hadoop credential store: its reader needs the sink jar
    and Hadoop's client jars on its class path (the job has them)."""
    return HADOOP_CREDENTIALS in provider_classes(clusters)


def environment_names(clusters: Iterable[tuple[str, Cluster]]) -> list[str]:
    """The environment variables the readers of ``clusters``' references read: the ``env:`` secrets'."""
    return sorted({r.key for r in _references(clusters) if r.provider == ENV})


def automatic_option(classes: list[str]) -> str:
    """The JVM option allowing exactly ``classes`` (none: no provider may be instantiated)."""
    return f"-D{AUTOMATIC_PROVIDERS}={','.join(classes)}"
