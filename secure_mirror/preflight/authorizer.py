"""Effective permissions as Kafka's StandardAuthorizer computes them, from a list of ACLs. Pure: no I/O.

The rules (``StandardAuthorizerData.findResult``): an ACL applies when its resource pattern matches
(LITERAL name, LITERAL ``*``, PREFIXED prefix), its principal is the caller or ``User:*``, its host is the
caller's address or ``*``, and its operation is the one asked or ``ALL``; an ALLOW for READ, WRITE, DELETE or
ALTER also allows DESCRIBE, an ALLOW for ALTER_CONFIGS also allows DESCRIBE_CONFIGS (DENY implies nothing).
Any applicable DENY wins; otherwise any applicable ALLOW grants; otherwise the request is denied, unless no
ACL at all names the resource and the broker sets ``allow.everyone.if.no.acl.found=true``.

``authorize`` reads the rules over every ACL for one resource; ``authorize_all`` decides the same for many
resources at once, looking up only the ACLs whose pattern can name each one (``Patterns``), as the broker's
authorizer does: the cost follows resources plus ACLs, not resources times ACLs.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass

from secure_mirror.kafka.acl import Acl

IMPLIES_DESCRIBE = frozenset({"DESCRIBE", "READ", "WRITE", "DELETE", "ALTER"})
IMPLIES_DESCRIBE_CONFIGS = frozenset({"DESCRIBE_CONFIGS", "ALTER_CONFIGS"})


@dataclass(frozen=True)
class Decision:
    allowed: bool
    rule: Acl | None  # the ACL that decided, None when no ACL applied
    reason: str


def principal_matches(acl_principal: str, principal: str) -> bool:
    if acl_principal == principal:
        return True
    kind, _, name = acl_principal.partition(":")
    return name == "*" and principal.partition(":")[0] == kind


def operation_matches(acl: Acl, operation: str) -> bool:
    granted = acl.operation
    if granted in ("ALL", operation):
        return True
    if acl.permission != "ALLOW":
        return False
    if operation == "DESCRIBE":
        return granted in IMPLIES_DESCRIBE
    if operation == "DESCRIBE_CONFIGS":
        return granted in IMPLIES_DESCRIBE_CONFIGS
    return False


def applies(acl: Acl, *, principal: str, host: str, operation: str, resource_type: str, name: str) -> bool:
    return (
        acl.covers(resource_type, name)
        and principal_matches(acl.principal, principal)
        and acl.host in ("*", host)
        and operation_matches(acl, operation)
    )


def authorize(
    acls: Iterable[Acl],
    *,
    principal: str,
    operation: str,
    resource_type: str,
    name: str,
    host: str = "*",
    super_users: Iterable[str] = (),
    allow_if_no_acl: bool = False,
) -> Decision:
    """May ``principal`` (connecting from ``host``) perform ``operation`` on the resource?"""
    acls = list(acls)
    if principal in set(super_users):
        return Decision(True, None, f"{principal} is a super user")
    matching = [
        a
        for a in acls
        if applies(a, principal=principal, host=host, operation=operation, resource_type=resource_type, name=name)
    ]
    deny = next((a for a in matching if a.permission == "DENY"), None)
    if deny is not None:
        return Decision(False, deny, f"denied by {describe_rule(deny)}")
    allow = next((a for a in matching if a.permission == "ALLOW"), None)
    if allow is not None:
        return Decision(True, allow, f"allowed by {describe_rule(allow)}")
    if allow_if_no_acl and not any(a.covers(resource_type, name) for a in acls):
        return Decision(True, None, "no ACL names the resource and allow.everyone.if.no.acl.found=true")
    return Decision(False, None, f"no ACL allows {operation} on {resource_type} {name} for {principal}")


class Patterns:
    """ACLs of one resource type by their pattern: LITERAL names (``*`` among them) and PREFIXED prefixes, each
    remembering its place in the list it came from (the first applicable DENY or ALLOW names the decision)."""

    def __init__(self, acls: Iterable[tuple[int, Acl]]):
        self.literal: dict[str, list[tuple[int, Acl]]] = defaultdict(list)
        self.prefixed: dict[str, list[tuple[int, Acl]]] = defaultdict(list)
        for place, acl in acls:
            if acl.pattern_type == "LITERAL":
                self.literal[acl.resource_name].append((place, acl))
            elif acl.pattern_type == "PREFIXED":
                self.prefixed[acl.resource_name].append((place, acl))
        self.lengths = sorted({len(prefix) for prefix in self.prefixed})

    def covering(self, name: str) -> list[Acl]:
        """The ACLs whose pattern names ``name`` (``Acl.covers``), in their order."""
        found = [*self.literal.get(name, ()), *(self.literal.get("*", ()) if name != "*" else ())]
        for length in self.lengths:
            if length > len(name):
                break
            found += self.prefixed.get(name[:length], ())
        return [acl for _, acl in sorted(found, key=lambda item: item[0])]


def authorize_all(
    acls: Iterable[Acl],
    *,
    principal: str,
    operation: str,
    resource_type: str,
    names: Iterable[str],
    host: str = "*",
    super_users: Iterable[str] = (),
    allow_if_no_acl: bool = False,
) -> dict[str, Decision]:
    """``authorize``'s decision for each of ``names`` (resources of ``resource_type``), the same, in one pass."""
    names = list(names)
    if principal in set(super_users):
        return {name: Decision(True, None, f"{principal} is a super user") for name in names}
    of_type = [(place, a) for place, a in enumerate(acls) if a.resource_type == resource_type]
    named = Patterns(of_type)
    mine = Patterns(
        (place, a)
        for place, a in of_type
        if principal_matches(a.principal, principal) and a.host in ("*", host) and operation_matches(a, operation)
    )
    decisions = {}
    for name in names:
        matching = mine.covering(name)
        deny = next((a for a in matching if a.permission == "DENY"), None)
        allow = next((a for a in matching if a.permission == "ALLOW"), None)
        if deny is not None:
            decisions[name] = Decision(False, deny, f"denied by {describe_rule(deny)}")
        elif allow is not None:
            decisions[name] = Decision(True, allow, f"allowed by {describe_rule(allow)}")
        elif allow_if_no_acl and not named.covering(name):
            decisions[name] = Decision(True, None, "no ACL names the resource and allow.everyone.if.no.acl.found=true")
        else:
            decisions[name] = Decision(
                False, None, f"no ACL allows {operation} on {resource_type} {name} for {principal}"
            )
    return decisions


def describe_rule(acl: Acl) -> str:
    host = "" if acl.host == "*" else f" from {acl.host}"
    return (
        f"{acl.permission} {acl.operation} on {acl.resource_type} {acl.pattern_type} "
        f"'{acl.resource_name}' for {acl.principal}{host}"
    )
