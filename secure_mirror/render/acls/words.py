"""The grants in words (MANIFEST.md, manifest.json): one sentence per resource a plan grants on."""

from __future__ import annotations

from secure_mirror.kafka.acl import Acl
from secure_mirror.profile.models import ALL_TOPICS_KEY
from secure_mirror.render.acls.plan import AclPlan


def _covers(acl: Acl, plan: AclPlan) -> str:
    kind = {"TOPIC": "topic", "GROUP": "consumer group", "TRANSACTIONAL_ID": "transactional id"}.get(
        acl.resource_type, acl.resource_type.lower()
    )
    if acl.resource_type == "TOPIC" and acl.pattern_type == "LITERAL" and acl.resource_name == "*":
        return (
            "every topic, Kafka's internal topics included (__consumer_offsets, __transaction_state), because "
            f"{ALL_TOPICS_KEY} is set"
        )
    if acl.pattern_type == "PREFIXED":
        return f"every {kind} whose name starts with {acl.resource_name}"
    own = f" ({plan.own_topics[acl.resource_name]})" if acl.resource_name in plan.own_topics else ""
    return f"the {kind} {acl.resource_name} only{own}"


def plan_in_words(plan: AclPlan) -> list[str]:
    """One sentence per resource the plan grants on (its operations together), then one per unresolved pattern."""
    grouped: dict[tuple[str, str, str], list[Acl]] = {}
    for acl in plan.bindings:
        grouped.setdefault((acl.resource_type, acl.resource_name, acl.pattern_type), []).append(acl)
    lines = [
        f"{plan.principal} may {', '.join(acl.operation for acl in acls)} {_covers(acls[0], plan)}"
        for acls in grouped.values()
    ]
    lines += [
        f"include {item.pattern} {item.reason}: no grant rendered; pre-flight lists the topics it selects, each to "
        "be granted by name (LITERAL)"
        for item in plan.unresolved
    ]
    return lines
