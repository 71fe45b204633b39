"""The mirror's grants as Apache Ranger policies (issue 42, docs/ranger.md), for brokers that authorize with Ranger's
Kafka plugin instead of Kafka's ACLs.

Nothing is derived here: a policy is one resource of an :class:`~secure_mirror.render.acls.AclPlan` (or of any list
of :class:`~secure_mirror.kafka.acl.Acl`), its operations spelled as the access types of Ranger's ``kafka`` service
definition (``service-defs/ranger-servicedef-kafka.json`` in ranger-plugins-common) the way Ranger's
``RangerKafkaAuthorizer.mapToRangerAccessType`` asks for them. The output is Ranger's public REST API v2
``RangerPolicy``, one JSON list per side, and a bash script that creates or replaces each policy by its service and
name with curl.

Ranger reads ``*`` and ``?`` in a resource value as wildcards and cannot escape them, and ``{``...``}`` as a macro
(``{USER}``): a name holding one is refused, never written as a wildcard. A PREFIXED binding is the one value that
ends in ``*``, and the profile's ``mirror.topics.grant_all_topics`` (Kafka's LITERAL ``*``) the one ``*`` alone.
A Ranger user is the name of the Kafka principal the brokers see (``User:mirror`` -> ``mirror``), which their
``principal.to.local`` rules already made (``Cluster.kafka_principal``): Ranger's authorizer asks with
``KafkaPrincipal.getName()``.

Ranger's authorizer answers ``authorizeByResourceType`` with DENIED (RANGER-3809), so an idempotent producer that is
not transactional needs IDEMPOTENT_WRITE on the cluster on every Kafka version: the plan's ``older_brokers`` grants,
which the Kafka ACLs leave to pre-flight, are policies here."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from secure_mirror.kafka.acl import Acl
from secure_mirror.profile.cluster import Cluster, ranger_pattern_problem
from secure_mirror.profile.models import Profile
from secure_mirror.render import templating
from secure_mirror.render.acls import AclPlan
from secure_mirror.render.encoders import UnrepresentableValue, json_inline, json_text

# Kafka's operation -> the access type Ranger's Kafka authorizer asks for it (ALTER is Ranger's "configure").
ACCESS_TYPES = {
    "READ": "consume",
    "WRITE": "publish",
    "CREATE": "create",
    "DELETE": "delete",
    "ALTER": "configure",
    "DESCRIBE": "describe",
    "DESCRIBE_CONFIGS": "describe_configs",
    "ALTER_CONFIGS": "alter_configs",
    "IDEMPOTENT_WRITE": "idempotent_write",
    "CLUSTER_ACTION": "cluster_action",
}
# Kafka's resource type -> the resource of Ranger's kafka service definition.
RESOURCES = {"TOPIC": "topic", "GROUP": "consumergroup", "TRANSACTIONAL_ID": "transactionalid", "CLUSTER": "cluster"}
_KINDS = {"TOPIC": "topic", "GROUP": "consumer group", "TRANSACTIONAL_ID": "transactional id", "CLUSTER": "cluster"}
LABEL = "secure-mirror"
POLICIES_FILE = "{side}.policies.json"


@dataclass(frozen=True)
class RangerPolicies:
    """One side's policies, as Ranger Admin's API takes them (``service`` included)."""

    side: str
    service: str
    alias: str
    owner: str  # the mirror they belong to: every policy's name starts with it and its labels hold it
    policies: list[dict]

    def to_json(self) -> str:
        return json_text(self.policies)


def ranger_user(principal: str, field: str) -> str:
    """``User:mirror`` -> ``mirror``: the name Ranger's Kafka authorizer asks about for that principal."""
    kind, _, name = principal.partition(":")
    if kind != "User" or not name or name == "*":
        raise UnrepresentableValue(
            f"{field}: the principal {principal} is not one user, which a Ranger policy names by user name; "
            "grant it with Kafka's ACLs (acls.format: kafka) or name the user's principal"
        )
    return name


def ranger_value(acl: Acl, field: str) -> str:
    """The resource value Ranger matches as ``acl`` does: a LITERAL name as it is, a PREFIXED one followed by ``*``;
    a name Ranger would read as a wildcard or a macro is refused."""
    if acl.resource_type == "TOPIC" and acl.pattern_type == "LITERAL" and acl.resource_name == "*":
        return "*"  # mirror.topics.grant_all_topics: every topic, as the Kafka ACL says
    if acl.pattern_type not in ("LITERAL", "PREFIXED") or not acl.resource_name:
        raise UnrepresentableValue(f"{field}: a {acl.pattern_type} grant on {acl.resource_name!r} has no Ranger value")
    if found := ranger_pattern_problem(acl.resource_name):
        kind = _KINDS.get(acl.resource_type, acl.resource_type.lower())
        raise UnrepresentableValue(
            f"{field}: the {kind} name {acl.resource_name!r} contains {found}, which Ranger reads as "
            "a pattern and cannot escape, so a policy would cover other names; rename it, or use Kafka's ACLs "
            "(acls.format: kafka) for this side"
        )
    return acl.resource_name + ("*" if acl.pattern_type == "PREFIXED" else "")


def _item(user: str, operations: Iterable[str]) -> dict:
    accesses = [{"type": ACCESS_TYPES[op], "isAllowed": True} for op in dict.fromkeys(operations)]
    return {"accesses": accesses, "users": [user], "groups": [], "roles": [], "conditions": [], "delegateAdmin": False}


def policies_of(bindings: Iterable[Acl], *, service: str, owner: str, side: str, alias: str, field: str) -> list[dict]:
    """One policy per resource the ``bindings`` name, its items one per user (allow and deny apart), in order."""
    grouped: dict[tuple[str, str], list[Acl]] = {}
    for acl in bindings:
        if acl.resource_type not in RESOURCES or acl.operation not in ACCESS_TYPES:
            raise UnrepresentableValue(f"{field}: {acl.operation} on {acl.resource_type} has no Ranger access type")
        if acl.host != "*":
            raise UnrepresentableValue(
                f"{field}: a grant limited to host {acl.host} needs a Ranger condition; "
                "grant it with Kafka's ACLs (acls.format: kafka)"
            )
        grouped.setdefault((acl.resource_type, ranger_value(acl, field)), []).append(acl)
    return [_policy(kind, value, acls, service, owner, side, alias, field) for (kind, value), acls in grouped.items()]


def _policy(
    kind: str, value: str, acls: list[Acl], service: str, owner: str, side: str, alias: str, field: str
) -> dict:
    resource = RESOURCES[kind]
    items: dict[str, dict[str, list[str]]] = {"ALLOW": {}, "DENY": {}}
    for acl in acls:
        items[acl.permission].setdefault(ranger_user(acl.principal, field), []).append(acl.operation)
    words = "; ".join(
        f"{user} may {'not ' if permission == 'DENY' else ''}{', '.join(ACCESS_TYPES[op] for op in dict.fromkeys(ops))}"
        for permission, users in items.items()
        for user, ops in users.items()
    )
    what = (
        f"every {_KINDS[kind]} whose name starts with {value[:-1]}"
        if value.endswith("*") and value != "*"
        else ("every topic (mirror.topics.grant_all_topics)" if value == "*" else f"the {_KINDS[kind]} {value} only")
    )
    return {
        "service": service,
        "name": f"{owner} {side} {resource} {value}",
        "description": f"Rendered by secure-mirror for the mirror {owner} ({side} cluster {alias}): {words} on {what}.",
        "policyLabels": [LABEL, owner],
        "isEnabled": True,
        "isAuditEnabled": True,
        "resources": {resource: {"values": [value], "isExcludes": False, "isRecursive": False}},
        "policyItems": [_item(user, ops) for user, ops in items["ALLOW"].items()],
        "denyPolicyItems": [_item(user, ops) for user, ops in items["DENY"].items()],
        "allowExceptions": [],
        "denyExceptions": [],
    }


def owner(profile: Profile) -> str:
    """The mirror the policies belong to: its consumer-group prefix (``secure-mirror-<source>-<target>``)."""
    return profile.group_prefix


def plan_policies(plan: AclPlan, profile: Profile) -> RangerPolicies:
    """The policies granting what ``plan`` grants, and the grants only older brokers need of Kafka's ACLs (which
    Ranger's authorizer needs on every version, see above)."""
    cluster: Cluster = plan.cluster
    service = cluster.acls.ranger_service
    bindings = [*plan.bindings, *plan.older_brokers]
    field = f"{plan.side}.acls.format"
    found = policies_of(
        bindings, service=service, owner=owner(profile), side=plan.side, alias=cluster.alias, field=field
    )
    return RangerPolicies(plan.side, service, cluster.alias, owner(profile), found)


def apply_script(sides: list[RangerPolicies], merge: bool = False, skipped: Iterable[str] = ()) -> str:
    """``apply-policies.sh``: each policy created, or replaced by its service and name, with curl. ``merge``: each
    policy's items merged by Ranger Admin into the policy that already holds its resources, else created (the
    consumers' grants, whose topics the mirror's own policies hold); ``skipped``: grants left out, in words."""
    bodies = [
        (side, policy["name"], json_inline({k: v for k, v in policy.items() if k != "service"}))
        for side in sides
        for policy in side.policies
    ]
    return templating.render(
        "templates/apply-ranger-policies.sh.j2", sides=sides, bodies=bodies, merge=merge, skipped=list(skipped)
    )


def unrepresentable(acl: Acl, field: str) -> str | None:
    """Why a Ranger policy cannot hold ``acl`` (a sentence), or None."""
    try:
        policies_of([acl], service="s", owner="o", side="target", alias="a", field=field)
    except UnrepresentableValue as refused:
        return str(refused)
    return None


def consumer_policies(bindings: Iterable[Acl], profile: Profile) -> tuple[RangerPolicies, list[str]]:
    """The consumers' target grants (``acls --consumers``) as policies of the mirror's target service, named after
    the mirror's consumers; a binding no policy can hold is left out and said why (one odd binding never blocks
    the plan, as in consumer-acls.sh)."""
    field = "acls --consumers"
    kept, skipped = [], []
    for acl in bindings:
        if (why := unrepresentable(acl, field)) is None:
            kept.append(acl)
        else:
            skipped.append(
                f"{acl.permission} {acl.operation} {acl.resource_type} {acl.resource_name} for {acl.principal}: {why}"
            )
    cluster, name = profile.target, f"{owner(profile)}-consumers"
    service = cluster.acls.ranger_service
    found = policies_of(kept, service=service, owner=name, side="target", alias=cluster.alias, field=field)
    return RangerPolicies("target", service, cluster.alias, name, found), skipped
