"""Java ``.properties`` files: the escaping ``java.util.Properties.load(InputStream)`` undoes, and the settings
a Kafka Java client needs to reach one cluster (shared by client.properties, the Spark options and mm2)."""

from __future__ import annotations

import base64
from collections.abc import Mapping
from pathlib import Path

from secure_mirror.profile.cluster import Cluster
from secure_mirror.profile.models import Profile
from secure_mirror.profile.security import GssapiSasl, OAuthSasl
from secure_mirror.render import templating
from secure_mirror.render.encoders import option_text
from secure_mirror.render.jaas import inline_jaas
from secure_mirror.render.providers import VALUES, Secrets, declarations, properties_secret, reference

# The system property naming the token endpoints Kafka's OAuth login may reach (Kafka 3.9+ refuses any other)
OAUTH_ALLOWED_URLS = "org.apache.kafka.sasl.oauthbearer.allowed.urls"
OAUTH_CALLBACK_HANDLER = "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginCallbackHandler"


def jvm_options(profile: Profile, krb5_conf: str | None) -> list[str]:
    """The system properties a JVM of Kafka's Java client needs for ``profile``'s clusters: the krb5.conf, and the
    token endpoints an OAuth login may reach (Kafka 3.9+ refuses any other)."""
    options = [f"-Djava.security.krb5.conf={krb5_conf}"] if krb5_conf else []
    urls = sorted({c.sasl.token_endpoint_url for c in profile.clusters().values() if isinstance(c.sasl, OAuthSasl)})
    return options + ([f"-D{OAUTH_ALLOWED_URLS}={','.join(urls)}"] if urls else [])


def properties_text(settings: Mapping[str, object], header: list[str]) -> str:
    return templating.render("templates/java.properties.j2", settings=settings, header=header)


def piped_settings(cluster: Cluster, side: str) -> str:
    """``cluster``'s client settings, secret values included, as our Java tools read them from their stdin (never a
    file or an argument): a properties text in Base64, one line with no tab."""
    text = properties_text(client_properties(cluster, side), [])
    return base64.b64encode(text.encode("utf-8")).decode("ascii")


def java_connection(
    cluster: Cluster, side: str, keytab: str | None = None, secrets: Secrets = VALUES
) -> dict[str, str]:
    """bootstrap + security settings of a Java Kafka client for ``cluster`` (``keytab``: path the client sees;
    ``secrets``: each secret as its value or as a config provider reference, render/providers.py)."""
    settings = {
        "bootstrap.servers": ",".join(cluster.bootstrap_servers),
        "security.protocol": cluster.security_protocol,
    }
    settings.update(_sasl(cluster, side, keytab, secrets))
    settings.update(_tls(cluster, side, secrets))
    return settings


def _sasl(cluster: Cluster, side: str, keytab: str | None, secrets: Secrets) -> dict[str, str]:
    sasl = cluster.sasl
    if sasl is None:
        return {}
    settings: dict[str, str] = {"sasl.mechanism": sasl.mechanism}
    if isinstance(sasl, GssapiSasl):
        settings["sasl.kerberos.service.name"] = sasl.service_name
    if isinstance(sasl, OAuthSasl):
        settings["sasl.login.callback.handler.class"] = OAUTH_CALLBACK_HANDLER
        settings["sasl.oauthbearer.token.endpoint.url"] = sasl.token_endpoint_url
    settings["sasl.jaas.config"] = inline_jaas(cluster, side, keytab, secrets)
    return settings


def _tls(cluster: Cluster, side: str, secrets: Secrets) -> dict[str, str]:
    if not cluster.uses_tls:
        return {}
    tls = cluster.tls_settings
    settings = {"ssl.endpoint.identification.algorithm": "https" if tls.hostname_verification else ""}
    if (truststore_type := tls.truststore_type) is not None:  # a CA is given
        settings["ssl.truststore.type"] = truststore_type
        settings["ssl.truststore.location"] = str(tls.ca)
        if tls.truststore_password is not None:
            field = f"{side}.tls.truststore_password"
            settings["ssl.truststore.password"] = properties_secret(tls.truststore_password, field, secrets)
    if tls.mutual:  # PEM keystore given inline: Kafka then accepts an unencrypted PKCS#8 key too
        settings["ssl.keystore.type"] = "PEM"
        settings["ssl.keystore.certificate.chain"] = _pem(tls.certificate)
        settings["ssl.keystore.key"] = _key(tls.key, side, secrets)
        if tls.key_password is not None:
            settings["ssl.key.password"] = properties_secret(tls.key_password, f"{side}.tls.key_password", secrets)
    return settings


def _pem(path: Path | None) -> str:
    assert path is not None
    return path.read_text(encoding="ascii").strip()


def _key(path: Path | None, side: str, secrets: Secrets) -> str:
    """The private key inline, or a reference to its file (Kafka's PEM reader takes its whole content)."""
    assert path is not None
    return str(reference(path, f"{side}.tls.key")) if secrets.references else _pem(path)


def client_properties(cluster: Cluster, side: str, secrets: Secrets = VALUES) -> dict[str, str]:
    """Everything Kafka's own tools need (``--command-config``, ``--consumer.config``, ``--producer.config``), and
    the config providers its references need."""
    return {
        **java_connection(cluster, side, secrets=secrets),
        **{k: option_text(v) for k, v in cluster.client_options.items()},
        **(declarations([(side, cluster)]) if secrets.references else {}),
    }
