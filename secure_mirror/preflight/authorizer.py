"""Effective permissions as Kafka's StandardAuthorizer computes them, from a list of ACLs. Pure: no I/O.

The rules (``StandardAuthorizerData.findResult``): an ACL applies when its resource pattern matches
(LITERAL name, LITERAL ``*``, PREFIXED prefix), its principal is the caller or ``User:*``, its host is the
caller's address or ``*``, and its operation is the one asked or ``ALL``; an ALLOW for READ, WRITE, DELETE or
ALTER also allows DESCRIBE, an ALLOW for ALTER_CONFIGS also allows DESCRIBE_CONFIGS (DENY implies nothing).
Any applicable DENY wins; otherwise any applicable ALLOW grants; otherwise the request is denied, unless no
ACL at all names the resource and the broker sets ``allow.everyone.if.no.acl.found=true``.
"""

from __future__ import annotations

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


def describe_rule(acl: Acl) -> str:
    host = "" if acl.host == "*" else f" from {acl.host}"
    return (
        f"{acl.permission} {acl.operation} on {acl.resource_type} {acl.pattern_type} "
        f"'{acl.resource_name}' for {acl.principal}{host}"
    )
