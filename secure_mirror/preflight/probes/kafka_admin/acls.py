"""The cluster as an admin sees it: every topic and ACL, the admin's operations on the cluster and the brokers'
authorizer."""

from __future__ import annotations

from typing import NotRequired, TypedDict, final

from secure_mirror.kafka import acl_answers
from secure_mirror.kafka.acl import Acl
from secure_mirror.preflight.probes import Failed
from secure_mirror.preflight.probes.kafka_admin import Admin, reason
from secure_mirror.preflight.probes.kafka_admin.cluster import connect, describe_cluster
from secure_mirror.preflight.probes.kafka_admin.topics import list_topics


@final
class Inventory(TypedDict):
    topics: dict[str, int]  # name -> partitions
    acls: list[Acl]  # every ACL of the cluster, as librdkafka hands DescribeAcls' answer over (its error code dropped)
    operations: list[str] | None  # the identity's on the cluster: tells a refused DescribeAcls from no ACL
    authorizer: str | None  # the brokers' authorizer.class.name ("": none); None: DescribeConfigs not answered
    # where ``operations`` is None: whether the brokers report operations (Kafka 2.3+: then None means none granted)
    reports_operations: NotRequired[bool | None]


def inventory(admin: Admin) -> Inventory | Failed:
    """Every topic and ACL of the cluster as an admin sees them, with its operations on the cluster and the brokers'
    authorizer, or why not. librdkafka drops DescribeAcls' error code: a refusal and a broker without an authorizer
    arrive as no bindings, which the operations and the authorizer tell apart (``kafka.acl_answers``)."""
    try:
        cluster = describe_cluster(admin)
        topics, acls = list_topics(admin), describe_acls(admin)
        node = cluster["nodes"][0][0] if cluster["nodes"] else None
        authorizer = None if node is None else broker_authorizer(admin, node)
        return {"topics": topics, "acls": acls, "operations": cluster["operations"], "authorizer": authorizer}
    except Exception as exc:  # noqa: BLE001 - any failure is the answer
        return {"error": reason(admin, exc)}


def read_inventory(conf: dict, timeout: float) -> dict:
    """:func:`inventory` as the identity ``conf`` configures, for a call in that identity's own process
    (``KafkaIdentity.call``; a plain dict): {"topics": name -> partitions, "acls": [Acl], "operations", "authorizer"}
    or {"error": why}. What its ACLs tell is ``kafka.acl_answers.unread``'s to judge."""
    admin = Admin(conf, timeout)
    answer = connect(admin)
    return dict(answer) if "error" in answer else dict(inventory(admin))


def read_acls(conf: dict, timeout: float) -> dict:
    """:func:`read_inventory`, with {"error": why} where its ACLs are not the cluster's (``kafka.acl_answers.unread``:
    DescribeAcls refused, no authorizer, or an empty list): for the cut-over, which acts on the ACLs it reads."""
    answer = read_inventory(conf, timeout)
    if "error" in answer:
        return answer
    why = acl_answers.unread(answer["acls"], answer["operations"], answer["authorizer"], "this identity")
    return answer if why is None else {"error": why.finding}


def broker_authorizer(admin: Admin, node: int) -> str | None:
    """Broker ``node``'s ``authorizer.class.name`` ("" when none is configured), or None when DescribeConfigs is not
    answered (it needs DESCRIBE_CONFIGS on the cluster, which a broker without an authorizer grants everyone)."""
    from confluent_kafka.admin import ConfigResource, ResourceType

    resource = ConfigResource(ResourceType.BROKER, str(node))
    try:
        asked = admin.client.describe_configs([resource], request_timeout=admin.request)
        entries = next(iter(asked.values())).result()
    except Exception:  # noqa: BLE001 - not answered: the authorizer is not known
        return None
    entry = entries.get("authorizer.class.name")
    return None if entry is None else entry.value or ""


def describe_acls(admin: Admin) -> list[Acl]:
    """Every ACL of the cluster (needs DESCRIBE on the cluster); librdkafka's BROKER resource type is CLUSTER."""
    from confluent_kafka.admin import (
        AclBindingFilter,
        AclOperation,
        AclPermissionType,
        ResourcePatternType,
        ResourceType,
    )

    everything = AclBindingFilter(
        ResourceType.ANY, None, ResourcePatternType.ANY, None, None, AclOperation.ANY, AclPermissionType.ANY
    )
    bindings = admin.client.describe_acls(everything, request_timeout=admin.request).result()
    return [Acl.from_binding(b) for b in bindings]
