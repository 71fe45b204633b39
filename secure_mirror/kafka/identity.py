"""One Kafka identity as librdkafka and MIT krb5 use it: its client configuration and its own Kerberos
environment (which krb5.conf, a private credential cache that no other identity shares).

``render.librdkafka.identity`` builds one from a profile side, exactly as the rendered ``librdkafka.conf`` says;
pre-flight, lag, verify, the job's inspection clients and the sandbox (its admin and mirror identities are profile
sides too) all reach Kafka through it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any, TypeVar

from secure_mirror.kafka.processes import call_kept

T = TypeVar("T")
# librdkafka settings as confluent-kafka takes them: strings mostly, also numbers, booleans, a logger and callbacks
# (``oauth_cb``, kafka/oauth.py). confluent-kafka ships no types to check the values against.
ClientConf = dict[str, Any]


@dataclass(frozen=True)
class KafkaIdentity:
    conf: ClientConf = field(repr=False)  # librdkafka settings; may hold a resolved password: never printed
    krb5_config: str | None = None  # KRB5_CONFIG, when the profile has its own krb5.conf
    ccache: str | None = None  # the identity's own credential cache (librdkafka's kinit fills it)

    def env(self) -> dict[str, str]:
        """The environment a process acting as this identity needs (cyrus-sasl reads it process-wide)."""
        return kerberos_env(self.krb5_config, self.ccache)

    def with_settings(self, settings: dict[str, str]) -> KafkaIdentity:
        return replace(self, conf={**self.conf, **settings})

    def call(self, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        """``fn(conf, *args, **kwargs)`` in a kept process of this identity (``kafka/processes.call_kept``)."""
        return call_kept(self.env(), fn, self.conf, *args, **kwargs)


def kerberos_env(krb5_config: str | None, ccache: str | None) -> dict[str, str]:
    """Which krb5.conf (None: the system's), and a private credential cache (None: the default one)."""
    env = {"KRB5CCNAME": f"FILE:{ccache}"} if ccache else {}
    return {**env, "KRB5_CONFIG": str(krb5_config)} if krb5_config else env
