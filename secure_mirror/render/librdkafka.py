"""librdkafka configuration (kcat ``-F``, confluent-kafka): ``key=value`` lines, no escaping at all.

kcat reads the file with ``fgets`` into a 512-byte buffer, trims blanks at both ends of a line, and turns
``\\=`` and ``\\:`` into ``=`` and ``:``. Values that would not survive that are refused, naming the field.
GSSAPI goes through cyrus-sasl, which uses the process's default credential cache: the kinit command below
fills it, and a process holding two identities points ``KRB5CCNAME`` at a ``DIR:`` collection so that MIT
krb5 picks, per broker, the cache whose realm matches.
"""

from __future__ import annotations

import functools
import re

from secure_mirror.kafka import oauth
from secure_mirror.kafka.identity import ClientConf, KafkaIdentity
from secure_mirror.profile.cluster import Cluster
from secure_mirror.profile.security import GssapiSasl, OAuthSasl, PasswordSasl
from secure_mirror.render import templating
from secure_mirror.render.encoders import UnrepresentableValue, rdkafka_line
from secure_mirror.render.providers import REFERENCES, VALUES, Secrets

KINIT_CMD = 'kinit -k -t "%{sasl.kerberos.keytab}" %{sasl.kerberos.principal}'
_SHELL_UNSAFE = re.compile(r'["$`\\\n]')  # inside "..." of the kinit command run by /bin/sh
_SHELL_WORD = re.compile(r"^[A-Za-z0-9._@/+=-]+$")  # the principal is an unquoted word of that command


def librdkafka_config(cluster: Cluster, side: str, secrets: Secrets = VALUES) -> dict[str, tuple[str, str]]:
    """librdkafka key -> (value, profile field it comes from); without the secret settings (:func:`withheld`) when
    ``secrets`` keeps values out of librdkafka.conf (librdkafka cannot resolve a reference)."""
    config = {
        "bootstrap.servers": (",".join(cluster.bootstrap_servers), f"{side}.bootstrap_servers"),
        "security.protocol": (cluster.security_protocol.lower(), f"{side}.security_protocol"),
    }
    config.update(_sasl(cluster, side, secrets.librdkafka_holds_values))
    config.update(_tls(cluster, side, secrets.librdkafka_holds_values))
    return config


def withheld(cluster: Cluster, side: str, secrets: Secrets) -> list[tuple[str, str, str]]:
    """(librdkafka key, profile field, the profile's reference) of each secret setting left out of librdkafka.conf."""
    if secrets.librdkafka_holds_values:
        return []
    sasl, tls = cluster.sasl, cluster.tls_settings if cluster.uses_tls else None
    found = []
    if isinstance(sasl, PasswordSasl):
        found.append(("sasl.password", f"{side}.sasl.password", str(sasl.password)))
    if isinstance(sasl, OAuthSasl):
        found.append(("sasl.oauthbearer.client.secret", f"{side}.sasl.client_secret", str(sasl.client_secret)))
    if tls is not None and tls.mutual and tls.key_password is not None:
        found.append(("ssl.key.password", f"{side}.tls.key_password", str(tls.key_password)))
    return found


def identity(
    cluster: Cluster, side: str, *, ccache: str | None = None, krb5_config: str | None = None
) -> KafkaIdentity:
    """The side's identity for in-process librdkafka clients: the rendered configuration's settings, with its
    own credential cache (``ccache``) and ``krb5_config`` when given."""
    conf: ClientConf = {key: value for key, (value, _field) in librdkafka_config(cluster, side).items()}
    sasl = cluster.sasl
    if isinstance(sasl, OAuthSasl) and sasl.token_endpoint_ca is not None:  # see kafka/oauth.py
        conf = {key: value for key, value in conf.items() if not key.startswith("sasl.oauthbearer.")}
        conf["oauth_cb"] = functools.partial(
            oauth.fetch_token,
            sasl.token_endpoint_url,
            sasl.client_id,
            sasl.client_secret.resolve(),
            sasl.scope,
            str(sasl.token_endpoint_ca),
            30.0,
        )
    return KafkaIdentity(conf, krb5_config=krb5_config, ccache=ccache)


def holds_secret(cluster: Cluster, side: str, secrets: Secrets) -> bool:
    """With references: True when librdkafka.conf holds a secret all the same (--with-librdkafka-secrets)."""
    return secrets.librdkafka_holds_values and bool(withheld(cluster, side, REFERENCES))


def _sasl(cluster: Cluster, side: str, with_secrets: bool) -> dict[str, tuple[str, str]]:
    sasl, field = cluster.sasl, f"{side}.sasl"
    if sasl is None:
        return {}
    config: dict[str, tuple[str, str]] = {"sasl.mechanisms": (sasl.mechanism, f"{field}.mechanism")}
    if isinstance(sasl, GssapiSasl):
        if _SHELL_UNSAFE.search(str(sasl.keytab)):
            raise UnrepresentableValue(
                f'{field}.keytab: the path contains ", $, ` or \\, which the kinit command '
                "librdkafka runs through /bin/sh would interpret; move the keytab"
            )
        if not _SHELL_WORD.match(sasl.principal):
            raise UnrepresentableValue(
                f"{field}.principal: contains characters the kinit command librdkafka runs "
                "through /bin/sh would interpret; use letters, digits and . _ @ / + = -"
            )
        config["sasl.kerberos.service.name"] = (sasl.service_name, f"{field}.service_name")
        config["sasl.kerberos.principal"] = (sasl.principal, f"{field}.principal")
        config["sasl.kerberos.keytab"] = (str(sasl.keytab), f"{field}.keytab")
        config["sasl.kerberos.kinit.cmd"] = (KINIT_CMD, f"{field}.keytab")
    elif isinstance(sasl, PasswordSasl):
        config["sasl.username"] = (sasl.username, f"{field}.username")
        if with_secrets:
            config["sasl.password"] = (sasl.password.resolve(), f"{field}.password")
    elif isinstance(sasl, OAuthSasl):
        config["sasl.oauthbearer.method"] = ("oidc", f"{field}.mechanism")
        config["sasl.oauthbearer.client.id"] = (sasl.client_id, f"{field}.client_id")
        if with_secrets:
            config["sasl.oauthbearer.client.secret"] = (sasl.client_secret.resolve(), f"{field}.client_secret")
        config["sasl.oauthbearer.token.endpoint.url"] = (sasl.token_endpoint_url, f"{field}.token_endpoint_url")
        if sasl.scope is not None:
            config["sasl.oauthbearer.scope"] = (sasl.scope, f"{field}.scope")
    return config


def _tls(cluster: Cluster, side: str, with_secrets: bool) -> dict[str, tuple[str, str]]:
    if not cluster.uses_tls:
        return {}
    tls, field = cluster.tls_settings, f"{side}.tls"
    config = {
        "ssl.endpoint.identification.algorithm": (
            "https" if tls.hostname_verification else "none",
            f"{field}.hostname_verification",
        )
    }
    if tls.pem_ca is not None:
        config["ssl.ca.location"] = (str(tls.pem_ca), f"{field}.ca")
    if tls.mutual:
        config["ssl.certificate.location"] = (str(tls.certificate), f"{field}.certificate")
        config["ssl.key.location"] = (str(tls.key), f"{field}.key")
        if tls.key_password is not None and with_secrets:
            config["ssl.key.password"] = (tls.key_password.resolve(), f"{field}.key_password")
    return config


def librdkafka_file(
    cluster: Cluster, side: str, ccache_dir: str, krb5_conf: str | None, secrets: Secrets = VALUES
) -> str:
    config = librdkafka_config(cluster, side, secrets)
    lines = [rdkafka_line(key, value, field) for key, (value, field) in config.items()]
    return templating.render(
        "templates/librdkafka.conf.j2",
        side=side,
        alias=cluster.alias,
        lines=lines,
        gssapi=isinstance(cluster.sasl, GssapiSasl),
        token_endpoint_ca=cluster.sasl.token_endpoint_ca if isinstance(cluster.sasl, OAuthSasl) else None,
        ccache_dir=ccache_dir,
        krb5_conf=krb5_conf,
        tls=cluster.uses_tls,
        withheld=withheld(cluster, side, secrets),
    )
