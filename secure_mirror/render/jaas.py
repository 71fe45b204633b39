"""JAAS: one quoting function for every value, one login-module template per mechanism (under ``jaas/``).

Two parsers read what we write, both built on ``java.io.StreamTokenizer`` with ``"`` as the quote character:
Kafka's ``JaasConfig`` (a ``sasl.jaas.config`` value) and the JDK's ``ConfigFile`` (a ``jaas.conf`` file). Inside
a quoted string the tokenizer turns ``\\x`` into ``x`` (except for ``\\a \\b \\f \\n \\r \\t \\v`` and octal
digits), so writing ``\\`` as ``\\\\`` and ``"`` as ``\\"`` round-trips every other character exactly. What cannot
be written: a line break (ends the string) and ``${`` (the JDK's file parser expands it as a system property).
A password or client secret may instead be a config provider reference (``render --secrets references``,
``render/providers.py``), which only ``sasl.jaas.config`` resolves.
"""

from __future__ import annotations

from secure_mirror.profile.cluster import Cluster
from secure_mirror.profile.security import GssapiSasl, OAuthSasl, PasswordSasl
from secure_mirror.render import templating
from secure_mirror.render.encoders import UnrepresentableValue  # noqa: F401 - re-exported
from secure_mirror.render.encoders import jaas as jaas_quote  # noqa: F401 - re-exported
from secure_mirror.render.providers import VALUES, Reference, Secrets, jaas_option

LOGIN_MODULES = {
    "GSSAPI": "jaas/gssapi.j2",
    "SCRAM-SHA-256": "jaas/scram.j2",
    "SCRAM-SHA-512": "jaas/scram.j2",
    "PLAIN": "jaas/plain.j2",
    "OAUTHBEARER": "jaas/oauthbearer.j2",
}


def jaas_entry(cluster: Cluster, side: str, keytab: str | None = None, secrets: Secrets = VALUES) -> str:
    """The login-module entry (``Module required k="v" ...;``) over several lines, for a file or inline use.

    ``keytab`` overrides the keytab path as the client sees it (e.g. the name Spark ships it under); ``secrets``:
    the password or client secret as its value or as a reference (only ``sasl.jaas.config`` resolves one).
    """
    sasl = cluster.sasl
    if sasl is None:
        raise ValueError(f"{side} has no SASL section; no JAAS entry to render")
    context = {"field": f"{side}.sasl", **_login_options(sasl, side, keytab, secrets)}
    return templating.render(LOGIN_MODULES[sasl.mechanism], **context).strip()


def _login_options(
    sasl: GssapiSasl | PasswordSasl | OAuthSasl, side: str, keytab: str | None, secrets: Secrets
) -> dict[str, str | Reference | None]:
    if isinstance(sasl, GssapiSasl):
        return {"principal": sasl.principal, "keytab": keytab or str(sasl.keytab), "service_name": sasl.service_name}
    if isinstance(sasl, PasswordSasl):
        return {"username": sasl.username, "password": jaas_option(sasl.password, f"{side}.sasl.password", secrets)}
    ca = str(sasl.token_endpoint_ca) if sasl.token_endpoint_ca is not None else None
    return {
        "client_id": sasl.client_id,
        "client_secret": jaas_option(sasl.client_secret, f"{side}.sasl.client_secret", secrets),
        "scope": sasl.scope,
        "token_endpoint_ca": ca,
    }


def inline_jaas(cluster: Cluster, side: str, keytab: str | None = None, secrets: Secrets = VALUES) -> str:
    """The entry on one line, as Kafka's ``sasl.jaas.config`` takes it (values never hold line breaks)."""
    # split on "\n" only: str.splitlines() would also split at \x0b, \x1c, \x85, \u2028 ... inside a value
    return " ".join(line.strip(" ") for line in jaas_entry(cluster, side, keytab, secrets).split("\n"))


def jaas_file(cluster: Cluster, side: str, path: str) -> str:
    """A ``jaas.conf`` with one ``KafkaClient`` section (for ``-Djava.security.auth.login.config``)."""
    entry = "\n    ".join(jaas_entry(cluster, side).split("\n"))  # not Jinja's indent: it uses splitlines()
    return templating.render("templates/jaas.conf.j2", side=side, alias=cluster.alias, path=path, entry=entry)
