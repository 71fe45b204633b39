"""A missing permission as a failing check: the grants the identity's ACL plan holds for it (render's
``AclPlan.need``, the one place that says what an identity needs), in render's ACL file format and as the
``kafka-acls`` commands a security engineer would run; where the side's ``acls.format`` names ranger, first as the
Ranger policy render writes for it (``ranger/<side>.policies.json``), which is what such brokers ask."""

from __future__ import annotations

from secure_mirror.kafka.acl import kafka_acls_command
from secure_mirror.preflight.checks.base import check
from secure_mirror.preflight.model import FAIL, Check
from secure_mirror.render import ranger
from secure_mirror.render.acls import AclPlan, Need
from secure_mirror.render.encoders import UnrepresentableValue

DENY_HINT = "; if that ALLOW already exists a DENY overrides it: run pre-flight --as-admin to name it"


def lacking(plan: AclPlan, what: str, need: Need, finding: str) -> Check:
    """``<side>.<what>`` fails: ``plan``'s identity lacks ``need`` (its names are the resources asked about)."""
    grants = need.acls
    commands = [kafka_acls_command(acl, plan.cluster.first_broker) for acl in grants]
    more = f" (+{len(commands) - 1} more)" if len(commands) > 1 else ""
    fix = f"grant {need.operation} to {plan.principal}: {commands[0]}{more}{DENY_HINT}"
    details: dict = {"resources": list(need.names[:100])}
    if plan.cluster.acls.ranger and plan.owner and (policies := ranger_policies(plan, grants)):
        policy = policies[0]
        [(resource, spec)] = policy["resources"].items()
        access = ranger.ACCESS_TYPES[need.operation]
        user = policy["policyItems"][0]["users"][0]
        others = f" (+{len(policies) - 1} more policies)" if len(policies) > 1 else ""
        fix = (
            f"add the Ranger policy {policy['name']!r} to the service {policy['service']}: {resource} "
            f"{spec['values'][0]}, allow {access} to {user}{others}, as render writes it in ranger/{plan.side}."
            f"policies.json (or add {access} for {user} to the policy that already holds that resource)"
            + (f"; with Kafka's ACLs: {commands[0]}{more}" if plan.cluster.acls.kafka else "")
        )
        details["ranger_policies"] = policies
    return check(plan.side, what, FAIL, finding, fix, acls=grants, commands=commands, details=details)


def ranger_policies(plan: AclPlan, grants) -> list[dict]:
    """The Ranger policies granting ``grants`` as render names them; none when Ranger cannot hold them."""
    try:
        return ranger.policies_of(
            grants,
            service=plan.cluster.acls.ranger_service,
            owner=plan.owner,
            side=plan.side,
            alias=plan.cluster.alias,
            field=f"{plan.side}.acls.format",
        )
    except UnrepresentableValue:
        return []
