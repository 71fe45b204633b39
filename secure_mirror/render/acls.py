"""The ACLs the mirroring identities need: READ+DESCRIBE on the source topics (and READ on Spark's consumer
groups), WRITE+DESCRIBE+CREATE on the target topics, and READ on the target topics and the group prefix there
so that `verify` can read back what was written. With ``mirror.groups`` (:func:`group_sync_source`,
:func:`group_sync_target`): DESCRIBE on the synced groups on the source, READ+DESCRIBE on them on the target, and the
offset map and checkpoints topics on the target. MirrorMaker 2 (run from mm2/mm2.properties) gets its own
plans, rendered into separate files, so that the Spark job's identity is granted no more than the job needs.
``mirror.topic_shape`` adds its operations on the topics (render/topic_shape_acls.py).

The privilege rule (README, Security model; :func:`binding_problems` states it as code, and render refuses a plan that
breaks it): every binding names the mirror's own principal, never one holding '*'; a TOPIC binding covers only topics
the selection and rename can name: a LITERAL name is a selected topic (or its target name), a PREFIXED grant is an
include prefix (or its target prefix) that covers no internal or reserved topic (``topics.prefix_covers_reserved``),
and TOPIC '*' is rendered only when the profile sets ``mirror.topics.grant_all_topics``; a LITERAL grant on an
internal topic names one the identity itself keeps (``AclPlan.own_topics``: MirrorMaker 2's in its plans, the offset
map and checkpoints topics with ``mirror.groups``); a GROUP binding covers the mirror's own groups or the groups
``mirror.groups.include`` names (never every group). An include pattern that no
binding can express within that rule (a general regex, a prefix covering internal or reserved topics, a prefix whose
target names share no prefix) gets no grant here: pre-flight resolves it into the topic names that need LITERAL ACLs
and says so, and the MANIFEST and apply-acls.sh say why.

What an identity needs on concrete resources is asked of its plan alone (:meth:`AclPlan.need`, which refuses what the
plan does not hold): pre-flight's checks and the ``--as-admin`` audit name their missing grants from it, and ask the
brokers about the sample names made here (:func:`spark_group`, :func:`transactional_ids`, :func:`group_samples`)."""

from __future__ import annotations

import functools
import re
import uuid
import zlib
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from secure_mirror.kafka.acl import CLUSTER_NAME, Acl, kafka_acls_arguments
from secure_mirror.profile import javaregex, mm2_topics, topics
from secure_mirror.profile.cluster import Cluster
from secure_mirror.profile.models import ALL_TOPICS_KEY, Profile
from secure_mirror.profile.security import GssapiSasl
from secure_mirror.profile.topics import classify
from secure_mirror.render import templating
from secure_mirror.render.encoders import json_text, sh
from secure_mirror.render.topic_shape_acls import (
    shape_note,
    shape_source_operations,
    shape_target_operations,
)

SOURCE_TOPIC_OPERATIONS = ("READ", "DESCRIBE")
TARGET_TOPIC_OPERATIONS = ("WRITE", "DESCRIBE", "CREATE")
VERIFY_TOPIC_OPERATIONS = ("READ",)  # on the target: verify reads back what the job wrote
TRANSACTIONAL_ID_OPERATIONS = ("WRITE", "DESCRIBE")  # exactly_once: the sink's transactional producers
# MirrorMaker 2 also reads the source topics' configs and copies them onto the target topics it creates.
MM2_SOURCE_TOPIC_OPERATIONS = SOURCE_TOPIC_OPERATIONS + ("DESCRIBE_CONFIGS",)
MM2_TARGET_TOPIC_OPERATIONS = TARGET_TOPIC_OPERATIONS + ("DESCRIBE_CONFIGS", "ALTER_CONFIGS")
# Its own topics: it creates them, writes and reads them back, and checks their cleanup policy.
MM2_INTERNAL_TOPIC_OPERATIONS = ("CREATE", "DESCRIBE", "DESCRIBE_CONFIGS", "READ", "WRITE")
# mirror.groups (issue 28). Source: OffsetFetch and DescribeGroups need DESCRIBE on the group (DESCRIBE on the topics
# the source grant holds). Target: OffsetCommit needs READ on the group and on the topic (the verify grant's READ on
# the target topics), DescribeGroups (active members?) DESCRIBE; the sink keeps the offset map and the checkpoints
# topic (it creates, writes and reads them back).
SYNC_SOURCE_GROUP_OPERATIONS = ("DESCRIBE",)
SYNC_TARGET_GROUP_OPERATIONS = ("READ", "DESCRIBE")
SYNC_TARGET_TOPIC_OPERATIONS = ("READ",)  # on the mirrored target topics: held by VERIFY_TOPIC_OPERATIONS
SYNC_OWN_TOPIC_OPERATIONS = ("CREATE", "DESCRIBE", "WRITE", "READ")
MM2_OWN_TOPIC = "MirrorMaker 2's own internal topic"


@dataclass(frozen=True)
class Unresolved:
    """An include pattern no binding can express within the privilege rule, and why."""

    pattern: str
    reason: str
    operations: tuple[str, ...] = ()  # what each topic it selects needs, granted by name (LITERAL) once resolved


REGEX = "is a regex, which an ACL cannot express"
COVERS_RESERVED = "would be a PREFIXED grant on {name!r}, which also covers internal or reserved topics"
SPLIT_NAMES = "is renamed so that its target names share no prefix (the rename puts text after the topic)"


class NotPlanned(LookupError):
    """A need asked of a plan that does not hold it: a bug of ours (render would never grant it)."""


@dataclass(frozen=True)
class Need:
    """``operation`` on the ``resource_type`` resources ``names``, as the plan grants it: ``grants[i]`` is the plan's
    binding that covers ``names[i]``, or a LITERAL one for a topic only an unresolved include pattern selects. Made by
    :meth:`AclPlan.need` alone."""

    operation: str
    resource_type: str
    names: tuple[str, ...]
    grants: tuple[Acl, ...]

    def grant_for(self, name: str) -> Acl:
        return self.grants[self.names.index(name)]

    @property
    def acls(self) -> list[Acl]:
        """The grants, once each, in the order of the names."""
        return list(dict.fromkeys(self.grants))


@dataclass
class AclPlan:
    """The bindings one cluster needs, plus include patterns only pre-flight can turn into topic names."""

    side: str
    cluster: Cluster
    principal: str
    bindings: list[Acl] = field(default_factory=list)
    unresolved: list[Unresolved] = field(default_factory=list)
    own_topics: dict[str, str] = field(default_factory=dict)  # its own internal topics (LITERAL) -> what, in words
    # Needed only where the brokers are older than Kafka 2.8 (KIP-679: the idempotent producer needs IDEMPOTENT_WRITE
    # on the cluster), which render cannot know: never rendered; pre-flight asks the brokers' line and names them.
    older_brokers: list[Acl] = field(default_factory=list)
    topic_pieces: tuple[str, ...] = ("", "")  # a source topic's name on this side is topic.join(topic_pieces)
    notes: list[str] = field(default_factory=list)  # why grants beyond the topics' exist (apply-acls.sh comments)
    owner: str = ""  # the mirror the grants belong to (its group prefix): Ranger policies are named after it

    def need(self, operation: str, resource_type: str, names: Iterable[str]) -> Need:
        """The plan's grant of ``operation`` on each of ``names``; :class:`NotPlanned` when the plan holds none."""
        names = tuple(names)
        grants = tuple(self._grant(operation, resource_type, name) for name in names)
        return Need(operation, resource_type, names, grants)

    def _grant(self, operation: str, resource_type: str, name: str) -> Acl:
        for binding in (*self.bindings, *self.older_brokers):
            if binding.operation == operation and binding.covers(resource_type, name):
                return binding
        source = _source_name(name, self.topic_pieces) if resource_type == "TOPIC" else None
        if source is not None and any(
            operation in item.operations and _compiled(item.pattern).fullmatch(source) for item in self.unresolved
        ):
            return Acl(principal=self.principal, operation=operation, resource_type="TOPIC", resource_name=name)
        raise NotPlanned(f"the {self.side} ACL plan grants {self.principal} no {operation} on {resource_type} {name}")

    def allow_own_topic(self, operations: tuple[str, ...], name: str, what: str = MM2_OWN_TOPIC) -> None:
        """Grant on an internal topic the identity itself keeps (MirrorMaker 2's; the offset map and checkpoints
        topics of ``mirror.groups``): LITERAL, by its name; ``what`` says whose it is (the MANIFEST's words)."""
        self.own_topics[name] = what
        self.allow(operations, "TOPIC", name, "LITERAL")

    def allow(self, operations: tuple[str, ...], resource_type: str, name: str, pattern: str) -> None:
        self.bindings.extend(
            Acl(
                principal=self.principal,
                operation=op,
                resource_type=resource_type,
                resource_name=name,
                pattern_type=pattern,
            )
            for op in operations
        )

    def to_json(self) -> str:
        return json_text([binding.to_dict() for binding in self.bindings])


@functools.cache
def _compiled(pattern: str) -> re.Pattern[str]:
    return javaregex.compile_java(pattern)


def _source_name(name: str, pieces: tuple[str, ...]) -> str | None:
    """The source topic named ``name`` on a side whose names are ``topic.join(pieces)``, or None."""
    count, fixed = len(pieces) - 1, sum(map(len, pieces))
    length, rest = divmod(len(name) - fixed, count) if count else (0, 1)
    topic = name[len(pieces[0]) : len(pieces[0]) + length]
    return topic if not rest and length > 0 and topic.join(pieces) == name else None


def spark_group(profile: Profile) -> str:
    """A consumer group id shaped like those Spark's Kafka source uses (``<groupIdPrefix>-<UUID>-<n>-driver-0``, its
    UUID new at every start): a grant that allows it allows the real ones, which a LITERAL grant on one name cannot.
    The one sample pre-flight asks the brokers about and the audit evaluates, the same for a profile."""
    location = str(profile.mirror.checkpoint_location)
    sample = uuid.uuid5(uuid.NAMESPACE_URL, f"{profile.group_prefix}/{location}")
    return f"{profile.group_prefix}-{sample}-{zlib.crc32(location.encode()) % 10**9}-driver-0"


def transactional_ids(profile: Profile, topics: Iterable[str]) -> list[str]:
    """exactly_once: sample names of the sink's transactional ids and position groups (docs/exactly-once.md), all
    under ``Profile.transactional_prefix``: a producer per partition's id and group ``<topic>-<partition>`` (for
    partition 0 of each source topic), a producer per task's id ``task#<job_key>#<i>`` (task 0) and a topic's position group
    ``topic#<topic>``."""
    prefix = profile.transactional_prefix
    names = [f"{prefix}{topic}-0" for topic in topics]
    task = f"{prefix}task#{profile.job_key}#0"
    return [*names, task, *(f"{prefix}topic#{topic}" for topic in topics)] if names else []


def kafka_principal(cluster: Cluster) -> str:
    """The principal the cluster's authorizer sees for the mirroring identity (:attr:`Cluster.kafka_principal`)."""
    return cluster.kafka_principal


def _grant(
    plan: AclPlan, piece: str, kind: str, name: str, operations: tuple[str, ...], reserved: tuple[str, ...] = ()
) -> None:
    """Grant on one include pattern's topics within the rule: ``name`` is the topic (literal) or prefix (prefix)."""
    if kind == "literal":
        plan.allow(operations, "TOPIC", name, "LITERAL")
    elif name == "":  # every topic: validate allows it only with mirror.topics.grant_all_topics
        plan.allow(operations, "TOPIC", "*", "LITERAL")
    elif topics.prefix_covers_reserved(name, reserved):
        plan.unresolved.append(Unresolved(piece, COVERS_RESERVED.format(name=name), operations))
    else:
        plan.allow(operations, "TOPIC", name, "PREFIXED")


def _source_topics(plan: AclPlan, profile: Profile, operations: tuple[str, ...]) -> AclPlan:
    for piece in profile.selection().include:
        resource = classify(piece)
        if resource.kind == "regex":
            plan.unresolved.append(Unresolved(piece, REGEX, operations))
        else:
            _grant(plan, piece, resource.kind, resource.value, operations)
    return plan


def _target_topics(plan: AclPlan, profile: Profile, operations: tuple[str, ...]) -> AclPlan:
    prefix_keeps_prefix = profile.target_topic_pieces[-1] == ""  # {topic} is last in the rename template
    plan.topic_pieces = tuple(profile.target_topic_pieces)
    for piece in profile.selection().include:
        resource = classify(piece)
        if resource.kind == "regex":
            plan.unresolved.append(Unresolved(piece, REGEX, operations))
        elif resource.kind == "prefix" and not prefix_keeps_prefix:
            plan.unresolved.append(Unresolved(piece, SPLIT_NAMES, operations))
        elif resource.kind == "prefix" and resource.value == "" and profile.mirror.rename.rule == "identity":
            _grant(plan, piece, "prefix", "", operations)
        else:  # a literal's target name, or a prefix's target prefix (never empty under a renaming rule)
            name = profile.target_topic(resource.value)
            _grant(plan, piece, resource.kind, name, operations, profile.mm2_target_topics)
    return plan


class PrivilegeRuleBroken(RuntimeError):
    """A plan render made breaks the privilege rule: a bug of ours (exit 3), never written to a file."""


def checked(plan: AclPlan, profile: Profile) -> AclPlan:
    """``plan`` when every binding keeps the privilege rule (:func:`binding_problems`), else refused."""
    if problems := binding_problems(plan, profile):
        raise PrivilegeRuleBroken(f"the {plan.side} ACL plan breaks the privilege rule: " + "; ".join(problems))
    return plan


def binding_problems(plan: AclPlan, profile: Profile) -> list[str]:
    """The privilege rule as code: why a binding of ``plan`` goes beyond what the profile's topics and groups need
    (none for a plan render made). Asked by render before it writes, and by the property tests of every plan."""
    problems = []
    all_topics = profile.mirror.topics.grant_all_topics
    reserved = profile.mm2_target_topics if plan.side == "target" else ()
    for acl in (*plan.bindings, *plan.older_brokers):
        where = f"{acl.operation} on {acl.resource_type} {acl.resource_name!r} ({acl.pattern_type})"
        if "*" in acl.principal or acl.principal != plan.principal:
            problems.append(f"{where} is granted to {acl.principal}, not to the mirror's own principal")
        if acl.resource_type != "TOPIC" and "*" in acl.resource_name:
            problems.append(f"{where} names '*'")
        if acl.resource_type == "GROUP" and (why := group_binding_problem(acl, plan, profile)):
            problems.append(f"{where} {why}")
        if acl.resource_type != "TOPIC":
            continue
        if acl.pattern_type == "LITERAL" and acl.resource_name == "*":
            if not all_topics:
                problems.append(f"{where} covers every topic, and {ALL_TOPICS_KEY} is not set")
        elif acl.pattern_type == "LITERAL" and acl.resource_name in plan.own_topics:
            continue
        elif acl.pattern_type == "LITERAL" and topics.reserved(acl.resource_name):
            problems.append(f"{where} names an internal or reserved topic")
        elif acl.pattern_type == "PREFIXED" and topics.prefix_covers_reserved(acl.resource_name, reserved):
            problems.append(f"{where} covers internal or reserved topics")
    return problems


def source_acls(profile: Profile) -> AclPlan:
    plan = _source_topics(
        AclPlan("source", profile.source, kafka_principal(profile.source), owner=profile.group_prefix),
        profile,
        SOURCE_TOPIC_OPERATIONS + shape_source_operations(profile),
    )
    plan.allow(("READ",), "GROUP", profile.own_groups, "PREFIXED")
    plan.notes.extend(filter(None, [shape_note("source", profile)]))
    return checked(group_sync_source(plan, profile), profile)


def target_acls(profile: Profile) -> AclPlan:
    """With exactly_once the READ grants also serve the sink: it commits each source partition's position to a
    group named ``<transactional prefix>-eos-...`` for partition 0 of the target topic (docs/exactly-once.md), and
    its transactional ids need WRITE and DESCRIBE on that prefix. With the idempotent producer, brokers before Kafka
    2.8 also need IDEMPOTENT_WRITE on the cluster (``AclPlan.older_brokers``: named by pre-flight, not rendered)."""
    plan = _target_topics(
        AclPlan("target", profile.target, kafka_principal(profile.target), owner=profile.group_prefix),
        profile,
        TARGET_TOPIC_OPERATIONS + VERIFY_TOPIC_OPERATIONS + shape_target_operations(profile),
    )
    plan.notes.extend(filter(None, [shape_note("target", profile)]))
    plan.allow(("READ",), "GROUP", profile.own_groups, "PREFIXED")
    if profile.mirror.delivery.exactly_once:
        plan.allow(TRANSACTIONAL_ID_OPERATIONS, "TRANSACTIONAL_ID", profile.transactional_prefix, "PREFIXED")
    if profile.mirror.delivery.enable_idempotence:
        plan.older_brokers.append(
            Acl(
                principal=plan.principal,
                operation="IDEMPOTENT_WRITE",
                resource_type="CLUSTER",
                resource_name=CLUSTER_NAME,
            )
        )
    return checked(heartbeats_target(group_sync_target(plan, profile), profile), profile)


def mm2_own_topics(profile: Profile, side: str, offset_syncs: bool) -> list[str]:
    """MirrorMaker 2's internal topics on ``side`` (:func:`mm2_topics.mm2_topics`), the offset-syncs topic alone or
    all others: the copy of the source's heartbeats is written as a mirrored topic, not one of its own."""
    source, target, rename = profile.source.alias, profile.target.alias, profile.mirror.rename
    found = mm2_topics.mm2_topics(source, target, rename.mm2_separator, profile.mirror.mm2.properties)
    return [
        topic.name
        for topic in found
        if topic.side == side and topic.kind != "copied heartbeats" and (topic.kind == "offset-syncs") == offset_syncs
    ]


def _offset_syncs(plan: AclPlan, profile: Profile) -> AclPlan:
    """MirrorMaker 2's offset-syncs topic, on the side ``offset-syncs.topic.location`` names (source by default)."""
    for name in mm2_own_topics(profile, plan.side, offset_syncs=True):
        plan.allow_own_topic(MM2_INTERNAL_TOPIC_OPERATIONS, name)
    return plan


def mm2_source_acls(profile: Profile) -> AclPlan:
    """MirrorMaker 2 on the source: read the selected topics and their configs, and its offset-syncs topic."""
    plan = _source_topics(
        AclPlan("source", profile.source, kafka_principal(profile.source)), profile, MM2_SOURCE_TOPIC_OPERATIONS
    )
    return checked(_offset_syncs(plan, profile), profile)


def mm2_target_acls(profile: Profile) -> AclPlan:
    """MirrorMaker 2 on the target (dedicated mode): create and write the mirrored topics and copy their
    configs; its heartbeats and checkpoints topics; the Connect worker's configs/offsets/status topics and
    its group ``<source alias>-mm2``."""
    plan = _target_topics(
        AclPlan("target", profile.target, kafka_principal(profile.target)), profile, MM2_TARGET_TOPIC_OPERATIONS
    )
    for name in mm2_own_topics(profile, "target", offset_syncs=False):
        plan.allow_own_topic(MM2_INTERNAL_TOPIC_OPERATIONS, name)
    plan.allow(("READ", "DESCRIBE"), "GROUP", mm2_group(profile), "LITERAL")
    return checked(_offset_syncs(plan, profile), profile)


# ---- mirror.groups: the synced groups' offsets (issue 28) ------------------------------------------------------------
def _synced_groups(plan: AclPlan, profile: Profile, operations: tuple[str, ...]) -> AclPlan:
    """``operations`` on each group include piece as written: LITERAL a group id, PREFIXED a prefix (validate
    refused every other piece: a regex, every group). The group ids are the same on both sides."""
    for resource in profile.mirror.groups.selection().resources():
        plan.allow(operations, "GROUP", resource.value, resource.pattern_type)
    return plan


def group_sync_source(plan: AclPlan, profile: Profile) -> AclPlan:
    """With ``mirror.groups``: DESCRIBE on the synced groups, to fetch their committed offsets and see their members."""
    if not profile.mirror.groups.enabled:
        return plan
    plan.notes.append("Groups: DESCRIBE on the consumer groups mirror.groups syncs (their committed offsets).")
    return _synced_groups(plan, profile, SYNC_SOURCE_GROUP_OPERATIONS)


def sync_topics(profile: Profile) -> dict[str, str]:
    """The internal topics the sink keeps on the target with ``mirror.groups`` -> what each is, in words."""
    alias = profile.source.alias
    return {
        topics.offset_map_topic(alias): "the mirror's own internal topic: its offset map",
        topics.checkpoints_topic(alias): "the mirror's own internal topic: checkpoints in MirrorMaker 2's format",
    }


def group_sync_target(plan: AclPlan, profile: Profile) -> AclPlan:
    """With ``mirror.groups``: READ (commit) and DESCRIBE (members) on the synced groups; READ on the target topics,
    which the verify grant holds already; the offset map and checkpoints topics, LITERAL."""
    if not profile.mirror.groups.enabled:
        return plan
    plan.notes.append(
        "Groups: READ + DESCRIBE on the consumer groups mirror.groups syncs (their translated offsets are committed "
        "here; the commits also need READ on the target topics, granted above), and the offset map and checkpoints "
        "topics the mirror keeps."
    )
    _synced_groups(plan, profile, SYNC_TARGET_GROUP_OPERATIONS)
    for name, what in sync_topics(profile).items():
        plan.allow_own_topic(SYNC_OWN_TOPIC_OPERATIONS, name, what)
    return plan


def group_samples(profile: Profile) -> list[str]:
    """The synced group ids pre-flight asks the brokers about and the audit evaluates: each literal include, and for
    each prefix a name under it that a LITERAL grant on the prefix alone would not cover (no false pass)."""
    return [
        resource.value if resource.kind == "literal" else f"{resource.value}secure-mirror-preflight"
        for resource in profile.mirror.groups.selection().resources()
    ]


def group_binding_problem(acl: Acl, plan: AclPlan, profile: Profile) -> str | None:
    """Why a GROUP binding goes beyond the groups the profile needs: the mirror's own (its group prefix, MirrorMaker
    2's ``<alias>-mm2``) or, with ``mirror.groups``, a group include piece as written; never every group."""
    if acl.pattern_type == "PREFIXED" and not acl.resource_name:
        return "covers every group"
    if (acl.resource_name, acl.pattern_type) in ((profile.own_groups, "PREFIXED"), (mm2_group(profile), "LITERAL")):
        return None
    synced = {(r.value, r.pattern_type) for r in profile.mirror.groups.selection().resources()}
    if profile.mirror.groups.enabled and (acl.resource_name, acl.pattern_type) in synced:
        return None
    return "names a group that is neither the mirror's own nor one mirror.groups.include names"


def mm2_group(profile: Profile) -> str:
    """MirrorMaker 2's Connect worker group in dedicated mode."""
    return f"{profile.source.alias}-mm2"


templating.register_filter("acl_arguments", lambda acl: kafka_acls_arguments(acl, sh))


def apply_acls_script(plans: list[AclPlan], out_dir: Path) -> str:
    """``apply-acls.sh`` granting the job's ``plans`` (its source and target plans)."""
    return templating.render(
        "templates/apply-acls.sh.j2",
        plans=plans,
        out_dir=str(out_dir),
        kerberos=any(isinstance(plan.cluster.sasl, GssapiSasl) for plan in plans),
    )


# ---- the grants in words (MANIFEST.md, manifest.json) ----------------------------------------------------------
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


def all_plans(profile: Profile) -> dict[str, AclPlan]:
    """Every plan render writes, by its file under ``acls/``."""
    return {
        "source.acls.json": source_acls(profile),
        "target.acls.json": target_acls(profile),
        "mm2-source.acls.json": mm2_source_acls(profile),
        "mm2-target.acls.json": mm2_target_acls(profile),
    }


# ---- mirror.heartbeats: MirrorMaker 2's heartbeats topic on the target (docs/heartbeats.md) ---------------------------
HEARTBEAT_TOPIC_OPERATIONS = ("WRITE", "DESCRIBE", "CREATE", "READ")  # the job writes and creates; lag and verify read


def heartbeats_target(plan: AclPlan, profile: Profile) -> AclPlan:
    """With heartbeats on: the target's ``heartbeats`` topic, LITERAL and by that name alone (an own topic of the
    identity; the reserved name is granted nowhere else): the job's driver creates it and writes to it, lag and
    verify read the newest heartbeat back."""
    if not profile.mirror.heartbeats.enabled:
        return plan
    plan.notes.append(
        "Heartbeats: WRITE + DESCRIBE + CREATE + READ on the heartbeats topic, LITERAL (MirrorMaker 2's format; the "
        "job writes one every mirror.heartbeats.interval_seconds while the flow is alive, lag and verify read it)."
    )
    plan.allow_own_topic(
        HEARTBEAT_TOPIC_OPERATIONS, topics.HEARTBEATS_TOPIC, "MirrorMaker 2's heartbeats topic (docs/heartbeats.md)"
    )
    return plan
