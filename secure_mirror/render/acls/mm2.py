"""MirrorMaker 2's ACL plans (run from mm2/mm2.properties), rendered into files of their own so that the Spark job's
identity is granted no more than the job needs."""

from __future__ import annotations

from secure_mirror.profile import mm2_topics
from secure_mirror.profile.models import Profile
from secure_mirror.render.acls.job import SOURCE_TOPIC_OPERATIONS, TARGET_TOPIC_OPERATIONS
from secure_mirror.render.acls.plan import AclPlan, checked, mm2_group, source_topic_grants, target_topic_grants

# MirrorMaker 2 also reads the source topics' configs and copies them onto the target topics it creates.
MM2_SOURCE_TOPIC_OPERATIONS = SOURCE_TOPIC_OPERATIONS + ("DESCRIBE_CONFIGS",)
MM2_TARGET_TOPIC_OPERATIONS = TARGET_TOPIC_OPERATIONS + ("DESCRIBE_CONFIGS", "ALTER_CONFIGS")
# Its own topics: it creates them, writes and reads them back, and checks their cleanup policy.
MM2_INTERNAL_TOPIC_OPERATIONS = ("CREATE", "DESCRIBE", "DESCRIBE_CONFIGS", "READ", "WRITE")


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
    plan = source_topic_grants(
        AclPlan("source", profile.source, profile.source.kafka_principal), profile, MM2_SOURCE_TOPIC_OPERATIONS
    )
    return checked(_offset_syncs(plan, profile), profile)


def mm2_target_acls(profile: Profile) -> AclPlan:
    """MirrorMaker 2 on the target (dedicated mode): create and write the mirrored topics and copy their
    configs; its heartbeats and checkpoints topics; the Connect worker's configs/offsets/status topics and
    its group ``<source alias>-mm2``."""
    plan = target_topic_grants(
        AclPlan("target", profile.target, profile.target.kafka_principal), profile, MM2_TARGET_TOPIC_OPERATIONS
    )
    for name in mm2_own_topics(profile, "target", offset_syncs=False):
        plan.allow_own_topic(MM2_INTERNAL_TOPIC_OPERATIONS, name)
    plan.allow(("READ", "DESCRIBE"), "GROUP", mm2_group(profile), "LITERAL")
    return checked(_offset_syncs(plan, profile), profile)
