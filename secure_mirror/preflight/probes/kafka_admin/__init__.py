"""The Kafka admin calls pre-flight makes, with confluent-kafka, answered as plain data.

Thin on purpose: every function takes an open client and returns dicts/lists of names, error codes
(``TOPIC_AUTHORIZATION_FAILED``...) and operation names (``READ``...). What they mean is decided in
``preflight.checks``. Calls are batched (one request for all topics) and bounded by ``timeout`` seconds.

One module per thing asked about, each importing from here what they all share (the client that remembers librdkafka's
errors, and how an answer's error and operations are read): ``cluster`` (the connection, each broker's login, the
identity's operations on the cluster), ``topics``, ``groups``, ``transactions`` (a transactional id) and ``acls``
(the cluster's ACLs, topics and authorizer, as an admin sees them).
"""

from __future__ import annotations

from typing import TypedDict, final

from secure_mirror.kafka import timeouts
from secure_mirror.kafka.oauth import token_served


@final
class Refused(TypedDict):
    """A topic's or a group's answer when it could not be described."""

    error: str  # the error code (TOPIC_AUTHORIZATION_FAILED ...)


class Admin:
    """An AdminClient that remembers the client-level errors librdkafka reports (auth, TLS, transport)."""

    def __init__(self, conf: dict, timeout: float):
        from confluent_kafka.admin import AdminClient

        self.errors: list[str] = []
        self.conf, self.timeout = conf, timeout
        self.request = timeouts.admin_request(timeout)  # each admin call's request_timeout
        quiet = {} if "debug" in conf else {"log_level": 0}  # what it logs reaches error_cb, which the checks judge
        self.client = token_served(
            AdminClient({**conf, **quiet, "error_cb": self.on_error, **timeouts.librdkafka(timeout)}), conf
        )

    def on_error(self, err) -> None:
        self.errors.append(str(err.str() if hasattr(err, "str") else err))


def error_code(exc: BaseException) -> str:
    """The KafkaError's code name (``TOPIC_AUTHORIZATION_FAILED``), else the exception's class name."""
    name = getattr(exc.args[0], "name", None) if exc.args else None
    return name() if callable(name) else type(exc).__name__


def operation_names(operations) -> list[str] | None:
    return None if operations is None else sorted(op.name for op in operations)


def said(admin: Admin) -> list[str]:
    """librdkafka's client-level errors so far (auth, TLS, transport: each names its broker), the waiting ones served."""
    admin.client.poll(0)
    return list(admin.errors)


def reason(admin: Admin, exc: BaseException) -> str:
    """Why a call failed: librdkafka's last client-level error (auth, TLS, transport), else the exception."""
    return admin.errors[-1] if admin.errors else str(exc)


def probe_consumer(admin: Admin, group: str, **settings):
    """A consumer of ``group`` as the admin's identity, committing nothing, its errors kept with the admin's: for the
    probes that ask by doing where brokers before Kafka 2.3 report no authorized operations."""
    from confluent_kafka import Consumer

    return token_served(
        Consumer(
            {
                **admin.conf,
                "group.id": group,
                "enable.auto.commit": False,
                **timeouts.librdkafka(admin.timeout),
                "error_cb": admin.on_error,
                **settings,
            }
        ),
        admin.conf,
    )
