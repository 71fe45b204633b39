"""What a cluster holds, read by confluent-kafka's own calls (run through ``sandbox.admin``): an independent reader
for tests that compare it with what render planned."""

from __future__ import annotations

from secure_mirror.kafka import admin_ops
from secure_mirror.kafka.acl import Acl


def acls_of(conf: dict, principal: str, timeout: float = 30.0) -> list[dict]:
    """Every binding the cluster holds for ``principal``, read with confluent-kafka's own DescribeAcls (run through
    ``sandbox.admin``): each as an ``acls/*.acls.json`` entry, librdkafka's names as they come (BROKER for CLUSTER)."""
    from confluent_kafka.admin import (
        AclBindingFilter,
        AclOperation,
        AclPermissionType,
        AdminClient,
        ResourcePatternType,
        ResourceType,
    )

    admin = AdminClient({**conf, "logger": admin_ops.LOG})
    everything = AclBindingFilter(
        ResourceType.ANY, None, ResourcePatternType.ANY, principal, None, AclOperation.ANY, AclPermissionType.ANY
    )
    return [Acl.entry_of_binding(b) for b in admin.describe_acls(everything, request_timeout=timeout).result()]
