"""Shared by pre-flight's decision tests: a profile (Kerberos on both sides, ``orders.*,payments`` selected), its
ACL plans, and the fix a missing grant gets, so that each test states its answers and the exact checks."""

from __future__ import annotations

import pytest

from secure_mirror.kafka.acl import Acl, kafka_acls_command
from secure_mirror.render import acls as acl_plans
from tests.support import profiles as pf

SOURCE_BROKER = "kafka.source.test:9093"
TARGET_BROKER = "kafka.target.test:9093"
DENY_HINT = "; if that ALLOW already exists a DENY overrides it: run pre-flight --as-admin to name it"


def acl(operation: str, resource_type: str, name: str, pattern: str = "LITERAL") -> Acl:
    return Acl(
        principal="User:mirror",
        operation=operation,
        resource_type=resource_type,
        resource_name=name,
        pattern_type=pattern,
    )


def grant_fix(operation: str, grants: list[Acl], bootstrap: str) -> str:
    """The fix of a missing grant: the first kafka-acls command, how many more, and the DENY hint."""
    more = f" (+{len(grants) - 1} more)" if len(grants) > 1 else ""
    return f"grant {operation} to User:mirror: {kafka_acls_command(grants[0], bootstrap)}{more}{DENY_HINT}"


def commands(grants: list[Acl], bootstrap: str) -> list[str]:
    return [kafka_acls_command(grant, bootstrap) for grant in grants]


# The checks tested with these fixtures ask nothing of mirror.topic_shape (test_topic_shape_checks.py does).
NO_SHAPE = {"sync_configs": False, "grow_partitions": False}


@pytest.fixture
def profile(tmp_path):
    return pf.load(tmp_path, topic_shape=NO_SHAPE)


@pytest.fixture
def source_plan(profile):
    return acl_plans.source_acls(profile)


@pytest.fixture
def target_plan(profile):
    return acl_plans.target_acls(profile)
