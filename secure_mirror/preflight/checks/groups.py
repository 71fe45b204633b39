"""``mirror.groups`` (issue 28): whether the identity may fetch the synced groups' committed offsets on the source
(``source.acl.group-describe``: DESCRIBE on the groups), commit their translated offsets on the target
(``target.acl.group-read``: READ on the groups; ``target.acl.topic-read``: READ on the target topics, which commits
need) and keep the offset map and checkpoints topics there (``target.acl.group-topics``: DESCRIBE, CREATE, WRITE;
their READ is judged with the other topics'). The groups asked about are ``render.acls.group_samples`` (each literal
include, a name under each prefix that a LITERAL grant on the prefix would not cover); ``ask_*`` put the questions
through ``probes.kafka_admin`` and the pure ``*_check`` functions judge the answers, naming a missing grant as the
side's ACL plan holds it. What the brokers cannot say (operations not reported before Kafka 2.3; WRITE and READ on a
topic still to create; an error) is ``unverified``, proven by the ``--as-admin`` audit: never a pass."""

from __future__ import annotations

from collections.abc import Mapping

from secure_mirror.preflight.checks.acl_fixes import lacking
from secure_mirror.preflight.checks.base import check, listed, planned, undescribed
from secure_mirror.preflight.model import FAIL, PASS, PROVE_WITH_AUDIT, UNVERIFIED, Check
from secure_mirror.preflight.probes import kafka_admin
from secure_mirror.profile.models import Profile
from secure_mirror.render import acls as acl_plans
from secure_mirror.render.acls import AclPlan

REFUSED_GROUP = "GROUP_AUTHORIZATION_FAILED"
REFUSED_TOPIC = kafka_admin.REFUSED_TOPIC
EXISTS = kafka_admin.EXISTS


def shown(profile: Profile) -> dict[str, str]:
    """Each sample group id -> the include it stands for, as a reader knows it (``app.orders``, ``billing*``)."""
    resources = profile.mirror.groups.selection().resources()
    names = [r.value if r.kind == "literal" else f"{r.value}*" for r in resources]
    return dict(zip(acl_plans.group_samples(profile), names, strict=True))


# ---- asking -------------------------------------------------------------------------------------------------------
def ask_source(profile: Profile, plan: AclPlan, admin: kafka_admin.Admin) -> dict[str, kafka_admin.GroupAnswer]:
    """The source's description of each sample group (``describe_groups``)."""
    return kafka_admin.describe_groups(admin, planned(plan, ("DESCRIBE",), "GROUP", acl_plans.group_samples(profile)))


def ask_target(profile: Profile, plan: AclPlan, admin: kafka_admin.Admin) -> dict:
    """{"groups": the target's description of each sample group, "topics": the offset map's and checkpoints topic's
    descriptions, "created": the validate_only creation answers of those not described}."""
    samples = planned(plan, ("READ", "DESCRIBE"), "GROUP", acl_plans.group_samples(profile))
    own = ask_own_topics(plan, admin, list(acl_plans.sync_topics(profile)))
    return {"groups": kafka_admin.describe_groups(admin, samples), **own}


def ask_own_topics(plan: AclPlan, admin: kafka_admin.Admin, names: list[str]) -> dict:
    """{"topics": the descriptions of some of the mirror's own target topics, "created": the validate_only creation
    answers of those not described} (as ``ask_target`` gives them for the offset map and checkpoints topics)."""
    own = planned(plan, ("DESCRIBE", "WRITE", "READ"), "TOPIC", names)
    described = kafka_admin.describe_topics(admin, own)
    absent = planned(plan, ("CREATE",), "TOPIC", [t for t, d in described.items() if "error" in d])
    created = kafka_admin.validate_create(admin, dict.fromkeys(absent, 1)) if absent else {}
    described, created = kafka_admin.appeared(admin, described, created)
    return {"topics": described, "created": created}


# ---- the judgement --------------------------------------------------------------------------------------------------
def source_check(profile: Profile, plan: AclPlan, described: Mapping[str, kafka_admin.GroupAnswer]) -> Check:
    """``source.acl.group-describe`` from ``ask_source``'s answer."""
    return group_check(profile, plan, "DESCRIBE", described, "fetch their committed offsets")


def target_checks(
    profile: Profile, plan: AclPlan, exists: Mapping[str, kafka_admin.Described], to_create: list[str], answer: dict
) -> list[Check]:
    """``target.acl.group-read``, ``-topic-read`` and ``-group-topics`` (``exists``: the target topics described,
    ``to_create``: those still to create, as the target's topic checks sorted them; ``answer``: ``ask_target``'s)."""
    own = answer["topics"]
    own_exist = {t: d for t, d in own.items() if "error" not in d}
    own_to_create = [t for t, code in answer["created"].items() if code is None]
    return [
        group_check(profile, plan, "READ", answer["groups"], "commit their translated offsets"),
        topic_read_check(plan, {**exists, **own_exist}, [*to_create, *own_to_create]),
        group_topics_check(plan, own, answer["created"]),
    ]


def group_check(
    profile: Profile, plan: AclPlan, operation: str, described: Mapping[str, kafka_admin.GroupAnswer], purpose: str
) -> Check:
    """``acl.group-<operation>`` on the synced groups: refused (an authorization error, or the operation not among
    those reported), not known (operations not reported, another error: unverified), or held."""
    what, names = f"acl.group-{operation.lower()}", shown(profile)
    refused = [g for g, d in described.items() if _refused(d, operation)]
    unknown = [g for g, d in described.items() if g not in refused and d.get("operations") is None]
    if refused:
        finding = (
            f"{plan.principal} may not {operation} the consumer groups mirror.groups syncs "
            f"({listed([names[g] for g in refused])}): the mirror could not {purpose}"
        )
        return lacking(plan, what, plan.need(operation, "GROUP", refused), finding)
    if unknown:
        why = {
            d["error"] if "error" in d else "no authorized operations reported (brokers before Kafka 2.3)"
            for d in described.values()
        }
        finding = (
            f"whether {plan.principal} may {operation} the consumer groups {listed([names[g] for g in unknown])} is "
            f"not known: {'; '.join(sorted(why))}"
        )
        return check(
            plan.side,
            what,
            UNVERIFIED,
            finding,
            PROVE_WITH_AUDIT,
            proven_by=f"{plan.side}.audit.group-{operation.lower()}",
            details={"resources": unknown},
        )
    finding = (
        f"{plan.principal} may {operation} the consumer groups mirror.groups syncs ({listed(list(names.values()))})"
    )
    return check(plan.side, what, PASS, finding)


def _refused(described: kafka_admin.GroupAnswer, operation: str) -> bool:
    if "error" in described:
        return described["error"] == REFUSED_GROUP
    return described["operations"] is not None and operation not in described["operations"]


def topic_read_check(plan: AclPlan, exists: Mapping[str, kafka_admin.Described], to_create: list[str]) -> Check:
    """``target.acl.topic-read``: READ on the target topics (a commit of a group's offset needs it) and on the offset
    map and checkpoints topics (the sink reads them back); not known for a topic still to create."""
    no_read = sorted(t for t, d in exists.items() if d["operations"] is not None and "READ" not in d["operations"])
    unknown = sorted(t for t, d in exists.items() if d["operations"] is None) + sorted(to_create)
    if no_read:
        finding = (
            f"{plan.principal} may not READ {len(no_read)} target topic(s) ({listed(no_read)}): the group offsets "
            "translated onto them could not be committed"
        )
        return lacking(plan, "acl.topic-read", plan.need("READ", "TOPIC", no_read), finding)
    if unknown:
        finding = (
            f"READ on {len(unknown)} target topic(s) ({listed(unknown)}) cannot be asked: they are still to create, "
            "or the brokers (older than Kafka 2.3) report no authorized operations"
        )
        return check(
            "target",
            "acl.topic-read",
            UNVERIFIED,
            finding,
            PROVE_WITH_AUDIT,
            proven_by="target.audit.topic-read",
            details={"resources": unknown[:100]},
        )
    return check("target", "acl.topic-read", PASS, f"{plan.principal} may READ all {len(exists)} target topic(s)")


def group_topics_check(
    plan: AclPlan,
    described: Mapping[str, kafka_admin.TopicAnswer],
    created: dict[str, str | None],
    what: str = "acl.group-topics",
    purpose: str = "mirror.groups (its offset map; checkpoints in MirrorMaker 2's format)",
    needed_by: str = "mirror.groups",
) -> Check:
    """``target.acl.group-topics``: DESCRIBE, CREATE (when missing) and WRITE on the offset map and checkpoints
    topics; WRITE on one still to create (or on brokers that report no operations) is not known. The same judgement
    for another of the mirror's own topics under another id (``what``) and ``purpose`` (the heartbeats topic)."""
    hidden = sorted(t for t, d in described.items() if d.get("error") == REFUSED_TOPIC)
    no_create = sorted(t for t, code in created.items() if code == REFUSED_TOPIC and t not in hidden)
    exists = {t: d for t, d in described.items() if "error" not in d}
    no_write = sorted(t for t, d in exists.items() if d["operations"] is not None and "WRITE" not in d["operations"])
    for operation, names in (("DESCRIBE", hidden), ("CREATE", no_create), ("WRITE", no_write)):
        if names:
            finding = (
                f"{plan.principal} may not {operation} {listed(names)}, the topic(s) the mirror keeps for {purpose}"
            )
            return lacking(plan, what, plan.need(operation, "TOPIC", names), finding)
    other = sorted(t for t, code in created.items() if code not in (None, REFUSED_TOPIC, EXISTS))
    if other:
        finding = f"the broker would refuse to create {listed(other)}: {created[other[0]]}"
        return check("target", what, FAIL, finding, "create the topics yourself, or fix the topic policy")
    if errors := kafka_admin.undescribed(described, created):
        return undescribed("target", what, plan.principal, errors)
    unknown = sorted(t for t in described if t not in exists or exists[t]["operations"] is None)
    if unknown:
        finding = (
            f"{plan.principal} may DESCRIBE and CREATE the topics {needed_by} needs; WRITE on {listed(unknown)} "
            "cannot be asked before they exist (or the brokers report no authorized operations)"
        )
        return check(
            "target",
            what,
            UNVERIFIED,
            finding,
            PROVE_WITH_AUDIT,
            proven_by="target.audit.topic-write",
            details={"resources": unknown},
        )
    return check("target", what, PASS, f"{plan.principal} may DESCRIBE, WRITE {listed(sorted(exists))}")
