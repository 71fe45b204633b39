"""An identity's ACL plan on one cluster (:class:`AclPlan`) and the privilege rule every plan keeps.

The privilege rule (README, Security model; :func:`binding_problems` states it as code, and render refuses a plan that
breaks it): every binding names the mirror's own principal, never one holding '*'; a TOPIC binding covers only topics
the selection and rename can name: a LITERAL name is a selected topic (or its target name), a PREFIXED grant is an
include prefix (or its target prefix) that covers no internal or reserved topic (``topics.prefix_covers_reserved``), and
TOPIC '*' is rendered only when the profile sets ``mirror.topics.grant_all_topics``; a LITERAL grant on an internal
topic names one the identity itself keeps (``AclPlan.own_topics``: MirrorMaker 2's in its plans, the offset map and
checkpoints topics with ``mirror.groups``); a GROUP binding covers the mirror's own groups or the groups
``mirror.groups.include`` names (never every group). An include pattern that no binding can express within that rule (a
general regex, a prefix covering internal or reserved topics, a prefix whose target names share no prefix) gets no grant
here: pre-flight resolves it into the topic names that need LITERAL ACLs and says so, and the MANIFEST and apply-acls.sh
say why. :func:`source_topic_grants` and :func:`target_topic_grants` turn the selection into topic grants within the
rule, for the job's plans and MirrorMaker 2's.

What an identity needs on concrete resources is asked of its plan alone (:meth:`AclPlan.need`, which refuses what the
plan does not hold): pre-flight's checks and the ``--as-admin`` audit name their missing grants from it."""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable
from dataclasses import dataclass, field

from secure_mirror.kafka.acl import Acl
from secure_mirror.profile import javaregex, topics
from secure_mirror.profile.cluster import Cluster
from secure_mirror.profile.models import ALL_TOPICS_KEY, Profile
from secure_mirror.profile.topics import classify
from secure_mirror.render.encoders import json_text

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


def source_topic_grants(plan: AclPlan, profile: Profile, operations: tuple[str, ...]) -> AclPlan:
    """``operations`` on the source topics each include pattern selects, within the rule; a regex is left to
    pre-flight (:class:`Unresolved`)."""
    for piece in profile.selection().include:
        resource = classify(piece)
        if resource.kind == "regex":
            plan.unresolved.append(Unresolved(piece, REGEX, operations))
        else:
            _grant(plan, piece, resource.kind, resource.value, operations)
    return plan


def target_topic_grants(plan: AclPlan, profile: Profile, operations: tuple[str, ...]) -> AclPlan:
    """``operations`` on the target names of the topics each include pattern selects, within the rule; a regex, or a
    prefix whose target names share no prefix, is left to pre-flight (:class:`Unresolved`)."""
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
