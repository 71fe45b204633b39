"""One reading of a binding DescribeAcls returns (kafka/acl.py): the audit's ``Acl`` and the tests' independent reader's
``acls.json`` entry come from the same words, librdkafka's BROKER being Kafka's CLUSTER."""

from __future__ import annotations

from confluent_kafka.admin import AclBinding, AclOperation, AclPermissionType, ResourcePatternType, ResourceType

from secure_mirror.kafka.acl import Acl


def test_a_binding_reads_as_an_entry_and_as_an_acl():
    binding = AclBinding(
        ResourceType.TOPIC,
        "src.",
        ResourcePatternType.PREFIXED,
        "User:mirror",
        "*",
        AclOperation.DESCRIBE_CONFIGS,
        AclPermissionType.ALLOW,
    )
    assert Acl.entry_of_binding(binding) == {
        "principal": "User:mirror",
        "host": "*",
        "operation": "DESCRIBE_CONFIGS",
        "permission": "ALLOW",
        "resource_type": "TOPIC",
        "resource_name": "src.",
        "pattern_type": "PREFIXED",
    }
    assert Acl.from_binding(binding) == Acl(
        principal="User:mirror",
        operation="DESCRIBE_CONFIGS",
        resource_type="TOPIC",
        resource_name="src.",
        pattern_type="PREFIXED",
    )


def test_the_broker_resource_is_the_cluster():
    binding = AclBinding(
        ResourceType.BROKER,
        "kafka-cluster",
        ResourcePatternType.LITERAL,
        "User:mirror",
        "*",
        AclOperation.IDEMPOTENT_WRITE,
        AclPermissionType.ALLOW,
    )
    assert Acl.entry_of_binding(binding)["resource_type"] == "BROKER"
    assert Acl.from_binding(binding).resource_type == "CLUSTER"
