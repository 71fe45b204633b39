"""Audit mode's ``target.audit.consumer-access`` (issue 29 part 3, docs/consumer-access.md): whether the target holds
the bindings the source's consumers of the selected topics need after failover. Pure: it judges the inventories the
audit's admin workers read already (``audit.collect``: every topic and ACL of each side) through the consumer access
plan (``render.consumer_acls.consumer_plan``, the rules' one home). Missing bindings warn, never fail: failover
readiness does not stop a mirror. Only in audit mode: the mirror's identity cannot read other principals' ACLs.
"""

from __future__ import annotations

from secure_mirror.kafka.acl import Acl
from secure_mirror.preflight.checks.audit import acls_unread
from secure_mirror.preflight.model import FAIL, PASS, SKIPPED, UNVERIFIED, WARN, Check
from secure_mirror.preflight.probes import Failed
from secure_mirror.preflight.probes.kafka_admin.acls import Inventory
from secure_mirror.profile.models import Profile
from secure_mirror.render.consumer_acls import ConsumerPlan, consumer_plan

WHAT = "target.audit.consumer-access"
EXAMPLES = 3
FIX = (
    "secure-mirror acls PROFILE --consumers --as-admin ADMIN --out DIR, review DIR/consumer-acls.sh, then run it "
    "as an admin of the target (docs/consumer-access.md)"
)


def consumer_access(profile: Profile, source: Inventory | Failed | None, target: Inventory | Failed | None) -> Check:
    """The check from each side's inventory as the admin read it: ``{"topics": names, "acls": [Acl]}``,
    ``{"error": why}``, or None when the side was not audited (``--side``)."""
    if source is None or target is None:
        return Check(WHAT, SKIPPED, "skipped: needs both sides audited (pre-flight of both sides with --as-admin)")
    read: dict[str, Inventory] = {}
    for side, data in (("source", source), ("target", target)):
        if "error" in data:
            return unverified(f"the admin could not read the {side}'s topics and ACLs: {data['error']}", side)
        if (unread := acls_unread(data)) is not None:  # refused, no authorizer, or empty: never "nothing to copy"
            fix = None if unread[0] == FAIL else NOT_READABLE_FIX  # FAIL: DescribeAcls refused the admin identity
            return unverified(f"the {side}'s ACLs were not read: {unread[1]}", side, fix)
        read[side] = data
    return judged(consumer_plan(profile, read["source"]["acls"], read["source"]["topics"], read["target"]["acls"]))


def judged(plan: ConsumerPlan) -> Check:
    """PASS when the target holds every binding of ``plan`` (or it has none); else WARN naming how many are missing,
    a few of them, and how to add them."""
    needed, missing = plan.bindings, plan.to_add
    counts = {"needed": len(needed), "missing": len(missing), "not_copied": len(plan.skipped)}
    if not needed:
        finding = "no source binding lets a consumer read the selected topics: nothing to copy to the target"
        return Check(WHAT, PASS, finding, details=counts)
    if not missing:
        finding = f"the {len(needed)} binding(s) the source's consumers need after failover are on the target"
        return Check(WHAT, PASS, finding, details=counts)
    more = f" (+{len(missing) - EXAMPLES} more)" if len(missing) > EXAMPLES else ""
    finding = (
        f"{len(missing)} of the {len(needed)} binding(s) the source's consumers need after failover are missing on "
        f"the target: {'; '.join(map(_example, missing[:EXAMPLES]))}{more}"
    )
    return Check(WHAT, WARN, finding, FIX, acls=missing, details=counts)


NOT_READABLE_FIX = (
    "the consumers' grants cannot be read from these ACLs: grant them on the target by name (where an external "
    "authorizer such as Apache Ranger decides, in its policies)"
)


def unverified(why: str, side: str, fix: str | None = None) -> Check:
    fix = fix or f"give --as-admin an identity with DESCRIBE on the {side} cluster (a super user or an ACL admin)"
    return Check(WHAT, UNVERIFIED, f"the consumers' access after failover was not judged: {why}", fix)


def _example(binding: Acl) -> str:
    pattern = "" if binding.pattern_type == "LITERAL" else f" ({binding.pattern_type})"
    host = "" if binding.host == "*" else f" from {binding.host}"
    where = f"{binding.resource_type} {binding.resource_name}{pattern}"
    return f"{binding.permission} {binding.operation} on {where} for {binding.principal}{host}"
