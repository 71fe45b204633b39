"""The Spark job's ACL plans: READ+DESCRIBE on the source topics (and READ on Spark's consumer groups),
WRITE+DESCRIBE+CREATE on the target topics, and READ on the target topics and the group prefix there so that `verify`
can read back what was written. With ``mirror.groups`` (:func:`group_sync_source`, :func:`group_sync_target`):
DESCRIBE on the synced groups on the source, READ+DESCRIBE on them on the target, and the offset map and checkpoints
topics on the target. ``mirror.topic_shape`` adds its operations on the topics (``topic_shape``).

Pre-flight's checks and the ``--as-admin`` audit ask the brokers about the sample names made here (:func:`spark_group`,
:func:`transactional_ids`, :func:`group_samples`)."""

from __future__ import annotations

import uuid
import zlib
from collections.abc import Iterable

from secure_mirror.kafka.acl import CLUSTER_NAME, Acl
from secure_mirror.profile import topics
from secure_mirror.profile.models import Profile
from secure_mirror.render.acls.plan import AclPlan, checked, source_topic_grants, target_topic_grants
from secure_mirror.render.acls.topic_shape import shape_note, shape_source_operations, shape_target_operations

SOURCE_TOPIC_OPERATIONS = ("READ", "DESCRIBE")
TARGET_TOPIC_OPERATIONS = ("WRITE", "DESCRIBE", "CREATE")
VERIFY_TOPIC_OPERATIONS = ("READ",)  # on the target: verify reads back what the job wrote
TRANSACTIONAL_ID_OPERATIONS = ("WRITE", "DESCRIBE")  # exactly_once: the sink's transactional producers
# mirror.groups (issue 28). Source: OffsetFetch and DescribeGroups need DESCRIBE on the group (DESCRIBE on the topics
# the source grant holds). Target: OffsetCommit needs READ on the group and on the topic (the verify grant's READ on
# the target topics), DescribeGroups (active members?) DESCRIBE; the sink keeps the offset map and the checkpoints
# topic (it creates, writes and reads them back).
SYNC_SOURCE_GROUP_OPERATIONS = ("DESCRIBE",)
SYNC_TARGET_GROUP_OPERATIONS = ("READ", "DESCRIBE")
SYNC_TARGET_TOPIC_OPERATIONS = ("READ",)  # on the mirrored target topics: held by VERIFY_TOPIC_OPERATIONS
SYNC_OWN_TOPIC_OPERATIONS = ("CREATE", "DESCRIBE", "WRITE", "READ")


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
    partition 0 of each source topic), a producer per task's id ``task#<job_key>#<i>`` (task 0) and a topic's
    position group ``topic#<topic>``."""
    prefix = profile.transactional_prefix
    names = [f"{prefix}{topic}-0" for topic in topics]
    task = f"{prefix}task#{profile.job_key}#0"
    return [*names, task, *(f"{prefix}topic#{topic}" for topic in topics)] if names else []


def source_acls(profile: Profile) -> AclPlan:
    plan = source_topic_grants(
        AclPlan("source", profile.source, profile.source.kafka_principal, owner=profile.group_prefix),
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
    plan = target_topic_grants(
        AclPlan("target", profile.target, profile.target.kafka_principal, owner=profile.group_prefix),
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


# ---- mirror.heartbeats: MirrorMaker 2's heartbeats topic on the target (docs/heartbeats.md) -------------------------
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
