"""The target, once the source's topics are known: the renamed topics' partitions (``topics.partitions``), and
whether the identity may DESCRIBE, WRITE and CREATE them (``acl.topic-*``), write idempotently
(``acl.idempotent-write``), with exactly_once use its transactional ids (``acl.transactional-id``) and, with
``mirror.groups``, commit the synced groups' offsets and keep the offset map and checkpoints topics
(``acl.group-read``, ``acl.topic-read``, ``acl.group-topics``: ``checks.groups``). Each step
asks through ``probes``; the pure ``*_check`` functions judge the answers and name a missing grant as the target's
ACL plan holds it (``render.acls.AclPlan.need``)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import NotRequired, TypedDict, final

from secure_mirror.kafka.acl import CLUSTER_NAME, kafka_acls_command
from secure_mirror.preflight.checks import groups as group_checks
from secure_mirror.preflight.checks import topic_shape as shape_checks
from secure_mirror.preflight.checks.acl_fixes import lacking
from secure_mirror.preflight.checks.base import (
    REFUSED,
    REJECTED,
    UNASKED,
    SideChecks,
    check,
    client_conf,
    listed,
    meaning,
    planned,
    unanswered,
    undescribed,
)
from secure_mirror.preflight.model import FAIL, PASS, PROVE_WITH_AUDIT, SKIPPED, UNVERIFIED, Check
from secure_mirror.preflight.probes import Failed, api_versions, kafka_admin, tls
from secure_mirror.preflight.probes.kafka_admin import cluster as cluster_probes
from secure_mirror.preflight.probes.kafka_admin import topics as topic_probes
from secure_mirror.preflight.probes.kafka_admin import transactions as transaction_probes
from secure_mirror.profile.cluster import Cluster
from secure_mirror.profile.models import Profile
from secure_mirror.profile.topics import HEARTBEATS_TOPIC
from secure_mirror.render import acls as acl_plans
from secure_mirror.render.acls import AclPlan, NotPlanned

HEARTBEATS_CHECK = "acl.heartbeats-topic"
TRANSACTIONAL_PROBE = "preflight"  # the transactional id pre-flight registers: the prefix and this
TRANSACTIONAL_PROOF = "target.audit.transactional_id-write"


# ---- the steps: ask, then judge -----------------------------------------------------------------------------------
def target_side(
    profile: Profile,
    timeout: float,
    source_topics: dict[str, int],
    known: dict[str, topic_probes.TopicAnswer] | None = None,
) -> list[Check]:
    """Every target check of the second phase (``source_topics``: the selected source topics -> partitions;
    ``known``: the descriptions ``ask_existing`` made in the first phase)."""
    run = SideChecks("target")
    plan = acl_plans.target_acls(profile)
    admin = kafka_admin.Admin(client_conf(profile.target, "target"), timeout)
    answers = ask_topics(profile, plan, admin, source_topics, known or {})
    run.extend(*topic_checks(profile, plan, answers))
    run.extend(*shape_checks.target_checks(profile, plan, TargetTopics.of(answers).exists))
    if profile.mirror.groups.enabled:  # commit the synced groups' offsets, keep the offset map and checkpoints
        topics = TargetTopics.of(answers)
        asked = group_checks.ask_target(profile, plan, admin)
        run.extend(*group_checks.target_checks(profile, plan, topics.exists, topics.to_create, asked))
    if profile.mirror.heartbeats.enabled:  # the heartbeats topic (docs/heartbeats.md)
        beats = group_checks.ask_own_topics(plan, admin, [HEARTBEATS_TOPIC])
        purpose = "its heartbeats (MirrorMaker 2's heartbeats topic, docs/heartbeats.md)"
        judged = group_checks.group_topics_check(
            plan, beats["topics"], beats["created"], HEARTBEATS_CHECK, purpose, "mirror.heartbeats", said=beats["said"]
        )  # the audit does not evaluate the heartbeats topic: a CREATE not answered is proven by nothing
        run.extend(judged)
    if profile.mirror.delivery.enable_idempotence:
        if run.status("acl.topic-write") == FAIL:  # one cause, one failure (unverified WRITE does not block this)
            run.add("acl.idempotent-write", SKIPPED, "skipped: needs target.acl.topic-write to pass")
        else:
            run.extend(idempotent_check(plan, ask_idempotence(profile.target, admin, timeout)))
    if profile.mirror.delivery.exactly_once:
        [probe] = planned(plan, ("WRITE",), "TRANSACTIONAL_ID", [profile.transactional_prefix + TRANSACTIONAL_PROBE])
        code = transaction_probes.transaction_probe(admin, probe)
        run.extend(transaction_check(profile, plan, probe, code, kafka_admin.said(admin)))
    return run.checks


def ask_existing(profile: Profile, admin: kafka_admin.Admin) -> dict[str, topic_probes.TopicAnswer]:
    """First phase, while the source lists its topics: the descriptions of the target topics the identity sees that
    the selection would write (a topic whose name, less the rename, the selection picks), as ``describe_topics``
    gives them, less those that answered an error. The second phase describes only the names these do not cover."""
    plan, pieces = acl_plans.target_acls(profile), profile.target_topic_pieces
    if len(pieces) != 2:  # the rename repeats the topic: no speculation
        return {}
    selection, (head, tail) = profile.selection(), pieces
    try:
        visible = topic_probes.list_topics(admin)
    except Exception:  # noqa: BLE001 - a head start only: the second phase asks what is not known, and judges
        return {}
    candidates = [
        name
        for name in visible
        if name.startswith(head)
        and name.endswith(tail)
        and len(name) > len(head) + len(tail)
        and selection.matches(source := name[len(head) : len(name) - len(tail)])
        and profile.target_topic(source) == name
    ]
    try:
        described = topic_probes.describe_topics(admin, granted(plan, ("DESCRIBE", "WRITE"), candidates))
    except Exception:  # noqa: BLE001 - a head start only: the second phase asks what is not known, and judges
        return {}
    return {name: answer for name, answer in described.items() if "error" not in answer}  # errors: asked again


def granted(plan: AclPlan, operations: tuple[str, ...], names: list[str]) -> list[str]:
    """Those of the topics ``names`` on which ``plan`` grants each of ``operations`` (pre-flight asks the brokers
    about nothing else)."""
    found = []
    for name in names:
        try:
            planned(plan, operations, "TOPIC", [name])
        except NotPlanned:
            continue
        found.append(name)
    return found


def ask_topics(
    profile: Profile,
    plan: AclPlan,
    admin: kafka_admin.Admin,
    source_topics: dict[str, int],
    known: dict[str, topic_probes.TopicAnswer],
) -> dict:
    """{"names": target topic -> its source's partitions, "described": their descriptions (those ``known`` has from
    the first phase, the others asked now), "created": the validate_only creation answers of those not described,
    "said": librdkafka's client-level errors by then (``kafka_admin.said``: the brokers it could not ask)}."""
    names = {profile.target_topic(t): p for t, p in source_topics.items()}
    asked = planned(plan, ("DESCRIBE", "WRITE"), "TOPIC", names)
    fresh = topic_probes.describe_topics(admin, [t for t in asked if t not in known])
    described = {t: known[t] if t in known else fresh[t] for t in asked}
    absent = planned(plan, ("CREATE",), "TOPIC", [t for t, d in described.items() if "error" in d])
    created = topic_probes.validate_create(admin, {t: names[t] for t in absent})
    described, created = topic_probes.appeared(admin, described, created)
    return {"names": names, "described": described, "created": created, "said": kafka_admin.said(admin)}


@final
class Idempotence(TypedDict):
    apis: api_versions.BrokerApis  # the first broker's, asked without credentials
    operations: NotRequired[list[str] | None]  # before Kafka 2.8, the identity's on the cluster (None: not reported)


def ask_idempotence(cluster: Cluster, admin: kafka_admin.Admin, timeout: float) -> Idempotence | Failed:
    """The first broker's API versions and, before Kafka 2.8, the cluster's authorized operations; or why the
    broker's versions could not be asked."""
    host, port = cluster.brokers[0]
    context = tls.context_for(cluster.tls_settings) if cluster.uses_tls else None
    answer = api_versions.answer(host, port, context, timeout)
    if "error" in answer:
        return answer
    if answer["apis"].write_allows_idempotence:
        return {"apis": answer["apis"]}
    return {"apis": answer["apis"], "operations": cluster_probes.describe_cluster(admin)["operations"]}


# ---- the judgement --------------------------------------------------------------------------------------------------
@dataclass
class TargetTopics:
    """What ``ask_topics`` found, sorted into what the checks judge."""

    names: dict[str, int]  # target topic -> the partitions of its source
    exists: dict[str, topic_probes.Described]  # described: partitions and operations
    created: dict[str, str | None]  # validate_only answers
    to_create: list[str]
    hidden: list[str]  # the identity may not describe them
    undescribed: dict[str, str]  # they exist, but their description failed otherwise: name -> the brokers' error
    unknown: dict[str, str]  # neither described nor known to be absent (no answer): name -> the description's error
    said: list[str]  # librdkafka's client-level errors (``kafka_admin.said``): the brokers it could not ask

    @classmethod
    def of(cls, answers: dict) -> TargetTopics:
        described, created = answers["described"], answers["created"]
        exists = {t: d for t, d in described.items() if "error" not in d}
        to_create = [t for t, code in created.items() if code != topic_probes.EXISTS]
        hidden = [t for t in created if meaning(described[t].get("error")) == REFUSED]
        undescribed = topic_probes.undescribed(described, created)
        unknown = {
            t: described[t]["error"]
            for t in to_create
            if created[t] is not None and meaning(described[t].get("error")) == UNASKED
        }
        return cls(answers["names"], exists, created, to_create, hidden, undescribed, unknown, answers.get("said", []))


def topic_checks(profile: Profile, plan: AclPlan, answers: dict) -> list[Check]:
    """``topics.partitions`` and ``acl.topic-describe``, ``-write``, ``-create`` from ``ask_topics``'s answers."""
    topics = TargetTopics.of(answers)
    return [
        partitions_check(profile, topics),
        describe_check(plan, topics),
        write_check(plan, topics),
        create_check(plan, topics),
    ]


def partitions_check(profile: Profile, topics: TargetTopics) -> Check:
    return shape_checks.partitions_check(profile, topics.names, topics.exists, len(topics.to_create))


def describe_check(plan: AclPlan, topics: TargetTopics) -> Check:
    """DESCRIBE: refused (hidden), or not known for a topic that exists but was not described, or that was neither
    described nor created for want of an answer."""
    if topics.hidden:
        hidden = sorted(topics.hidden)
        finding = f"{plan.principal} may not DESCRIBE {len(hidden)} target topic(s): {listed(hidden)}"
        return lacking(plan, "acl.topic-describe", plan.need("DESCRIBE", "TOPIC", hidden), finding)
    if topics.undescribed:
        return undescribed("target", "acl.topic-describe", plan.principal, topics.undescribed)
    if unknown := topics.unknown:
        question = f"whether {plan.principal} may DESCRIBE {listed(sorted(unknown))}"
        return unanswered("target", "acl.topic-describe", question, unknown, topics.said, "target.audit.topic-describe")
    finding = f"{plan.principal} may DESCRIBE all {len(topics.names)} target topic(s)"
    return check("target", "acl.topic-describe", PASS, finding)


def write_check(plan: AclPlan, topics: TargetTopics) -> Check:
    """WRITE is reported for existing topics only (before Kafka 2.3 not at all), and pre-flight writes nothing: what
    it cannot ask is unverified, proven by the audit."""
    exists, to_create = topics.exists, sorted(topics.to_create)
    no_write = sorted(t for t, d in exists.items() if d["operations"] is not None and "WRITE" not in d["operations"])
    unasked = sorted(t for t, d in exists.items() if d["operations"] is None)  # brokers before Kafka 2.3
    if no_write:
        finding = (
            f"{plan.principal} may not WRITE {len(no_write)} of {len(exists)} existing target topic(s): "
            f"{listed(no_write)}"
        )
        return lacking(plan, "acl.topic-write", plan.need("WRITE", "TOPIC", no_write), finding)
    if unasked:
        finding = (
            f"the brokers, older than Kafka 2.3, report no authorized operations: WRITE on {len(unasked)} existing "
            f"target topic(s) ({listed(unasked)}) cannot be asked without writing"
            + (f", nor on the {len(to_create)} still to create" if to_create else "")
        )
        resources = (unasked + to_create)[:100]
    elif to_create:
        existing = f"WRITE holds on the {len(exists)} existing one(s); " if exists else ""
        finding = (
            f"{existing}WRITE on the {len(to_create)} target topic(s) still to create ({listed(to_create)}) "
            "cannot be asked before they exist"
        )
        resources = to_create[:100]
    else:
        return check(
            "target", "acl.topic-write", PASS, f"{plan.principal} may WRITE all {len(exists)} existing target topic(s)"
        )
    return check(
        "target",
        "acl.topic-write",
        UNVERIFIED,
        finding,
        PROVE_WITH_AUDIT,
        proven_by="target.audit.topic-write",
        details={"resources": resources},
    )


def create_check(plan: AclPlan, topics: TargetTopics) -> Check:
    """CREATE, asked with validate_only: the authorizer's refusal fails with the grant, the brokers' rules (a topic
    policy) fail with theirs, and no answer (a broker that could not be asked) is unverified, naming the broker."""
    created, to_create = topics.created, sorted(topics.to_create)
    no_create = [t for t in to_create if meaning(created[t]) == REFUSED]
    rejected = [t for t in to_create if meaning(created[t]) == REJECTED]
    unasked = {t: code for t in to_create if (code := created[t]) is not None and meaning(code) == UNASKED}
    if no_create:
        finding = f"{plan.principal} may not CREATE {len(no_create)} missing target topic(s): {listed(no_create)}"
        return lacking(plan, "acl.topic-create", plan.need("CREATE", "TOPIC", no_create), finding)
    if rejected:
        return check(
            "target",
            "acl.topic-create",
            FAIL,
            f"the broker would refuse to create {listed(rejected)}: {created[rejected[0]]}",
            "create the topics yourself, or fix the broker's topic policy",
        )
    if unasked:
        question = (
            f"whether {plan.principal} may CREATE {len(unasked)} missing target topic(s) ({listed(list(unasked))})"
        )
        return unanswered("target", "acl.topic-create", question, unasked, topics.said, "target.audit.topic-create")
    if to_create:
        finding = (
            f"{plan.principal} may CREATE the {len(to_create)} missing target topic(s) "
            f"({listed(to_create)}); checked with validate_only, nothing was created"
        )
        return check("target", "acl.topic-create", PASS, finding)
    return check("target", "acl.topic-create", PASS, "every target topic exists; nothing to create")


def idempotent_check(plan: AclPlan, answer: Idempotence | Failed) -> Check:
    """Since Kafka 2.8 (KIP-679) WRITE on a topic allows the idempotent producer; before, it needs IDEMPOTENT_WRITE
    on the cluster. The line comes from the API versions the first broker offers (``ask_idempotence``)."""
    what, proof = "acl.idempotent-write", "target.audit.cluster-idempotent-write"
    if "error" in answer:
        finding = (
            f"the brokers' Kafka line is not known ({answer['error']}): whether the "
            "idempotent producer needs IDEMPOTENT_WRITE on the cluster is not known"
        )
        return check("target", what, UNVERIFIED, finding, PROVE_WITH_AUDIT, proven_by=proof)
    apis = answer["apis"]
    if apis.write_allows_idempotence:
        finding = (
            f"the brokers run {apis.line} (they offer DescribeCluster), where "
            "WRITE on the target topics allows the idempotent producer (KIP-679); no IDEMPOTENT_WRITE needed"
        )
        return check("target", what, PASS, finding)
    need, operations = plan.need("IDEMPOTENT_WRITE", "CLUSTER", [CLUSTER_NAME]), answer["operations"]
    if operations is None:
        grant = need.grants[0]
        command = kafka_acls_command(grant, plan.cluster.first_broker)
        finding = (
            f"the brokers run {apis.line}: the idempotent producer needs "
            "IDEMPOTENT_WRITE on the cluster, and such brokers do not report whether it is granted"
        )
        fix = f"grant it ({command}), then {PROVE_WITH_AUDIT}"
        return check("target", what, UNVERIFIED, finding, fix, acls=[grant], commands=[command], proven_by=proof)
    if "IDEMPOTENT_WRITE" in operations or "ALL" in operations:
        finding = (
            f"the brokers run {apis.line}, where the idempotent producer needs "
            f"IDEMPOTENT_WRITE on the cluster: {plan.principal} has it"
        )
        return check("target", what, PASS, finding)
    finding = (
        f"the brokers run {apis.line}, where the idempotent producer needs IDEMPOTENT_WRITE on the cluster, "
        f"which {plan.principal} lacks"
    )
    return lacking(plan, what, need, finding)


def transaction_check(profile: Profile, plan: AclPlan, probe: str, code: str | None, said: Sequence[str] = ()) -> Check:
    """exactly_once: the sink's transactional producers need WRITE on the ids under ``Profile.transactional_prefix``
    (asked by registering ``probe``, one such id: ``code`` is the broker's answer, ``said`` librdkafka's client-level
    errors; the audit checks the grants)."""
    prefix = profile.transactional_prefix
    how = f" (asked by registering the transactional id {probe}, which writes no record)"
    if code is None:
        return check(
            "target", "acl.transactional-id", PASS, f"{plan.principal} may use the transactional ids {prefix}*{how}"
        )
    if code == "TRANSACTIONAL_ID_AUTHORIZATION_FAILED":
        finding = f"{plan.principal} may not WRITE the transactional ids {prefix}* that exactly_once needs{how}"
        return lacking(plan, "acl.transactional-id", plan.need("WRITE", "TRANSACTIONAL_ID", [probe]), finding)
    if meaning(code) == UNASKED:  # the transaction coordinator could not be asked: no answer, never a refusal
        question = f"whether {plan.principal} may use the transactional ids {prefix}*{how}"
        return unanswered("target", "acl.transactional-id", question, {probe: code}, said, TRANSACTIONAL_PROOF)
    return check(
        "target",
        "acl.transactional-id",
        UNVERIFIED,
        f"registering the transactional id {probe} got {code}: whether "
        f"{plan.principal} may use the ids {prefix}* is not known",
        PROVE_WITH_AUDIT,
        proven_by=TRANSACTIONAL_PROOF,
    )
