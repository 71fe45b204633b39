"""The Kafka admin calls pre-flight makes, with confluent-kafka, answered as plain data.

Thin on purpose: every function takes an open client and returns dicts/lists of names, error codes
(``TOPIC_AUTHORIZATION_FAILED``...) and operation names (``READ``...). What they mean is decided in
``checks``. Calls are batched (one request for all topics) and bounded by ``timeout`` seconds.
"""

from __future__ import annotations

import time

from secure_mirror.kafka.acl import Acl

RETRIABLE = {"COORDINATOR_LOAD_IN_PROGRESS", "COORDINATOR_NOT_AVAILABLE", "NOT_COORDINATOR"}


class Admin:
    """An AdminClient that remembers the client-level errors librdkafka reports (auth, TLS, transport)."""

    def __init__(self, conf: dict, timeout: float):
        from confluent_kafka.admin import AdminClient

        self.errors: list[str] = []
        self.timeout = timeout
        ms = str(int(timeout * 1000))
        self.client = AdminClient({**conf, "error_cb": self._on_error, "socket.timeout.ms": ms,
                                   "socket.connection.setup.timeout.ms": ms})

    def _on_error(self, err) -> None:
        self.errors.append(str(err.str() if hasattr(err, "str") else err))


def _code(exc: BaseException) -> str:
    arg = exc.args[0] if exc.args else None
    return arg.name() if hasattr(arg, "name") else type(exc).__name__


def _ops(operations) -> list[str] | None:
    return None if operations is None else sorted(op.name for op in operations)


def describe_cluster(admin: Admin) -> dict:
    result = admin.client.describe_cluster(include_authorized_operations=True,
                                           request_timeout=admin.timeout).result()
    return {"cluster_id": result.cluster_id, "nodes": [(n.host, n.port) for n in result.nodes],
            "operations": _ops(result.authorized_operations) or []}


def list_topics(admin: Admin) -> dict[str, int]:
    """Topic name -> partition count, for the topics this identity may describe (as a consumer sees them)."""
    metadata = admin.client.list_topics(timeout=admin.timeout)
    return {name: len(t.partitions) for name, t in metadata.topics.items() if t.error is None}


def describe_topics(admin: Admin, names: list[str]) -> dict[str, dict]:
    """name -> {"partitions": n, "operations": [...]} or {"error": CODE}; one batched request."""
    from confluent_kafka import TopicCollection

    if not names:
        return {}
    futures = admin.client.describe_topics(TopicCollection(list(names)), include_authorized_operations=True,
                                           request_timeout=admin.timeout)
    out = {}
    for name, fut in futures.items():
        try:
            desc = fut.result()
            out[name] = {"partitions": len(desc.partitions), "operations": _ops(desc.authorized_operations) or []}
        except Exception as exc:  # noqa: BLE001 - per-topic errors are data here
            out[name] = {"error": _code(exc)}
    return out


def validate_create(admin: Admin, topics: dict[str, int]) -> dict[str, str | None]:
    """name -> None when the broker would create the topic, else the error code (validate_only: nothing is created)."""
    from confluent_kafka.admin import NewTopic

    if not topics:
        return {}
    futures = admin.client.create_topics([NewTopic(t, num_partitions=p) for t, p in topics.items()],
                                         validate_only=True, request_timeout=admin.timeout)
    out = {}
    for name, fut in futures.items():
        try:
            fut.result()
            out[name] = None
        except Exception as exc:  # noqa: BLE001
            out[name] = _code(exc)
    return out


def describe_group(admin: Admin, group: str) -> dict:
    """{"operations": [...]} or {"error": CODE} for one consumer group (it need not exist)."""
    deadline = time.monotonic() + admin.timeout
    while True:
        fut = admin.client.describe_consumer_groups([group], include_authorized_operations=True,
                                                    request_timeout=admin.timeout)[group]
        try:
            return {"operations": _ops(fut.result().authorized_operations) or []}
        except Exception as exc:  # noqa: BLE001
            code = _code(exc)
            if code not in RETRIABLE or time.monotonic() > deadline:
                return {"error": code}
            time.sleep(0.3)


def describe_acls(admin: Admin) -> list[Acl]:
    """Every ACL of the cluster (needs DESCRIBE on the cluster); librdkafka's BROKER resource type is CLUSTER."""
    from confluent_kafka.admin import (
        AclBindingFilter,
        AclOperation,
        AclPermissionType,
        ResourcePatternType,
        ResourceType,
    )

    everything = AclBindingFilter(ResourceType.ANY, None, ResourcePatternType.ANY, None, None, AclOperation.ANY,
                                  AclPermissionType.ANY)
    bindings = admin.client.describe_acls(everything, request_timeout=admin.timeout).result()
    return [Acl.of({"principal": b.principal, "host": b.host, "operation": b.operation.name,
                    "permission": b.permission_type.name, "resource_type": b.restype.name, "resource_name": b.name,
                    "pattern_type": b.resource_pattern_type.name}) for b in bindings]
