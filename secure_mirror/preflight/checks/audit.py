"""Audit mode (``--as-admin``): the ACLs that apply to the mirroring principal, read with an admin identity,
and its effective permission on every selected topic as the broker's authorizer would decide it, naming the
rule that grants or blocks each operation. The Kafka calls run in the admin's own worker (``collect``, through
``probes.kafka_admin``); the evaluation (``audit_checks``) is pure, and asks what the identity needs of its ACL plan
alone (``render.acls.AclPlan.need``).
"""

from __future__ import annotations

from secure_mirror.kafka import acl_answers
from secure_mirror.kafka.acl import CLUSTER_NAME, Acl, kafka_acls_command
from secure_mirror.preflight.authorizer import Decision, authorize, authorize_all, principal_matches
from secure_mirror.preflight.checks import topic_shape as shape_checks
from secure_mirror.preflight.checks.base import SideChecks, check, client_conf
from secure_mirror.preflight.model import FAIL, PASS, UNVERIFIED, WARN, Check, Status
from secure_mirror.preflight.probes import Failed, api_versions, kafka_admin
from secure_mirror.preflight.probes.kafka_admin import acls as acl_probes
from secure_mirror.preflight.probes.wire import local_address
from secure_mirror.profile.cluster import Cluster, Side
from secure_mirror.profile.models import Profile
from secure_mirror.render import acls as acl_plans
from secure_mirror.render.acls import AclPlan, Need


# ---- the steps ------------------------------------------------------------------------------------------------------
def collect(admin_cluster: Cluster, side: Side, timeout: float) -> acl_probes.Inventory | Failed:
    """Every topic (with partitions) and every ACL of the cluster, as the admin sees them; where no operation on the
    cluster is reported, whether the brokers report operations (``api_versions.operations_reported``)."""
    data = acl_probes.inventory(kafka_admin.Admin(client_conf(admin_cluster, side), timeout))
    if "error" not in data and data["operations"] is None:
        data["reports_operations"] = api_versions.operations_reported(admin_cluster, timeout)
    return data


def audit_side(
    profile: Profile,
    side: Side,
    data: acl_probes.Inventory | Failed,
    source_topics: dict[str, int],
    checks: list[Check],
) -> list[Check]:
    """The audit of ``side``, evaluated for connections from this machine's address towards its first broker."""
    host = local_address(*profile.cluster(side).brokers[0])
    return audit_checks(profile, side, data, source_topics, host, cluster_operations(checks).get(side, ()))


def cluster_operations(checks: list[Check]) -> dict[str, tuple[str, ...]]:
    """Operations on the cluster the audit evaluates per side: IDEMPOTENT_WRITE on the target where pre-flight found
    the brokers older than Kafka 2.8 (or of a line not known) and it not granted or not reported."""
    idempotent = next((c for c in checks if c.id == "target.acl.idempotent-write"), None)
    return {"target": ("IDEMPOTENT_WRITE",)} if idempotent and idempotent.status in (FAIL, UNVERIFIED) else {}


# ---- the judgement --------------------------------------------------------------------------------------------------
def audit_checks(
    profile: Profile,
    side: Side,
    data: acl_probes.Inventory | Failed,
    source_topics: dict[str, int],
    host: str,
    cluster_operations: tuple[str, ...] = (),
) -> list[Check]:
    """The needs of ``side`` evaluated against its ACLs as the admin read them; ``cluster_operations`` adds
    operations on the cluster (IDEMPOTENT_WRITE where brokers before Kafka 2.8 need it)."""
    if "error" in data:
        return [
            check(
                side,
                "audit.connect",
                FAIL,
                f"the admin identity could not read topics and ACLs: {data['error']}",
                ADMIN_FIX,
            )
        ]
    if (unread := acls_unread(data)) is not None:
        return [check(side, "audit.acls", unread[0], unread[1] + NOT_JUDGED, unread[2])]
    plan = acl_plans.source_acls(profile) if side == "source" else acl_plans.target_acls(profile)
    mine = [a for a in data["acls"] if principal_matches(a.principal, plan.principal)]
    run = SideChecks(side)
    run.add(
        "audit.acls",
        PASS,
        f"{len(mine)} ACL(s) apply to {plan.principal} (of {len(data['acls'])} on the cluster); "
        f"evaluated for connections from {host}",
        details={"acls": mine},
    )
    selected = profile.selection().select(list(source_topics))
    if side == "source" and not selected:
        run.add(
            "audit.topics",
            FAIL,
            "mirror.topics selects none of the cluster's topics (seen as admin)",
            "fix mirror.topics.include/exclude",
        )
        return run.checks
    needs = audit_needs(profile, plan, selected, data["topics"], cluster_operations)
    run.extend(*(evaluate(plan, need, mine, host) for need in needs))
    return run.checks


ADMIN_FIX = "give --as-admin an identity with DESCRIBE on the cluster (a super user or an ACL admin)"
NOT_JUDGED = "; the mirror's access was not judged from them"
UNREAD_FIXES = {
    acl_answers.REFUSED: ADMIN_FIX,
    acl_answers.NO_AUTHORIZER: "pre-flight without --as-admin proves the access by the brokers' answers; configure an "
    "authorizer (authorizer.class.name) for the ACLs to matter",
    acl_answers.EMPTY: "pre-flight without --as-admin proves the access by the brokers' answers; where an external "
    "authorizer (Apache Ranger) decides, review its policies for the mirror's principal",
}


def acls_unread(data: acl_probes.Inventory) -> tuple[Status, str, str] | None:
    """Why an admin's inventory does not show the cluster's ACLs, as (status, finding, fix), or None when it does
    (``kafka.acl_answers.unread``): DescribeAcls refused fails (the admin identity cannot do what --as-admin asks);
    no authorizer, or an empty list (an external authorizer's grants are not visible), is unverified."""
    why = acl_answers.unread(
        data["acls"], data.get("operations"), data.get("authorizer"), reports_operations=data.get("reports_operations")
    )
    if why is None:
        return None
    status: Status = FAIL if why.kind == acl_answers.REFUSED else UNVERIFIED
    return status, why.finding, UNREAD_FIXES[why.kind]


def audit_needs(
    profile: Profile, plan: AclPlan, selected: list[str], topics: dict[str, int], cluster_operations: tuple[str, ...]
) -> list[Need]:
    """What the audit evaluates on ``plan``'s side, each asked of the plan: the selected source topics (source), or
    their target topics (``topics``: those the target has), exactly_once's transactional ids and position groups,
    ``mirror.groups``' groups and topics, and ``cluster_operations``; one need per operation and resource type."""
    if plan.side == "source":
        needs = [("READ", "TOPIC", selected), ("DESCRIBE", "TOPIC", selected)]
        needs += [("READ", "GROUP", [acl_plans.spark_group(profile)])]
    else:
        targets = [profile.target_topic(t) for t in selected]
        absent = [t for t in targets if t not in topics]
        needs = [("WRITE", "TOPIC", targets), ("DESCRIBE", "TOPIC", targets), ("CREATE", "TOPIC", absent)]
        if profile.mirror.delivery.exactly_once:  # the sink's transactions and the positions it commits with them
            ids = acl_plans.transactional_ids(profile, selected)
            needs += [
                ("WRITE", "TRANSACTIONAL_ID", ids),
                ("DESCRIBE", "TRANSACTIONAL_ID", ids),
                ("READ", "GROUP", ids),
                ("READ", "TOPIC", targets),
            ]
    needs += group_sync_needs(profile, plan.side, selected, topics)
    needs += shape_checks.audit_needs(profile, plan.side, selected)
    needs += [(operation, "CLUSTER", [CLUSTER_NAME]) for operation in cluster_operations]
    merged: dict[tuple[str, str], list[str]] = {}
    for operation, resource_type, names in needs:
        merged.setdefault((operation, resource_type), []).extend(names)
    return [plan.need(operation, kind, list(dict.fromkeys(names))) for (operation, kind), names in merged.items()]


def group_sync_needs(
    profile: Profile, side: str, selected: list[str], topics: dict[str, int]
) -> list[tuple[str, str, list[str]]]:
    """``mirror.groups``: DESCRIBE on the synced groups (source); READ and DESCRIBE on them, READ on the target
    topics, and DESCRIBE, WRITE, READ (CREATE while missing) on the offset map and checkpoints topics (target)."""
    if not profile.mirror.groups.enabled:
        return []
    samples = acl_plans.group_samples(profile)
    if side == "source":
        return [(operation, "GROUP", samples) for operation in acl_plans.SYNC_SOURCE_GROUP_OPERATIONS]
    own = list(acl_plans.sync_topics(profile))
    targets = [profile.target_topic(t) for t in selected]
    needs = [(operation, "GROUP", samples) for operation in acl_plans.SYNC_TARGET_GROUP_OPERATIONS]
    needs += [(operation, "TOPIC", targets) for operation in acl_plans.SYNC_TARGET_TOPIC_OPERATIONS]
    for operation in acl_plans.SYNC_OWN_TOPIC_OPERATIONS:  # CREATE while missing
        needs.append((operation, "TOPIC", [t for t in own if operation != "CREATE" or t not in topics]))
    return needs


def evaluate(plan: AclPlan, need: Need, acls: list[Acl], host: str) -> Check:
    """``audit.<resource>-<operation>``: ``need`` as the authorizer decides it over ``acls`` for ``host``."""
    operation, kind = need.operation, need.resource_type.lower()
    what = f"audit.{kind}-{operation.lower().replace('_', '-')}"
    if not need.names:
        return check(plan.side, what, PASS, f"nothing needs {operation}")
    decisions = decide(plan.principal, need, acls, host)
    denied = {n: d for n, d in decisions.items() if not d.allowed}
    rules = sorted({d.reason for d in decisions.values()})
    reasons = {n: d.reason for n, d in list(decisions.items())[:100]}
    if denied:
        return denial(plan, what, need, denied)
    hosts = sorted({d.rule.host for d in decisions.values() if d.rule and d.rule.host != "*"})
    if hosts:  # allowed, but only from where the grant names: executors elsewhere would be refused
        return check(
            plan.side,
            what,
            WARN,
            f"{operation} on {len(need.names)} {kind}(s) is granted for connections "
            f"from {', '.join(hosts)} only (valid for this host only): {'; '.join(rules[:3])}",
            f"grant it for every host the job's driver and executors run on (--allow-host '*' or each host); "
            f"this audit evaluated connections from {host}",
            details={"decisions": reasons, "hosts": hosts},
        )
    finding = f"{operation} on {len(need.names)} {kind}(s): {'; '.join(rules[:3])}"
    return check(plan.side, what, PASS, finding, details={"decisions": reasons})


def decide(principal: str, need: Need, acls: list[Acl], host: str) -> dict[str, Decision]:
    """The authorizer's decision per name of ``need`` (CREATE on the cluster also allows creating any topic)."""
    decisions = authorize_all(
        acls,
        principal=principal,
        host=host,
        operation=need.operation,
        resource_type=need.resource_type,
        names=need.names,
    )
    if need.operation == "CREATE":
        cluster_wide = authorize(
            acls, principal=principal, host=host, operation="CREATE", resource_type="CLUSTER", name=CLUSTER_NAME
        )
        decisions = {n: cluster_wide if (not d.allowed and cluster_wide.allowed) else d for n, d in decisions.items()}
    return decisions


def denial(plan: AclPlan, what: str, need: Need, denied: dict[str, Decision]) -> Check:
    """The failing audit check: remove the DENY rules that decided, add the plan's grants where no rule applied."""
    bootstrap = plan.cluster.first_broker
    deny_rules = [d.rule for d in denied.values() if d.rule is not None]
    commands = [kafka_acls_command(rule, bootstrap, remove=True) for rule in dict.fromkeys(deny_rules)]
    grant_of = dict(zip(need.names, need.grants, strict=True))  # ``Need.grant_for``, without a search per name
    grants = list(dict.fromkeys(grant_of[name] for name, d in denied.items() if d.rule is None))
    commands += [kafka_acls_command(a, bootstrap) for a in grants]
    sample = "; ".join(f"{n}: {d.reason}" for n, d in list(denied.items())[:3])
    fix = (
        "remove the DENY rule(s) and/or add the grant(s): "
        + commands[0]
        + (f" (+{len(commands) - 1} more)" if len(commands) > 1 else "")
    )
    return check(
        plan.side,
        what,
        FAIL,
        f"{plan.principal} is denied {need.operation} on {len(denied)} of {len(need.names)} "
        f"{need.resource_type.lower()}(s): {sample}",
        fix,
        acls=grants,
        commands=commands,
        details={"denied": {n: d.reason for n, d in list(denied.items())[:100]}, "deny_rules": deny_rules},
    )
