"""A missing permission as a failing check: the grants the identity's ACL plan holds for it (render's
``AclPlan.need``, the one place that says what an identity needs), in render's ACL file format and as the
``kafka-acls`` commands a security engineer would run."""

from __future__ import annotations

from secure_mirror.kafka.acl import kafka_acls_command
from secure_mirror.preflight.checks.base import check
from secure_mirror.preflight.model import FAIL, Check
from secure_mirror.render.acls import AclPlan, Need

DENY_HINT = "; if that ALLOW already exists a DENY overrides it: run pre-flight --as-admin to name it"


def lacking(plan: AclPlan, what: str, need: Need, finding: str) -> Check:
    """``<side>.<what>`` fails: ``plan``'s identity lacks ``need`` (its names are the resources asked about)."""
    grants = need.acls
    commands = [kafka_acls_command(acl, plan.cluster.first_broker) for acl in grants]
    more = f" (+{len(commands) - 1} more)" if len(commands) > 1 else ""
    fix = f"grant {need.operation} to {plan.principal}: {commands[0]}{more}{DENY_HINT}"
    details = {"resources": list(need.names[:100])}
    return check(plan.side, what, FAIL, finding, fix, acls=grants, commands=commands, details=details)
