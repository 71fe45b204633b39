"""The ACLs the mirroring identities need: READ+DESCRIBE on the source topics (and READ on Spark's consumer
groups), WRITE+DESCRIBE+CREATE on the target topics, and READ on the target topics and the group prefix there
so that `verify` can read back what was written. MirrorMaker 2 (run from mm2/mm2.properties) gets its own
plans, rendered into separate files, so that the Spark job's identity is granted no more than the job needs.
Include patterns that are names or prefixes become LITERAL
or PREFIXED ACLs; a general regex cannot be an ACL, so it is listed for pre-flight to resolve into topic names."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from secure_mirror.kafka.acl import Acl, kafka_acls_arguments
from secure_mirror.profile.models import Cluster, GssapiSasl, Profile
from secure_mirror.profile.topics import TopicResource, classify
from secure_mirror.render import templating
from secure_mirror.render.encoders import json_text, sh

SOURCE_TOPIC_OPERATIONS = ("READ", "DESCRIBE")
TARGET_TOPIC_OPERATIONS = ("WRITE", "DESCRIBE", "CREATE")
VERIFY_TOPIC_OPERATIONS = ("READ",)  # on the target: verify reads back what the job wrote
TRANSACTIONAL_ID_OPERATIONS = ("WRITE", "DESCRIBE")  # exactly_once: the sink's transactional producers
# MirrorMaker 2 also reads the source topics' configs and copies them onto the target topics it creates.
MM2_SOURCE_TOPIC_OPERATIONS = SOURCE_TOPIC_OPERATIONS + ("DESCRIBE_CONFIGS",)
MM2_TARGET_TOPIC_OPERATIONS = TARGET_TOPIC_OPERATIONS + ("DESCRIBE_CONFIGS", "ALTER_CONFIGS")
# Its own topics: it creates them, writes and reads them back, and checks their cleanup policy.
MM2_INTERNAL_TOPIC_OPERATIONS = ("CREATE", "DESCRIBE", "DESCRIBE_CONFIGS", "READ", "WRITE")


@dataclass
class AclPlan:
    """The bindings one cluster needs, plus include patterns only pre-flight can turn into topic names."""

    side: str
    cluster: Cluster
    principal: str
    bindings: list[Acl] = field(default_factory=list)
    unresolved: list[str] = field(default_factory=list)

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


def kafka_principal(cluster: Cluster) -> str:
    """The principal the cluster's authorizer sees for the mirroring identity (:attr:`Cluster.kafka_principal`)."""
    return cluster.kafka_principal


def _grant(plan: AclPlan, resource: TopicResource, name: str, operations: tuple[str, ...]) -> None:
    if resource.kind == "literal":
        plan.allow(operations, "TOPIC", name, "LITERAL")
    elif name == "":
        plan.allow(operations, "TOPIC", "*", "LITERAL")
    else:
        plan.allow(operations, "TOPIC", name, "PREFIXED")


def _source_topics(plan: AclPlan, profile: Profile, operations: tuple[str, ...]) -> AclPlan:
    for piece in profile.selection().include:
        resource = classify(piece)
        if resource.kind == "regex":
            plan.unresolved.append(piece)
        else:
            _grant(plan, resource, resource.value, operations)
    return plan


def _target_topics(plan: AclPlan, profile: Profile, operations: tuple[str, ...]) -> AclPlan:
    prefix_keeps_prefix = profile.target_topic_pieces[-1] == ""  # {topic} is last in the rename template
    for piece in profile.selection().include:
        resource = classify(piece)
        if resource.kind == "regex" or (resource.kind == "prefix" and not prefix_keeps_prefix):
            plan.unresolved.append(piece)
        elif resource.kind == "prefix" and resource.value == "" and profile.mirror.rename.rule != "identity":
            _grant(plan, TopicResource("prefix", ""), profile.target_topic(""), operations)
        else:
            name = profile.target_topic(resource.value) if resource.value else ""
            _grant(plan, resource, name, operations)
    return plan


def source_acls(profile: Profile) -> AclPlan:
    plan = _source_topics(
        AclPlan("source", profile.source, kafka_principal(profile.source)), profile, SOURCE_TOPIC_OPERATIONS
    )
    plan.allow(("READ",), "GROUP", profile.group_prefix, "PREFIXED")
    return plan


def target_acls(profile: Profile) -> AclPlan:
    """With exactly_once the READ grants also serve the sink: it commits each source partition's position to a
    group named ``<transactional prefix>-eos-...`` for partition 0 of the target topic (docs/exactly-once.md), and
    its transactional ids need WRITE and DESCRIBE on that prefix."""
    plan = _target_topics(
        AclPlan("target", profile.target, kafka_principal(profile.target)),
        profile,
        TARGET_TOPIC_OPERATIONS + VERIFY_TOPIC_OPERATIONS,
    )
    plan.allow(("READ",), "GROUP", profile.group_prefix, "PREFIXED")
    if profile.mirror.delivery.exactly_once:
        plan.allow(TRANSACTIONAL_ID_OPERATIONS, "TRANSACTIONAL_ID", profile.transactional_prefix, "PREFIXED")
    return plan


def mm2_internal_separator(profile: Profile) -> str:
    """The separator in MirrorMaker 2's checkpoints and offset-syncs topic names (its replication policy's)."""
    from secure_mirror.render.mm2 import replication_policy

    return replication_policy(profile)[0].get("replication.policy.separator", ".")


def _offset_syncs(plan: AclPlan, profile: Profile) -> AclPlan:
    """MirrorMaker 2's offset-syncs topic, on the side ``offset-syncs.topic.location`` names (source by default)."""
    location = str(profile.mirror.mm2.properties.get("offset-syncs.topic.location", "source")).lower()
    if location == plan.side:
        sep = mm2_internal_separator(profile)
        plan.allow(
            MM2_INTERNAL_TOPIC_OPERATIONS,
            "TOPIC",
            f"mm2-offset-syncs{sep}{profile.target.alias}{sep}internal",
            "LITERAL",
        )
    return plan


def mm2_source_acls(profile: Profile) -> AclPlan:
    """MirrorMaker 2 on the source: read the selected topics and their configs, and its offset-syncs topic."""
    plan = _source_topics(
        AclPlan("source", profile.source, kafka_principal(profile.source)), profile, MM2_SOURCE_TOPIC_OPERATIONS
    )
    return _offset_syncs(plan, profile)


def mm2_target_acls(profile: Profile) -> AclPlan:
    """MirrorMaker 2 on the target (dedicated mode): create and write the mirrored topics and copy their
    configs; its heartbeats and checkpoints topics; the Connect worker's configs/offsets/status topics and
    its group ``<source alias>-mm2``."""
    plan = _target_topics(
        AclPlan("target", profile.target, kafka_principal(profile.target)), profile, MM2_TARGET_TOPIC_OPERATIONS
    )
    alias, sep = profile.source.alias, mm2_internal_separator(profile)
    internal = [
        "heartbeats",
        f"{alias}{sep}checkpoints{sep}internal",
        *(f"mm2-{kind}.{alias}.internal" for kind in ("configs", "offsets", "status")),
    ]
    for name in internal:
        plan.allow(MM2_INTERNAL_TOPIC_OPERATIONS, "TOPIC", name, "LITERAL")
    plan.allow(("READ", "DESCRIBE"), "GROUP", f"{alias}-mm2", "LITERAL")
    return _offset_syncs(plan, profile)


templating.register_filter("acl_arguments", lambda acl: kafka_acls_arguments(acl, sh))


def apply_acls_script(profile: Profile, out_dir: Path) -> str:
    plans = [source_acls(profile), target_acls(profile)]
    return templating.render(
        "templates/apply-acls.sh.j2",
        plans=plans,
        out_dir=str(out_dir),
        kerberos=any(isinstance(plan.cluster.sasl, GssapiSasl) for plan in plans),
    )
