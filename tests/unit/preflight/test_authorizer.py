"""Kafka's StandardAuthorizer rules, reproduced by secure_mirror.preflight.authorizer (pure, no broker)."""

from __future__ import annotations

import pytest

from secure_mirror.kafka.acl import Acl
from secure_mirror.preflight.authorizer import authorize


def acl(
    operation="READ",
    name="orders",
    pattern="LITERAL",
    permission="ALLOW",
    principal="User:mirror",
    host="*",
    resource_type="TOPIC",
) -> Acl:
    return Acl(
        principal=principal,
        host=host,
        operation=operation,
        permission=permission,
        resource_type=resource_type,
        resource_name=name,
        pattern_type=pattern,
    )


def allowed(acls, operation="READ", name="orders", resource_type="TOPIC", host="10.0.0.5", **kw) -> bool:
    return authorize(
        acls, principal="User:mirror", operation=operation, resource_type=resource_type, name=name, host=host, **kw
    ).allowed


def test_no_acl_denies_unless_allow_everyone_if_no_acl_found():
    assert not allowed([])
    assert allowed([], allow_if_no_acl=True)
    # any ACL naming the resource (even for someone else) turns the default off
    assert not allowed([acl(principal="User:other")], allow_if_no_acl=True)


@pytest.mark.parametrize(
    "pattern, name, topic, expected",
    [
        ("LITERAL", "orders", "orders", True),
        ("LITERAL", "orders", "orders2", False),
        ("LITERAL", "*", "anything", True),
        ("PREFIXED", "ord", "orders", True),
        ("PREFIXED", "orders.", "orders", False),
        ("PREFIXED", "*", "orders", False),  # '*' is only a wildcard for LITERAL
    ],
)
def test_resource_patterns(pattern, name, topic, expected):
    assert allowed([acl(name=name, pattern=pattern)], name=topic) is expected


def test_deny_wins_over_any_allow_and_names_the_rule():
    deny = acl(permission="DENY", name="orders.eu", pattern="LITERAL")
    decision = authorize(
        [acl(name="orders", pattern="PREFIXED"), deny],
        principal="User:mirror",
        operation="READ",
        resource_type="TOPIC",
        name="orders.eu",
    )
    assert not decision.allowed and decision.rule == deny
    assert decision.reason == "denied by DENY READ on TOPIC LITERAL 'orders.eu' for User:mirror"
    assert allowed([acl(name="orders", pattern="PREFIXED"), deny], name="orders.us")


def test_wildcard_principal_and_other_principals():
    assert allowed([acl(principal="User:*")])
    assert not allowed([acl(principal="User:mirror2")])
    assert not allowed([acl(principal="Group:*")])
    assert not allowed([acl(), acl(permission="DENY", principal="User:*")])


@pytest.mark.parametrize("granted", ["READ", "WRITE", "DELETE", "ALTER", "DESCRIBE", "ALL"])
def test_operations_that_imply_describe(granted):
    assert allowed([acl(operation=granted)], operation="DESCRIBE")


@pytest.mark.parametrize("granted", ["CREATE", "DESCRIBE_CONFIGS", "ALTER_CONFIGS"])
def test_operations_that_do_not_imply_describe(granted):
    assert not allowed([acl(operation=granted)], operation="DESCRIBE")


def test_alter_configs_implies_describe_configs_and_nothing_implies_read():
    assert allowed([acl(operation="ALTER_CONFIGS")], operation="DESCRIBE_CONFIGS")
    assert not allowed([acl(operation="DESCRIBE")], operation="READ")
    assert not allowed([acl(operation="WRITE")], operation="READ")


def test_deny_implies_nothing_but_deny_all_blocks_everything():
    # DENY READ does not deny DESCRIBE, which the ALLOW READ still implies
    assert allowed([acl(), acl(permission="DENY")], operation="DESCRIBE")
    assert not allowed([acl(), acl(operation="ALL", permission="DENY")], operation="DESCRIBE")
    assert not allowed([acl(operation="ALL"), acl(operation="DESCRIBE", permission="DENY")], operation="DESCRIBE")


def test_host_matching():
    assert allowed([acl(host="10.0.0.5")])
    assert not allowed([acl(host="10.0.0.6")])
    assert not allowed([acl(), acl(permission="DENY", host="10.0.0.5")])
    assert allowed([acl(), acl(permission="DENY", host="10.0.0.6")])


def test_resource_types_do_not_mix_and_super_users_bypass():
    assert not allowed([acl(resource_type="GROUP")])
    assert allowed(
        [acl(resource_type="GROUP", name="spark", pattern="PREFIXED")], resource_type="GROUP", name="spark-1"
    )
    assert allowed([acl(permission="DENY")], super_users=["User:mirror"])
