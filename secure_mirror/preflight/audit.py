"""Audit mode (``--as-admin``): the ACLs that apply to the mirroring principal, read with an admin identity,
and its effective permission on every selected topic as the broker's authorizer would decide it, naming the
rule that grants or blocks each operation. The Kafka calls run in the admin's own worker (``collect``);
the evaluation (``audit_checks``) is pure.
"""

from __future__ import annotations

from secure_mirror.kafka.acl import kafka_acls_command
from secure_mirror.preflight import kafka
from secure_mirror.preflight.authorizer import CLUSTER_NAME, authorize, principal_matches
from secure_mirror.preflight.checks import SideChecks, client_conf, suggestion
from secure_mirror.preflight.model import FAIL, PASS, WARN
from secure_mirror.profile.models import Cluster, Profile
from secure_mirror.render import acls as acl_plans


def collect(admin_cluster: Cluster, side: str, timeout: float) -> dict:
    """Every topic (with partitions) and every ACL of the cluster, as the admin sees them."""
    admin = kafka.Admin(client_conf(admin_cluster, side), timeout)
    try:
        topics = kafka.list_topics(admin)
        return {"topics": topics, "acls": kafka.describe_acls(admin)}
    except Exception as exc:  # noqa: BLE001
        reason = admin.errors[-1] if admin.errors else str(exc)
        return {"error": reason}


def audit_checks(
    profile: Profile,
    side: str,
    data: dict,
    source_topics: dict[str, int],
    host: str,
    cluster_operations: tuple[str, ...] = (),
) -> list:
    """The needs of ``side`` evaluated against its ACLs as the admin read them; ``cluster_operations`` adds
    operations on the cluster (IDEMPOTENT_WRITE where brokers before Kafka 2.8 need it)."""
    run = SideChecks(side)
    if "error" in data:
        run.add(
            "audit.connect",
            FAIL,
            f"the admin identity could not read topics and ACLs: {data['error']}",
            "give --as-admin an identity with DESCRIBE on the cluster (a super user or an ACL admin)",
        )
        return run.checks
    cluster: Cluster = getattr(profile, side)
    plan = acl_plans.source_acls(profile) if side == "source" else acl_plans.target_acls(profile)
    principal = plan.principal
    mine = [a for a in data["acls"] if principal_matches(a.principal, principal)]
    run.add(
        "audit.acls",
        PASS,
        f"{len(mine)} ACL(s) apply to {principal} (of {len(data['acls'])} on the cluster); "
        f"evaluated for connections from {host}",
        details={"acls": mine},
    )
    selected = profile.selection().select(list(source_topics))
    if side == "source":
        if not selected:
            run.add(
                "audit.topics",
                FAIL,
                "mirror.topics selects none of the cluster's topics (seen as admin)",
                "fix mirror.topics.include/exclude",
            )
            return run.checks
        needs = [
            ("READ", "TOPIC", selected),
            ("DESCRIBE", "TOPIC", selected),
            ("READ", "GROUP", [f"{profile.group_prefix}-spark-kafka-source"]),
        ]
    else:
        targets = [profile.target_topic(t) for t in selected]
        absent = [t for t in targets if t not in data["topics"]]
        needs = [("WRITE", "TOPIC", targets), ("DESCRIBE", "TOPIC", targets), ("CREATE", "TOPIC", absent)]
        if profile.mirror.delivery.exactly_once:  # the sink's transactions and the positions it commits with them
            ids = [f"{profile.transactional_prefix}{t}-0" for t in selected]
            needs += [
                ("WRITE", "TRANSACTIONAL_ID", ids),
                ("DESCRIBE", "TRANSACTIONAL_ID", ids),
                ("READ", "GROUP", ids),
                ("READ", "TOPIC", targets),
            ]
    needs += [(operation, "CLUSTER", [CLUSTER_NAME]) for operation in cluster_operations]
    for operation, resource_type, names in needs:
        _evaluate(run, plan, cluster, mine, principal, host, operation, resource_type, names)
    return run.checks


def _evaluate(run, plan, cluster, acls, principal, host, operation, resource_type, names) -> None:
    what = f"audit.{resource_type.lower()}-{operation.lower().replace('_', '-')}"
    if not names:
        run.add(what, PASS, f"nothing needs {operation}")
        return
    decisions = {
        n: authorize(acls, principal=principal, host=host, operation=operation, resource_type=resource_type, name=n)
        for n in names
    }
    if operation == "CREATE":  # CREATE on the cluster also allows creating any topic
        cluster_wide = authorize(
            acls, principal=principal, host=host, operation="CREATE", resource_type="CLUSTER", name=CLUSTER_NAME
        )
        decisions = {n: cluster_wide if (not d.allowed and cluster_wide.allowed) else d for n, d in decisions.items()}
    denied = {n: d for n, d in decisions.items() if not d.allowed}
    rules = sorted({d.reason for d in decisions.values()})
    if not denied:
        hosts = sorted({d.rule.host for d in decisions.values() if d.rule and d.rule.host != "*"})
        if hosts:  # allowed, but only from where the grant names: executors elsewhere would be refused
            run.add(
                what,
                WARN,
                f"{operation} on {len(names)} {resource_type.lower()}(s) is granted for connections "
                f"from {', '.join(hosts)} only (valid for this host only): {'; '.join(rules[:3])}",
                f"grant it for every host the job's driver and executors run on (--allow-host '*' or each host); "
                f"this audit evaluated connections from {host}",
                details={"decisions": {n: d.reason for n, d in list(decisions.items())[:100]}, "hosts": hosts},
            )
            return
        run.add(
            what,
            PASS,
            f"{operation} on {len(names)} {resource_type.lower()}(s): {'; '.join(rules[:3])}",
            details={"decisions": {n: d.reason for n, d in list(decisions.items())[:100]}},
        )
        return
    bootstrap = cluster.first_broker
    deny_rules = [d.rule for d in denied.values() if d.rule is not None]
    grants, commands = [], []
    for rule in dict.fromkeys(deny_rules):
        commands.append(kafka_acls_command(rule, bootstrap, remove=True))
    for name, decision in denied.items():
        if decision.rule is None:
            entry = suggestion(plan, operation, resource_type, name)
            if entry not in grants:
                grants.append(entry)
    commands += [kafka_acls_command(a, bootstrap) for a in grants]
    sample = "; ".join(f"{n}: {d.reason}" for n, d in list(denied.items())[:3])
    fix = (
        "remove the DENY rule(s) and/or add the grant(s): "
        + commands[0]
        + (f" (+{len(commands) - 1} more)" if len(commands) > 1 else "")
    )
    run.add(
        what,
        FAIL,
        f"{principal} is denied {operation} on {len(denied)} of {len(names)} {resource_type.lower()}(s): {sample}",
        fix,
        acls=grants,
        commands=commands,
        details={"denied": {n: d.reason for n, d in list(denied.items())[:100]}, "deny_rules": deny_rules},
    )
