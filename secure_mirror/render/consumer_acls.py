"""The consumer access plan (issue 29, docs/consumer-access.md): from the source's ACLs that bear on the selected
topics, the target-side bindings each consumer needs to read the target copies after failover. Pure: its input is
plain lists of bindings (``secure_mirror.kafka.acl.Acl``) and topic names, read by ``acls --consumers`` with an admin
identity; its output a :class:`ConsumerPlan`, rendered as a reviewable script (``consumer-acls.sh``, the encoders and
the ``kafka-acls.sh`` arguments of ``apply-acls.sh``) and JSON. Nothing here grants anything.

The rules, each a sentence of :data:`RULES` (the script and the JSON repeat them):

- A source binding bears on the selection when it is a TOPIC binding whose LITERAL name is a selected topic or ``*``,
  or whose PREFIXED prefix starts a selected topic's name (MATCH is a filter, never a stored binding: asking for
  every binding and matching here gives what a MATCH filter per topic would).
- Operations: READ and ALL become READ + DESCRIBE, DESCRIBE stays DESCRIBE; WRITE and every other operation are never
  copied. On a group: READ stays READ, ALL becomes READ + DESCRIBE, DESCRIBE stays DESCRIBE. A DENY binding is copied
  as DENY for the same consumer operations (DENY ALL as DENY READ + DENY DESCRIBE): what the consumer was refused on
  the source it is refused on the target, and nothing else of the target's is touched. The host is kept.
- Principals: ``User:*`` is never copied (reported), nor a principal of another type, nor the mirror's own. A
  ``User:NAME`` keeps its name on the target, unless both sides are Kerberos and the target's
  ``principal_mapping.principal_to_local_rules`` map ``NAME@<source realm>`` (the consumer keeping its own Kerberos
  identity across a realm trust) to another name: then that name.
- Topic names: a LITERAL binding names the selected topic's target name; LITERAL ``*`` becomes one LITERAL binding per
  selected topic; a PREFIXED prefix becomes the PREFIXED target prefix where the rename keeps the topic last, an
  include prefix of ``mirror.topics`` covers it, ``mirror.topics.exclude`` is empty and the target prefix covers no
  internal or reserved topic; else one LITERAL binding per selected topic it covers.
- Groups: the GROUP bindings of the principals given READ on a selected topic, LITERAL or PREFIXED as on the source.
  With ``mirror.groups`` configured only the groups it syncs: a binding is narrowed to its intersection with each
  include piece (a literal group id under it, or the longer of two prefixes); without, every such group binding.
- The diff: a binding already on the target (the same principal, host, operation, permission and resource pattern)
  is listed as present; only the others are in the script.
- One odd binding never blocks the plan: a target binding holding a value ``kafka-acls.sh`` cannot be given as an
  argument (a control character in a group id, say) is skipped, its source binding named with why, and the rest of
  the plan stands.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from secure_mirror import folders
from secure_mirror.errors import BadInputError
from secure_mirror.kafka.acl import Acl, kafka_acls_arguments
from secure_mirror.profile import kafka_names, topics
from secure_mirror.profile.models import Profile
from secure_mirror.render import ranger, templating
from secure_mirror.render.acls import files as _acl_files  # noqa: F401 - registers the acl_arguments filter
from secure_mirror.render.encoders import UnrepresentableValue, json_text, sh

WILDCARD_PRINCIPAL = "User:*"
TOPIC_OPERATIONS = {"READ": ("READ", "DESCRIBE"), "ALL": ("READ", "DESCRIBE"), "DESCRIBE": ("DESCRIBE",)}
GROUP_OPERATIONS = {"READ": ("READ",), "ALL": ("READ", "DESCRIBE"), "DESCRIBE": ("DESCRIBE",)}
DENY_OPERATIONS = {"READ": ("READ",), "ALL": ("READ", "DESCRIBE"), "DESCRIBE": ("DESCRIBE",)}

RULES = (
    "WRITE and every operation but READ, DESCRIBE and ALL are never copied; ALL is narrowed to READ + DESCRIBE.",
    "DENY bindings are copied as DENY for READ and DESCRIBE (DENY ALL as both); the host is kept.",
    "User:* is never copied; a User:NAME keeps its name unless the target's Kerberos rules map NAME@<source realm>.",
    "Groups: those of principals that may read a selected topic; with mirror.groups, only the groups it syncs.",
    "A binding kafka-acls.sh cannot be given (a control character in a name) is skipped and named; the rest stands.",
)


@dataclass(frozen=True)
class Skipped:
    """A source binding that bears on the selection and is not copied, and why."""

    binding: Acl
    reason: str


@dataclass
class ConsumerPlan:
    """The target-side bindings (``bindings``, each with the source bindings it comes from), the principals' names on
    both sides, what was not copied and, once the target's ACLs are known, which bindings it holds already."""

    source_alias: str
    target_alias: str
    bindings: list[Acl] = field(default_factory=list)
    origins: dict[Acl, list[Acl]] = field(default_factory=dict)
    principals: dict[str, tuple[str, str]] = field(default_factory=dict)  # source -> (target, how)
    skipped: list[Skipped] = field(default_factory=list)
    present: list[Acl] | None = None  # None: the target's ACLs were not read

    def add(self, binding: Acl, origin: Acl) -> None:
        if binding not in self.origins:
            self.bindings.append(binding)
        self.origins.setdefault(binding, []).append(origin)

    @property
    def to_add(self) -> list[Acl]:
        present = set(self.present or ())
        return [binding for binding in self.bindings if binding not in present]

    def output(self) -> ConsumerAclsOutput:
        present = set(self.present or ())
        read = self.present is not None
        return ConsumerAclsOutput(
            source=self.source_alias,
            target=self.target_alias,
            rules=list(RULES),
            target_acls_read=read,
            principals=[
                PrincipalOut(source=source, target=target, how=how) for source, (target, how) in self.principals.items()
            ],
            bindings=[
                BindingOut(
                    **b.to_dict(),
                    present=(b in present) if read else None,
                    origins=[AclOut(**o.to_dict()) for o in self.origins[b]],
                )
                for b in self.bindings
            ],
            to_add=[AclOut(**b.to_dict()) for b in self.to_add],
            skipped=[SkippedOut(**item.binding.to_dict(), reason=item.reason) for item in self.skipped],
        )

    def to_dict(self) -> dict:
        return self.output().model_dump(by_alias=True)

    def to_json(self) -> str:
        return json_text(self.to_dict())


# ---- the shape of ``acls --consumers --json`` (a JSON Schema: ConsumerAclsOutput.model_json_schema()) ----------------
class AclOut(BaseModel):
    principal: str = Field(description="as the authorizer sees it: User:name")
    host: str
    operation: str
    permission: str = Field(description="ALLOW or DENY")
    resource_type: str = Field(description="TOPIC or GROUP (in skipped: as on the source)")
    resource_name: str
    pattern_type: str = Field(description="LITERAL or PREFIXED")


class BindingOut(AclOut):
    model_config = ConfigDict(populate_by_name=True)

    present: bool | None = Field(description="held by the target already (null: its ACLs were not read)")
    origins: list[AclOut] = Field(alias="from", description="the source bindings it comes from")


class SkippedOut(AclOut):
    reason: str = Field(description="why the source binding is not copied")


class PrincipalOut(BaseModel):
    source: str
    target: str
    how: str = Field(description="'the same name', or the Kerberos name and the rules that map it")


class ConsumerAclsOutput(BaseModel):
    """``acls --consumers --json``: the target-side bindings the source's consumers need, and the diff."""

    source: str = Field(description="the source cluster's alias")
    target: str = Field(description="the target cluster's alias")
    rules: list[str]
    target_acls_read: bool = Field(description="whether the diff against the target's ACLs was made")
    principals: list[PrincipalOut]
    bindings: list[BindingOut]
    to_add: list[AclOut] = Field(description="the bindings the script adds (those not present)")
    skipped: list[SkippedOut]


# ---- the plan -------------------------------------------------------------------------------------------------------
def consumer_plan(
    profile: Profile, source_acls: Iterable[Acl], source_topics: Iterable[str], target_acls: Iterable[Acl] | None = None
) -> ConsumerPlan:
    """The plan from the source's bindings and topics (as an admin reads them) and, when read, the target's bindings."""
    source_acls = list(dict.fromkeys(source_acls))
    selected = profile.selection().select(list(source_topics))
    plan = ConsumerPlan(profile.source.alias, profile.target.alias)
    readers: set[str] = set()
    for acl in source_acls:
        if acl.resource_type == "TOPIC" and bears_on(acl, profile, selected):
            copied = _topic_binding(plan, profile, acl, selected)
            if copied and acl.permission == "ALLOW" and acl.operation in ("READ", "ALL"):
                readers.add(acl.principal)
    for acl in source_acls:
        if acl.resource_type == "GROUP" and acl.principal in readers:
            _group_binding(plan, profile, acl)
    if target_acls is not None:
        held = set(target_acls)
        plan.present = [binding for binding in plan.bindings if binding in held]
    return plan


def bears_on(acl: Acl, profile: Profile, selected: list[str]) -> bool:
    """Whether a TOPIC binding covers a selected topic (a LITERAL name the selection takes, ``*``, or a prefix)."""
    if acl.pattern_type == "LITERAL":
        return acl.resource_name == "*" or profile.selection().matches(acl.resource_name)
    return acl.pattern_type == "PREFIXED" and any(topic.startswith(acl.resource_name) for topic in selected)


def _topic_binding(plan: ConsumerPlan, profile: Profile, acl: Acl, selected: list[str]) -> bool:
    """Copy one TOPIC binding that bears on the selection; False (and why, in ``plan.skipped``) when not copied."""
    resources = target_topic_resources(acl, profile, selected)
    return _copy(plan, profile, acl, TOPIC_OPERATIONS, resources, "the source holds no selected topic it names")


def _group_binding(plan: ConsumerPlan, profile: Profile, acl: Acl) -> bool:
    """Copy one GROUP binding of a principal that reads a selected topic."""
    return _copy(plan, profile, acl, GROUP_OPERATIONS, group_resources(acl, profile), NO_SYNCED_GROUP)


NO_SYNCED_GROUP = "names no group that mirror.groups syncs"


def _copy(
    plan: ConsumerPlan,
    profile: Profile,
    acl: Acl,
    table: dict[str, tuple[str, ...]],
    resources: list[tuple[str, str]],
    no_resource: str,
) -> bool:
    """``acl``'s consumer operations (``table``) on ``resources``, for its principal on the target; else why not."""
    operations = _operations(acl, table)
    if operations and (why := unscriptable(acl)) is not None:  # before its principal is recorded
        plan.skipped.append(Skipped(acl, why))
        return False
    principal = _principal(plan, profile, acl) if operations else Skipped(acl, _not_copied(acl))
    if isinstance(principal, Skipped) or not resources:
        plan.skipped.append(principal if isinstance(principal, Skipped) else Skipped(acl, no_resource))
        return False
    copied = False
    for name, pattern in resources:
        for operation in operations:
            binding = _binding(acl, principal, operation, acl.resource_type, name, pattern)
            if (why := unscriptable(binding)) is not None:
                plan.skipped.append(Skipped(acl, why))
                break
            plan.add(binding, acl)
            copied = True
    return copied


def unscriptable(binding: Acl) -> str | None:
    """Why ``kafka-acls.sh`` cannot be given ``binding`` as arguments (the field, never the value), or None."""
    try:
        kafka_acls_arguments(binding, sh)
    except UnrepresentableValue as refused:
        return f"not scriptable, grant it by hand: {str(refused).removesuffix('; change the value')}"
    return None


def _binding(acl: Acl, principal: str, operation: str, resource_type: str, name: str, pattern: str) -> Acl:
    return Acl(
        principal=principal,
        host=acl.host,
        operation=operation,
        permission=acl.permission,
        resource_type=resource_type,
        resource_name=name,
        pattern_type=pattern,
    )


def _operations(acl: Acl, allowed: dict[str, tuple[str, ...]]) -> tuple[str, ...]:
    table = allowed if acl.permission == "ALLOW" else DENY_OPERATIONS if acl.permission == "DENY" else {}
    return table.get(acl.operation, ())


def _not_copied(acl: Acl) -> str:
    if acl.permission not in ("ALLOW", "DENY"):
        return f"permission {acl.permission} is neither ALLOW nor DENY"
    if acl.operation == "WRITE":
        return "WRITE is never copied: a consumer reads"
    return f"{acl.operation} is not a consumer's operation (only READ, DESCRIBE and ALL are copied)"


# ---- principals -----------------------------------------------------------------------------------------------------
def _principal(plan: ConsumerPlan, profile: Profile, acl: Acl) -> str | Skipped:
    """The binding's principal on the target, or why it is not copied."""
    if acl.principal == WILDCARD_PRINCIPAL:
        return Skipped(acl, "the wildcard principal User:* is never copied: grant the consumers by name")
    if not acl.principal.startswith("User:") or acl.principal == "User:":
        return Skipped(acl, "not a User principal: no rule maps it to the target")
    if acl.principal == profile.source.kafka_principal:
        return Skipped(acl, "the mirror's own identity, not a consumer (render's apply-acls.sh grants it)")
    if acl.principal not in plan.principals:
        plan.principals[acl.principal] = target_principal(profile, acl.principal)
    return plan.principals[acl.principal][0]


def target_principal(profile: Profile, principal: str) -> tuple[str, str]:
    """``User:NAME`` on the target and how it was found: by the target's Kerberos rules applied to
    ``NAME@<source realm>`` when they map it, else the same name."""
    name = principal.removeprefix("User:")
    source_realm = profile.source.principal_mapping.default_realm or profile.source.realm
    target_realm = profile.target.principal_mapping.default_realm or profile.target.realm
    if source_realm and target_realm and "@" not in name and "/" not in name:
        kerberos = f"{name}@{source_realm}"
        rules = profile.target.principal_mapping.principal_to_local_rules
        try:
            mapped = kafka_names.kerberos_short_name(kerberos, rules, target_realm)
        except ValueError:  # no rule maps it: the consumer has a name of the target's realm
            mapped = None
        if mapped and mapped != kerberos and mapped != name:
            return f"User:{mapped}", f"{kerberos} by target.principal_mapping.principal_to_local_rules"
    return principal, "the same name"


# ---- resources ------------------------------------------------------------------------------------------------------
def target_topic_resources(acl: Acl, profile: Profile, selected: list[str]) -> list[tuple[str, str]]:
    """(name, pattern type) on the target for a TOPIC binding that bears on the selection."""
    if acl.pattern_type == "LITERAL" and acl.resource_name != "*":
        return [(profile.target_topic(acl.resource_name), "LITERAL")]
    prefix = "" if acl.pattern_type == "LITERAL" else acl.resource_name
    if acl.pattern_type == "PREFIXED" and prefix_carries(prefix, profile):
        return [(profile.target_topic(prefix), "PREFIXED")]
    return [(profile.target_topic(topic), "LITERAL") for topic in selected if topic.startswith(prefix)]


def prefix_carries(prefix: str, profile: Profile) -> bool:
    """Whether a source prefix can be granted as the PREFIXED target prefix: the rename keeps the topic last, an
    include prefix covers it, nothing is excluded by mirror.topics.exclude, and it covers no reserved topic."""
    if not prefix or profile.target_topic_pieces[-1] != "" or profile.mirror.topics.selection().exclude:
        return False
    includes = [topics.classify(piece) for piece in profile.selection().include]
    covered = any(item.kind == "prefix" and prefix.startswith(item.value) for item in includes)
    return covered and not topics.prefix_covers_reserved(profile.target_topic(prefix), profile.mm2_target_topics)


def group_resources(acl: Acl, profile: Profile) -> list[tuple[str, str]]:
    """(name, pattern type) of a GROUP binding on the target: as on the source, or with ``mirror.groups`` its
    intersection with each include piece."""
    if not profile.mirror.groups.enabled:
        return [(acl.resource_name, acl.pattern_type)]
    selection = profile.mirror.groups.selection()
    if acl.pattern_type == "LITERAL" and acl.resource_name != "*":
        return [(acl.resource_name, "LITERAL")] if selection.matches(acl.resource_name) else []
    prefix = "" if acl.pattern_type == "LITERAL" else acl.resource_name
    found: list[tuple[str, str]] = []
    for resource in selection.resources():
        if resource.kind == "literal" and resource.value.startswith(prefix) and selection.matches(resource.value):
            found.append((resource.value, "LITERAL"))
        elif resource.kind == "prefix" and (resource.value.startswith(prefix) or prefix.startswith(resource.value)):
            found.append((max(resource.value, prefix, key=len), "PREFIXED"))
    return list(dict.fromkeys(found))


# ---- the script -----------------------------------------------------------------------------------------------------
def consumer_acls_script(plan: ConsumerPlan, profile: Profile) -> str:
    """``consumer-acls.sh``: the bindings to add on the target, for review; run by a person with an admin's config."""
    return templating.render(
        "templates/consumer-acls.sh.j2",
        plan=plan,
        rules=RULES,
        scriptable=lambda binding: unscriptable(binding) is None,
        bootstrap=",".join(profile.target.bootstrap_servers),
        kerberos=profile.target.mechanism == "GSSAPI",
    )


def write(plan: ConsumerPlan, profile: Profile, out_dir: Path) -> list[Path]:
    """``consumer-acls.sh`` (mode 0700) and ``consumer-acls.json`` (0600) in ``out_dir`` (made 0700 when new, never a
    symbolic link), and with a target whose ``acls.format`` names ranger ``consumer-policies.json`` (0600) and
    ``apply-consumer-policies.sh`` (0700); a file of those names there is replaced, never written through."""
    if out_dir.is_symlink():
        raise BadInputError(f"--out: {out_dir} is a symbolic link; name a real folder")
    out_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
    files = {
        "consumer-acls.sh": (consumer_acls_script(plan, profile), 0o700),
        "consumer-acls.json": (plan.to_json(), 0o600),
    }
    if profile.target.acls.ranger:  # docs/ranger.md: the same grants as Ranger policies, merged into existing ones
        policies, skipped = ranger.consumer_policies(plan.to_add, profile)  # the plan skipped control characters
        files["consumer-policies.json"] = (policies.to_json(), 0o600)
        files["apply-consumer-policies.sh"] = (ranger.apply_script([policies], merge=True, skipped=skipped), 0o700)
    for name, (text, mode) in files.items():
        folders.replace(out_dir / name, text, mode)
    return [out_dir / name for name in files]
