"""The consumer groups: the identity's operations on each, and READ proven by joining one where the brokers report
no operations."""

from __future__ import annotations

import time
from typing import TypedDict, final

from secure_mirror.kafka.admin_ops import COORDINATOR_MOVING
from secure_mirror.preflight.probes.kafka_admin import Admin, Refused, error_code, operation_names, probe_consumer


# Operations are Kafka's names (READ, DESCRIBE ...); None where the brokers report none (before Kafka 2.3).
@final
class GroupOperations(TypedDict):
    operations: list[str] | None


GroupAnswer = GroupOperations | Refused


def describe_group(admin: Admin, group: str) -> GroupAnswer:
    """The identity's operations on one consumer group (it need not exist), or the error code."""
    deadline = time.monotonic() + admin.timeout
    while True:
        fut = admin.client.describe_consumer_groups(
            [group], include_authorized_operations=True, request_timeout=admin.request
        )[group]
        try:
            return {"operations": operation_names(fut.result().authorized_operations)}
        except Exception as exc:  # noqa: BLE001
            code = error_code(exc)
            if code not in COORDINATOR_MOVING or time.monotonic() > deadline:
                return {"error": code}
            time.sleep(0.3)


def describe_groups(admin: Admin, groups: list[str]) -> dict[str, GroupAnswer]:
    """``describe_group``'s answer for each of ``groups``, asked together (a group still loading is asked again)."""
    deadline = time.monotonic() + admin.timeout
    answers: dict[str, GroupAnswer] = {}
    waiting = list(dict.fromkeys(groups))
    while waiting:
        futures = admin.client.describe_consumer_groups(
            waiting, include_authorized_operations=True, request_timeout=admin.request
        )
        for group, fut in futures.items():
            try:
                answers[group] = {"operations": operation_names(fut.result().authorized_operations)}
            except Exception as exc:  # noqa: BLE001 - per-group errors are data here
                answers[group] = {"error": error_code(exc)}
        waiting = [g for g in waiting if answers[g].get("error") in COORDINATOR_MOVING and time.monotonic() < deadline]
        if waiting:
            time.sleep(0.3)
    return {group: answers[group] for group in groups}


# ---- asking by doing, where brokers before Kafka 2.3 report no authorized operations ------------------------
def join_probe(admin: Admin, group: str, topic: str) -> str | None:
    """None when ``group`` could be joined and given partitions of ``topic`` (JoinGroup and SyncGroup need READ on
    the group, as Spark's driver does), else ``GROUP_AUTHORIZATION_FAILED`` or ``NO_ANSWER``. The group is left."""
    from confluent_kafka import KafkaError

    consumer = probe_consumer(admin, group, **{"session.timeout.ms": "10000", "auto.offset.reset": "latest"})
    assigned: list[bool] = []
    code = "NO_ANSWER"
    try:
        consumer.subscribe([topic], on_assign=lambda _consumer, partitions: assigned.append(True))
        deadline = time.monotonic() + admin.timeout * 3
        while not assigned and time.monotonic() < deadline:
            message = consumer.poll(0.2)
            if (
                message is not None
                and message.error() is not None
                and message.error().code() == KafkaError.GROUP_AUTHORIZATION_FAILED
            ):
                code = "GROUP_AUTHORIZATION_FAILED"
                break
    finally:
        consumer.close()
    return None if assigned else code
