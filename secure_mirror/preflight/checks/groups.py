"""``mirror.groups`` (issue 28): whether the identity may fetch the synced groups' committed offsets on the source
(``source.acl.group-describe``: DESCRIBE on the groups), commit their translated offsets on the target
(``target.acl.group-read``: READ on the groups; ``target.acl.topic-read``: READ on the target topics, which commits
need) and keep the offset map and checkpoints topics there (``target.acl.group-topics``: DESCRIBE, CREATE, WRITE;
their READ is judged with the other topics'). The groups asked about are ``render.acls.group_samples`` (each literal
include, a name under each prefix that a LITERAL grant on the prefix would not cover); ``ask_*`` put the questions
through ``probes.kafka_admin`` and the pure ``*_check`` functions judge the answers, naming a missing grant as the
side's ACL plan holds it. What the brokers cannot say (operations not reported before Kafka 2.3; WRITE and READ on a
topic still to create; an error, ``base.meaning``: no answer, the broker asked naming) is ``unverified``, proven by
the ``--as-admin`` audit: never a pass, never a refusal."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from secure_mirror.preflight.checks.acl_fixes import lacking
from secure_mirror.preflight.checks.base import (
    REFUSED,
    REJECTED,
    UNASKED,
    check,
    listed,
    meaning,
    planned,
    unanswered,
    undescribed,
)
from secure_mirror.preflight.model import FAIL, PASS, PROVE_WITH_AUDIT, UNVERIFIED, Check
from secure_mirror.preflight.probes import kafka_admin
from secure_mirror.preflight.probes.kafka_admin import groups as group_probes
from secure_mirror.preflight.probes.kafka_admin import topics as topic_probes
from secure_mirror.profile.models import Profile
from secure_mirror.render import acls as acl_plans
from secure_mirror.render.acls import AclPlan

EXISTS = topic_probes.EXISTS


def shown(profile: Profile) -> dict[str, str]:
    """Each sample group id -> the include it stands for, as a reader knows it (``app.orders``, ``billing*``)."""
    resources = profile.mirror.groups.selection().resources()
    names = [r.value if r.kind == "literal" else f"{r.value}*" for r in resources]
    return dict(zip(acl_plans.group_samples(profile), names, strict=True))


# ---- asking -------------------------------------------------------------------------------------------------------
def ask_source(profile: Profile, plan: AclPlan, admin: kafka_admin.Admin) -> dict[str, group_probes.GroupAnswer]:
    """The source's description of each sample group (``describe_groups``)."""
    return group_probes.describe_groups(admin, planned(plan, ("DESCRIBE",), "GROUP", acl_plans.group_samples(profile)))


def ask_target(profile: Profile, plan: AclPlan, admin: kafka_admin.Admin) -> dict:
    """{"groups": the target's description of each sample group, "topics": the offset map's and checkpoints topic's
    descriptions, "created": the validate_only creation answers of those not described, "said": librdkafka's
    client-level errors by then (``kafka_admin.said``)}."""
    samples = planned(plan, ("READ", "DESCRIBE"), "GROUP", acl_plans.group_samples(profile))
    own = ask_own_topics(plan, admin, list(acl_plans.sync_topics(profile)))
    described = group_probes.describe_groups(admin, samples)
    return {**own, "groups": described, "said": kafka_admin.said(admin)}


def ask_own_topics(plan: AclPlan, admin: kafka_admin.Admin, names: list[str]) -> dict:
    """{"topics": the descriptions of some of the mirror's own target topics, "created": the validate_only creation
    answers of those not described, "said": librdkafka's client-level errors by then} (as ``ask_target`` gives them
    for the offset map and checkpoints topics)."""
    own = planned(plan, ("DESCRIBE", "WRITE", "READ"), "TOPIC", names)
    described = topic_probes.describe_topics(admin, own)
    absent = planned(plan, ("CREATE",), "TOPIC", [t for t, d in described.items() if "error" in d])
    created = topic_probes.validate_create(admin, dict.fromkeys(absent, 1)) if absent else {}
    described, created = topic_probes.appeared(admin, described, created)
    return {"topics": described, "created": created, "said": kafka_admin.said(admin)}


# ---- the judgement --------------------------------------------------------------------------------------------------
def source_check(
    profile: Profile, plan: AclPlan, described: Mapping[str, group_probes.GroupAnswer], said: Sequence[str] = ()
) -> Check:
    """``source.acl.group-describe`` from ``ask_source``'s answer (``said``: librdkafka's client-level errors)."""
    return group_check(profile, plan, "DESCRIBE", described, "fetch their committed offsets", said)


def target_checks(
    profile: Profile, plan: AclPlan, exists: Mapping[str, topic_probes.Described], to_create: list[str], answer: dict
) -> list[Check]:
    """``target.acl.group-read``, ``-topic-read`` and ``-group-topics`` (``exists``: the target topics described,
    ``to_create``: those still to create, as the target's topic checks sorted them; ``answer``: ``ask_target``'s)."""
    own, said = answer["topics"], answer.get("said", [])
    own_exist = {t: d for t, d in own.items() if "error" not in d}
    own_to_create = [t for t, code in answer["created"].items() if code is None]
    return [
        group_check(profile, plan, "READ", answer["groups"], "commit their translated offsets", said),
        topic_read_check(plan, {**exists, **own_exist}, [*to_create, *own_to_create]),
        group_topics_check(plan, own, answer["created"], said=said, create_proof="target.audit.topic-create"),
    ]


def group_check(
    profile: Profile,
    plan: AclPlan,
    operation: str,
    described: Mapping[str, group_probes.GroupAnswer],
    purpose: str,
    said: Sequence[str] = (),
) -> Check:
    """``acl.group-<operation>`` on the synced groups: refused (an authorization error, or the operation not among
    those reported), not known (another error: no answer, naming the brokers ``said`` names; operations not
    reported: unverified), or held."""
    what, names = f"acl.group-{operation.lower()}", shown(profile)
    refused = [g for g, d in described.items() if _refused(d, operation)]
    unknown = [g for g, d in described.items() if g not in refused and d.get("operations") is None]
    proof = f"{plan.side}.audit.group-{operation.lower()}"
    if refused:
        finding = (
            f"{plan.principal} may not {operation} the consumer groups mirror.groups syncs "
            f"({listed([names[g] for g in refused])}): the mirror could not {purpose}"
        )
        return lacking(plan, what, plan.need(operation, "GROUP", refused), finding)
    if errors := {g: d["error"] for g, d in described.items() if g in unknown and "error" in d}:
        question = f"whether {plan.principal} may {operation} the consumer groups {listed([names[g] for g in errors])}"
        return unanswered(plan.side, what, question, errors, said, proof)
    if unknown:
        finding = (
            f"whether {plan.principal} may {operation} the consumer groups {listed([names[g] for g in unknown])} is "
            "not known: no authorized operations reported (brokers before Kafka 2.3)"
        )
        return check(
            plan.side, what, UNVERIFIED, finding, PROVE_WITH_AUDIT, proven_by=proof, details={"resources": unknown}
        )
    finding = (
        f"{plan.principal} may {operation} the consumer groups mirror.groups syncs ({listed(list(names.values()))})"
    )
    return check(plan.side, what, PASS, finding)


def _refused(described: group_probes.GroupAnswer, operation: str) -> bool:
    if "error" in described:
        return meaning(described["error"]) == REFUSED
    return described["operations"] is not None and operation not in described["operations"]


def topic_read_check(plan: AclPlan, exists: Mapping[str, topic_probes.Described], to_create: list[str]) -> Check:
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
    described: Mapping[str, topic_probes.TopicAnswer],
    created: dict[str, str | None],
    what: str = "acl.group-topics",
    purpose: str = "mirror.groups (its offset map; checkpoints in MirrorMaker 2's format)",
    needed_by: str = "mirror.groups",
    *,
    said: Sequence[str] = (),
    create_proof: str = "",
) -> Check:
    """``target.acl.group-topics``: DESCRIBE, CREATE (when missing) and WRITE on the offset map and checkpoints
    topics; WRITE on one still to create (or on brokers that report no operations) is not known, and so is CREATE
    when the brokers gave no answer (``said``: librdkafka's client-level errors name the broker; the audit check
    ``create_proof`` proves it). The same judgement for another of the mirror's own topics under another id
    (``what``) and ``purpose`` (the heartbeats topic)."""
    hidden = sorted(t for t, d in described.items() if "error" in d and meaning(d["error"]) == REFUSED)
    no_create = sorted(t for t, code in created.items() if meaning(code) == REFUSED and t not in hidden)
    exists = {t: d for t, d in described.items() if "error" not in d}
    no_write = sorted(t for t, d in exists.items() if d["operations"] is not None and "WRITE" not in d["operations"])
    for operation, names in (("DESCRIBE", hidden), ("CREATE", no_create), ("WRITE", no_write)):
        if names:
            finding = (
                f"{plan.principal} may not {operation} {listed(names)}, the topic(s) the mirror keeps for {purpose}"
            )
            return lacking(plan, what, plan.need(operation, "TOPIC", names), finding)
    if rejected := sorted(t for t, code in created.items() if meaning(code) == REJECTED):
        finding = f"the broker would refuse to create {listed(rejected)}: {created[rejected[0]]}"
        return check("target", what, FAIL, finding, "create the topics yourself, or fix the topic policy")
    if unasked := {t: code for t, code in sorted(created.items()) if code is not None and meaning(code) == UNASKED}:
        question = (
            f"whether {plan.principal} may CREATE {listed(list(unasked))}, the topic(s) the mirror keeps for {purpose}"
        )
        return unanswered("target", what, question, unasked, said, create_proof)
    if errors := topic_probes.undescribed(described, created):
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
