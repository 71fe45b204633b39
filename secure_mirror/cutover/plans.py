"""The cut-over's three plans, pure (issue 41, docs/cutover.md): the fence (from the source's bindings,
``secure_mirror.kafka.acl.Acl`` as an admin reads them, and the selected topics: which bindings to change so that the
producers of the selected topics stop writing them on the source), the promotion (which to grant so that they write
the target copies instead) and the way back's restore (both clusters' bindings as before the cut-over). Nothing here
talks to a cluster; the step that applies a plan notes it in the record first, so that the way back
(:func:`restore_plan`) undoes exactly what was done.

The rules, each a sentence of :data:`RULES`:

- A producer's grant is an ALLOW of WRITE or ALL on a TOPIC resource that covers a selected topic (a LITERAL name or
  ``*``, or a PREFIXED prefix), held by a principal other than the mirror's own source identity.
- A LITERAL ALLOW WRITE naming exactly one selected topic is removed. Every other producer's grant (ALL, ``*``, a
  prefix, which also cover reading or other topics) stays, and a DENY WRITE on each selected topic it covers is
  added for its principal, from every host: a DENY wins over any ALLOW in Kafka's authorizer, and nothing else of
  the principal's access changes.
- A grant the fence cannot stop by principal is named and the cut-over stops before changing anything: one held by
  the wildcard principal ``User:*`` or by a principal that is not a ``User``. So is a grant held by a principal
  the target's names cannot carry (a control character).
- Promotion grants each fenced producer, under its name on the target (the target's Kerberos rules applied as for
  the consumers, ``consumer_acls.target_principal``), ALLOW WRITE and DESCRIBE on the LITERAL target name of each
  selected topic it could write, from every host; never to ``User:*``, never on an internal or reserved topic. A
  binding the target holds already is listed as present and not granted again.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from secure_mirror.cutover.notes import FenceNote, Notes
from secure_mirror.kafka.acl import Acl
from secure_mirror.profile import topics
from secure_mirror.profile.cluster import Side
from secure_mirror.profile.models import Profile
from secure_mirror.render.consumer_acls import WILDCARD_PRINCIPAL, target_principal, unscriptable

PRODUCER_OPERATIONS = ("WRITE", "ALL")
PROMOTED_OPERATIONS = ("WRITE", "DESCRIBE")

RULES = (
    "A producer's grant: ALLOW WRITE or ALL on a TOPIC pattern covering a selected topic, not the mirror's own.",
    "A LITERAL ALLOW WRITE on one selected topic is removed; every other grant stays and gets a DENY WRITE per topic.",
    "User:*, a non-User principal or a name the scripts cannot carry cannot be fenced by principal: named, nothing done.",
    "Promotion: ALLOW WRITE and DESCRIBE on each LITERAL target name, mapped principal, never User:* or internal topics.",
)


@dataclass(frozen=True)
class Unfenceable:
    """A producer's grant the fence cannot stop by principal, and why."""

    binding: Acl
    topics: tuple[str, ...]
    reason: str


@dataclass
class FencePlan:
    """What the fence changes on the source: ``remove`` (the exact bindings taken away, restored by the way back)
    and ``deny`` (DENY WRITE bindings added, removed by the way back); ``producers`` maps each fenced principal to the
    selected topics it could write; ``unfenceable`` stops the cut-over; ``present`` are DENYs the source holds
    already (a re-run after the step applied part of them)."""

    remove: list[Acl] = field(default_factory=list)
    deny: list[Acl] = field(default_factory=list)
    producers: dict[str, list[str]] = field(default_factory=dict)
    unfenceable: list[Unfenceable] = field(default_factory=list)
    present: list[Acl] = field(default_factory=list)

    @property
    def changes(self) -> bool:
        return bool(self.remove or self.deny)

    def note(self, selected: list[str], partitions: dict[str, int]) -> FenceNote:
        """The plan as the record keeps it, with the selected topics and their partition counts."""
        return FenceNote(
            remove=tuple(self.remove),
            deny=tuple(self.deny),
            producers={principal: list(covered) for principal, covered in self.producers.items()},
            selected=tuple(selected),
            partitions={topic: partitions[topic] for topic in selected},
        )


@dataclass
class PromotePlan:
    """The producers' grants on the target: ``grant`` to add, ``present`` held already, ``principals`` source name
    -> (target name, how), ``skipped`` (a topic whose target name is reserved) with why."""

    grant: list[Acl] = field(default_factory=list)
    present: list[Acl] = field(default_factory=list)
    principals: dict[str, tuple[str, str]] = field(default_factory=dict)
    skipped: list[tuple[str, str]] = field(default_factory=list)  # (target topic, why)


def producer_grants(profile: Profile, source_acls: Iterable[Acl], selected: list[str]) -> list[tuple[Acl, list[str]]]:
    """Each producer's grant on the source with the selected topics it covers (rule 1)."""
    found = []
    for acl in dict.fromkeys(source_acls):
        if acl.resource_type != "TOPIC" or acl.permission != "ALLOW" or acl.operation not in PRODUCER_OPERATIONS:
            continue
        if acl.principal == profile.source.kafka_principal:
            continue
        covered = [topic for topic in selected if acl.covers("TOPIC", topic)]
        if covered:
            found.append((acl, covered))
    return found


def fence_plan(profile: Profile, source_acls: Iterable[Acl], selected: list[str]) -> FencePlan:
    """The fence (rules 2 and 3) from the source's bindings and the selected topics."""
    source_acls = list(source_acls)
    held = set(source_acls)
    plan = FencePlan()
    for acl, covered in producer_grants(profile, source_acls, selected):
        if (why := _unfenceable(acl)) is not None:
            plan.unfenceable.append(Unfenceable(acl, tuple(covered), why))
            continue
        plan.producers.setdefault(acl.principal, [])
        plan.producers[acl.principal] += [t for t in covered if t not in plan.producers[acl.principal]]
        if acl.pattern_type == "LITERAL" and acl.operation == "WRITE" and acl.resource_name != "*":
            plan.remove.append(acl)
            continue
        for topic in covered:
            deny = Acl(
                principal=acl.principal,
                operation="WRITE",
                permission="DENY",
                resource_type="TOPIC",
                resource_name=topic,
            )
            target = plan.present if deny in held else plan.deny
            if deny not in target:
                target.append(deny)
    return plan


def _unfenceable(acl: Acl) -> str | None:
    if acl.principal == WILDCARD_PRINCIPAL:
        return "the wildcard principal User:* lets every identity write: narrow that grant to named producers"
    if not acl.principal.startswith("User:") or acl.principal == "User:":
        return "not a User principal: a DENY by principal cannot stop its members; grant its producers by name"
    if (why := unscriptable(acl)) is not None:
        return why
    return None


def restore(fenced: FencePlan) -> tuple[list[Acl], list[Acl]]:
    """The way back: (bindings to add again, bindings to delete), exactly the fence's recorded changes reversed."""
    return list(fenced.remove), list(fenced.deny)


@dataclass
class RestorePlan:
    """The way back's last change (``failback``'s restore step): per cluster of the forward cut-over (``source``, the
    cluster the applications return to; ``target``, the one they leave), the bindings to add and to delete so that
    both hold again exactly what they held before the cut-over."""

    add: dict[Side, list[Acl]] = field(default_factory=dict)
    delete: dict[Side, list[Acl]] = field(default_factory=dict)


def restore_plan(forward: Notes, back: Notes) -> RestorePlan:
    """From the forward cut-over's notes and the way back's (their ``fence`` and ``acls``, as recorded):

    - on the forward's source: the bindings its fence removed are added again, the DENYs it added deleted;
    - on the forward's target: the bindings the way back's fence removed are added again unless the forward cut-over
      had added them (its promotion), and what the forward cut-over added there and the way back's DENYs are
      deleted."""
    promoted = [entry.binding for entry in forward.acls if entry.cluster == "target" and entry.change == "added"]
    back_fence = back.fence or FenceNote()
    forward_fence = forward.fence or FenceNote()
    again = [a for a in back_fence.remove if a not in promoted]
    plan = RestorePlan()
    plan.add["source"], plan.delete["source"] = restore(
        FencePlan(remove=[*forward_fence.remove], deny=[*forward_fence.deny])
    )
    plan.add["target"] = _unique(again)
    plan.delete["target"] = [a for a in _unique([*back_fence.deny, *promoted]) if a not in again]
    return plan


def _unique(acls: Iterable[Acl]) -> list[Acl]:
    return list(dict.fromkeys(acls))


def promote_plan(profile: Profile, fenced: FencePlan, target_acls: Iterable[Acl] | None) -> PromotePlan:
    """The producers' grants on the target (rule 4), with the diff against the target's bindings when read."""
    held = set(target_acls or ())
    plan = PromotePlan()
    for principal, covered in fenced.producers.items():
        mapped, how = target_principal(profile, principal)
        if mapped == WILDCARD_PRINCIPAL:  # a Kerberos rule may map a name to anything: never every identity
            plan.skipped.append((principal, "maps to User:* on the target: grant it by hand"))
            continue
        plan.principals[principal] = (mapped, how)
        for topic in covered:
            name = profile.target_topic(topic)
            if (why := topics.reserved(name)) is not None:
                plan.skipped.append((name, f"reserved on the target: {why}"))
                continue
            for operation in PROMOTED_OPERATIONS:
                grant = Acl(principal=mapped, operation=operation, resource_type="TOPIC", resource_name=name)
                target = plan.present if grant in held else plan.grant
                if grant not in target:
                    target.append(grant)
    return plan
