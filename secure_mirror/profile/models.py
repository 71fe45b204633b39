"""The profile: two clusters and a mirror, validated once and then the only input of every renderer. Each section's
model lives with its kind (:mod:`.cluster`, :mod:`.security`, :mod:`.mirror`, :mod:`.runtime`); here the whole, with
the rules that span sections."""

from __future__ import annotations

import dataclasses
import hashlib
from typing import Literal

from pydantic import ValidationInfo, field_validator, model_validator

from secure_mirror.profile import cycles, groups, mm2_topics, topics
from secure_mirror.profile.base import Strict
from secure_mirror.profile.cluster import Cluster, Side, ranger_pattern_problem
from secure_mirror.profile.fields import Problem
from secure_mirror.profile.mirror import Mirror
from secure_mirror.profile.policy import shorten
from secure_mirror.profile.runtime import Hadoop, delegation_token_problem
from secure_mirror.profile.security import Kerberos

ALL_TOPICS_KEY = "mirror.topics.grant_all_topics"
# What the mirror's Java consumers of the source (the job's source, MirrorMaker 2's) get unless source.client_options
# sets it; lag and verify read through librdkafka, whose socket.receive.buffer.bytes already leaves it to the OS.
# receive.buffer.bytes -1: the OS sizes the socket's receive buffer and grows it with the connection, where Kafka's
# consumers fix 64 KiB. Kafka's MirrorMaker documentation asks a mirror's consumer for a large socket buffer (between
# data centres, 64 KiB caps a connection at 64 KiB a round trip); and where one segment is as large as what that
# buffer can take (loopback's 64 KiB MTU), the receiver's window stays below one segment, the broker sends one segment
# per 200 ms persist timer, and a 50 MiB fetch response takes the whole request timeout (benchmarks/NOTES.md
# section 17).
SOURCE_JAVA_CONSUMER_DEFAULTS = {"receive.buffer.bytes": "-1"}


def selection_problems(profile: Profile) -> list[str]:
    """Why the selection and rename cannot be mirrored safely, one sentence per include pattern: a pattern naming or
    selecting only internal or reserved topics; "every topic" (``.*``) without :data:`ALL_TOPICS_KEY`; a target
    name Kafka would refuse or that is reserved (:func:`topics.target_name_problem`), checked for every literal topic
    and, for a prefix or regex, for the shortest name it can give (one more character), which is the longest
    alias/prefix combination's least."""
    rename = f"rename {profile.mirror.rename.rule}"
    problems = []
    for piece in profile.selection().include:
        resource = topics.classify(piece)
        shown = shorten(piece, 80)
        if resource.kind == "literal" and (why := topics.reserved(resource.value)):
            problems.append(f"{shown} names a topic that is never mirrored ({why}); remove it")
            continue
        if resource.kind == "prefix" and resource.value and topics.reserved(resource.value + "x"):
            problems.append(
                f"{shown} selects only topics that are never mirrored ({topics.reserved(resource.value)}); remove it"
            )
            continue
        if resource.kind == "prefix" and not resource.value and not profile.mirror.topics.grant_all_topics:
            problems.append(
                f"{shown} selects every topic, and its ACLs would grant on TOPIC '*', which covers Kafka's internal "
                "topics (__consumer_offsets: every group's offsets; __transaction_state) too; list the topics or "
                f"prefixes to mirror, or set {ALL_TOPICS_KEY}: true to grant on '*' knowingly"
            )
        example = (
            resource.value
            if resource.kind == "literal"
            else (resource.value if resource.kind == "prefix" else "") + "x"
        )
        target = profile.target_topic(example)
        if (problem := topics.target_name_problem(target)) is not None:
            what = f"{shown} is mirrored as" if resource.kind == "literal" else f"{shown} can be mirrored as short as"
            problems.append(
                f"{what} {shorten(target, 80)} ({rename}), which {problem}; shorten the aliases or the prefix, "
                "or choose a rename that gives a legal, unreserved name"
            )
    return problems


class Profile(Strict):
    """A whole mirror: how to reach and authenticate to both clusters, and what flows between them."""

    version: Literal[1]
    kerberos: Kerberos | None = None
    source: Cluster
    target: Cluster
    mirror: Mirror
    hadoop: Hadoop | None = None

    @field_validator("source", "target")
    @classmethod
    def _realm_declared(cls, cluster: Cluster, info: ValidationInfo) -> Cluster:
        kerberos = info.data.get("kerberos")
        if cluster.realm and kerberos and kerberos.realms and cluster.realm not in kerberos.realms:
            raise Problem(
                "sasl.principal", f"realm {cluster.realm} is not declared under kerberos.realms; add it there"
            )
        if info.field_name == "target" and "source" in info.data and cluster.alias == info.data["source"].alias:
            raise Problem("alias", "source and target need different aliases (MirrorMaker 2 names clusters by alias)")
        return cluster

    @model_validator(mode="after")
    def _names_and_grants(self) -> Profile:
        """Every topic the selection can name is one the mirror may read, and every target name one it may write
        (:func:`selection_problems`); all problems are told at once."""
        if problems := selection_problems(self):
            raise Problem("mirror.topics.include", "; ".join(problems))
        return self

    @model_validator(mode="after")
    def _group_topics_fit(self) -> Profile:
        """With ``mirror.groups`` the target gets the offset map and checkpoints topics, named after the source's
        alias: Kafka must accept the names (the alias's characters are legal; its length may not be)."""
        if not self.mirror.groups.enabled:
            return self
        names = (topics.offset_map_topic(self.source.alias), topics.checkpoints_topic(self.source.alias))
        if long := [name for name in names if len(name) > topics.MAX_TOPIC_LENGTH]:
            raise Problem(
                "source.alias",
                f"with mirror.groups the target gets the topic {shorten(long[0], 80)}, over Kafka's limit of "
                f"{topics.MAX_TOPIC_LENGTH} characters; shorten source.alias",
            )
        return self

    @model_validator(mode="after")
    def _ranger_names(self) -> Profile:
        """A side whose grants are Ranger policies gets its synced groups by name: Ranger would read '?' or a macro
        in one as a pattern (``cluster.ranger_pattern_problem``), so such a group is refused here, with the fix."""
        sides = [side for side, cluster in self.clusters().items() if cluster.acls.ranger]
        if not sides or not self.mirror.groups.enabled:
            return self
        for resource in self.mirror.groups.selection().resources():
            if found := ranger_pattern_problem(resource.value):
                raise Problem(
                    "mirror.groups.include",
                    f"the group {resource.value!r} contains {found}, which Ranger reads as a pattern and cannot "
                    f"escape ({' and '.join(f'{side}.acls.format' for side in sides)} names ranger); leave the group "
                    "out, or use Kafka's ACLs for that side",
                )
        return self

    @model_validator(mode="after")
    def _mm2_topics_fit(self) -> Profile:
        """Kafka must accept every topic name MirrorMaker 2 derives from the aliases (:mod:`.mm2_topics`)."""
        source, target, properties = self.source.alias, self.target.alias, self.mirror.mm2.properties
        if problems := mm2_topics.mm2_topic_problems(source, target, self.mirror.rename.mm2_separator, properties):
            (field, reason), *more = problems
            raise Problem(field, reason + "".join(f"; {other}: {why}" for other, why in more))
        return self

    @model_validator(mode="after")
    def _token_mode_fits(self) -> Profile:
        """delegation_token needs what Spark's token support needs; every problem is reported with its fix."""
        problems = [
            (f"{side}.executor_auth", reason)
            for side, cluster in self.clusters().items()
            if cluster.uses_delegation_token
            and (reason := delegation_token_problem(cluster, self.mirror.spark, self.hadoop))
        ]
        if problems:  # one error per model: the other side's problem, if any, is named in the same sentence
            (field, reason), *more = problems
            also = "".join(f"; {other}: {why}" for other, why in more)
            raise Problem(field, reason + also)
        return self

    @model_validator(mode="after")
    def _isolation_level_in_one_place(self) -> Profile:
        """The source's isolation level is ``mirror.source_isolation_level`` alone: an ``isolation.level`` among the
        source's client options (the job's, and MirrorMaker 2's as ``<alias>.consumer.isolation.level``) or MirrorMaker
        2's source consumer properties would make the job, MirrorMaker 2, lag and verify read different records."""
        mm2_consumer = f"{self.source.alias}.consumer.isolation.level".lower()
        found = [
            f"source.client_options.{k}" for k in self.source.client_options if k.lower().endswith("isolation.level")
        ]
        found += [f"mirror.mm2.properties.{k}" for k in self.mirror.mm2.properties if k.lower() == mm2_consumer]
        if found:
            raise Problem(
                found[0],
                "the source's isolation level is mirror.source_isolation_level (the job, MirrorMaker 2, lag and verify "
                "read it from there); remove this key and set mirror.source_isolation_level (read_committed is the "
                "default)",
            )
        return self

    def clusters(self) -> dict[Side, Cluster]:
        return {"source": self.source, "target": self.target}

    def cluster(self, side: Side) -> Cluster:
        """The cluster on ``side`` ("source" or "target")."""
        return self.source if side == "source" else self.target

    @property
    def mechanisms(self) -> list[str | None]:
        """Each side's SASL mechanism (None: no SASL), for what a client of both sides must support."""
        return [cluster.mechanism for cluster in self.clusters().values()]

    @property
    def token_sides(self) -> list[Side]:
        """The sides ("source", "target") whose executors log in with a Kafka delegation token (``executor_auth``)."""
        return [side for side, cluster in self.clusters().items() if cluster.uses_delegation_token]

    @property
    def uses_delegation_tokens(self) -> bool:
        """True when some side's executors log in with a Kafka delegation token (``executor_auth``)."""
        return bool(self.token_sides)

    @property
    def uses_kerberos(self) -> bool:
        return self.hadoop is not None or any(cluster.mechanism == "GSSAPI" for cluster in (self.source, self.target))

    def selection(self) -> topics.TopicSelection:
        """The topics mirrored: ``mirror.topics``, less those the rename rule says came from the target
        (:mod:`~secure_mirror.profile.cycles`, MirrorMaker 2's ``isCycle``)."""
        chosen, rename = self.mirror.topics.selection(), self.mirror.rename
        cycle = cycles.cycle_pattern(rename.template_text, self.source.alias, self.target.alias, rename.mm2_separator)
        return chosen if cycle is None else dataclasses.replace(chosen, exclude=(*chosen.exclude, cycle))

    @property
    def target_topic_pieces(self) -> list[str]:
        """The target name around the source topic: ``alias_prefix`` -> ``["src.", ""]``; join them with the topic
        (the job builds its Spark expression from them, the ACLs see whether the topic comes last)."""
        marker = "\0"  # no alias or template holds it (the input policy refuses control characters)
        return self.mirror.rename.template_text.format(
            topic=marker, source_alias=self.source.alias, target_alias=self.target.alias
        ).split(marker)

    def target_topic(self, topic: str) -> str:
        """The name ``topic`` gets on the target cluster under the profile's rename rule."""
        return topic.join(self.target_topic_pieces)

    @property
    def mm2_target_topics(self) -> tuple[str, ...]:
        """MirrorMaker 2's own topics on the target named after the source alias (its checkpoints and the source's
        heartbeats), which a prefix grant on the target must not cover (:func:`topics.prefix_covers_reserved`)."""
        source, target, rename = self.source.alias, self.target.alias, self.mirror.rename
        found = mm2_topics.mm2_topics(source, target, rename.mm2_separator, self.mirror.mm2.properties)
        return tuple(topic.name for topic in found if topic.kind in ("checkpoints", "copied heartbeats"))

    @property
    def source_java_consumer_defaults(self) -> dict[str, str]:
        """:data:`SOURCE_JAVA_CONSUMER_DEFAULTS` but the keys ``source.client_options`` sets, whose values win."""
        return {k: v for k, v in SOURCE_JAVA_CONSUMER_DEFAULTS.items() if k not in self.source.client_options}

    @property
    def group_prefix(self) -> str:
        """The prefix of every consumer group the mirror uses (Spark's ``groupIdPrefix``; the ACLs grant READ on it)."""
        return groups.mirror_group_prefix(self.source.alias, self.target.alias)

    @property
    def own_groups(self) -> str:
        """The prefix render grants READ on for the mirror's own groups: the group prefix and the '-' every group id of
        the mirror carries after it (Spark's ``<prefix>-<uuid>-...``, exactly_once's ``<prefix>-eos-...``,
        ``<prefix>-inspect``). Without the '-' the grant of a mirror ``a`` -> ``b`` would also cover the groups of
        ``a`` -> ``bc`` (``secure-mirror-a-bc-...``), exactly_once's committed positions among them."""
        return f"{self.group_prefix}-"

    @property
    def transactional_prefix(self) -> str:
        """With exactly_once, the start of each source partition's transactional id, which is also the name of the
        target consumer group holding that partition's position: the sink appends ``<topic>-<partition>``
        (docs/exactly-once.md). Under the group prefix, so the group grant covers the groups."""
        return f"{self.group_prefix}-eos-"

    @property
    def job_key(self) -> str:
        """Eight hex digits telling this mirror job from others between the same two clusters (from its checkpoint
        location, the query's identity): exactly_once's per-task transactional ids carry it
        (``<transactional_prefix>task#<job_key>#<task>``), so two jobs never fence each other."""
        return hashlib.sha256(self.mirror.checkpoint_location.encode()).hexdigest()[:8]
