"""One ACL type and one ``kafka-acls`` command line for it.

An :class:`Acl` is what render writes to ``acls/*.acls.json`` (these field names, in this order), what pre-flight
suggests and evaluates (``preflight.authorizer``), what the admin wrapper grants (``admin_ops.create_acls``) and
what the audit reads back from a cluster. :func:`kafka_acls_arguments` spells it for Kafka's ``kafka-acls.sh``
(``--operation DescribeConfigs``: Kafka's ``SecurityUtils.operation`` reads operations in PascalCase), used by the
rendered ``apply-acls.sh`` and by pre-flight's fixes.
"""

from __future__ import annotations

import shlex
from collections.abc import Callable
from dataclasses import asdict, dataclass, fields

_RESOURCE_OPTIONS = {"TOPIC": "--topic", "GROUP": "--group", "TRANSACTIONAL_ID": "--transactional-id"}
CLUSTER_NAME = "kafka-cluster"  # the one CLUSTER resource's name, as Kafka's authorizer names it
_UPPER = ("operation", "permission", "resource_type", "pattern_type")


@dataclass(frozen=True, kw_only=True)
class Acl:
    principal: str  # as the authorizer sees it: User:mirror
    host: str = "*"
    operation: str  # READ | WRITE | DESCRIBE | CREATE | DESCRIBE_CONFIGS | ALTER_CONFIGS | ALL ...
    permission: str = "ALLOW"  # ALLOW | DENY
    resource_type: str  # TOPIC | GROUP | CLUSTER | TRANSACTIONAL_ID
    resource_name: str
    pattern_type: str = "LITERAL"  # LITERAL | PREFIXED

    @classmethod
    def of(cls, value: Acl | dict) -> Acl:
        """An ACL, or an entry of an ``acls/*.acls.json`` file (``host``, ``permission`` and ``pattern_type`` may be
        left out; names in any case). librdkafka's ``BROKER`` resource type is Kafka's ``CLUSTER``."""
        if isinstance(value, Acl):
            return value
        given = {f.name: str(value[f.name]) for f in fields(cls) if value.get(f.name) is not None}
        given.update({name: given[name].upper() for name in _UPPER if name in given})
        if given.get("resource_type") == "BROKER":
            given["resource_type"] = "CLUSTER"
        return cls(**given)

    @staticmethod
    def entry_of_binding(binding) -> dict[str, str]:
        """A confluent-kafka ``AclBinding`` as DescribeAcls returns it, as an ``acls/*.acls.json`` entry with
        librdkafka's names as they come (``BROKER`` for ``CLUSTER``)."""
        return {
            "principal": binding.principal,
            "host": binding.host,
            "operation": binding.operation.name,
            "permission": binding.permission_type.name,
            "resource_type": binding.restype.name,
            "resource_name": binding.name,
            "pattern_type": binding.resource_pattern_type.name,
        }

    @classmethod
    def from_binding(cls, binding) -> Acl:
        """A confluent-kafka ``AclBinding`` as DescribeAcls returns it."""
        return cls.of(cls.entry_of_binding(binding))

    def to_dict(self) -> dict[str, str]:
        """The entry of an ``acls/*.acls.json`` file."""
        return asdict(self)

    def words(self) -> str:
        """The binding in words, as commands print it (``policy.printable`` before a terminal sees it)."""
        return (
            f"{self.permission} {self.principal} {self.operation} on {self.resource_type} {self.pattern_type} "
            f"{self.resource_name} (host {self.host})"
        )

    def covers(self, resource_type: str, name: str) -> bool:
        """Whether the ACL's resource pattern names the resource ``name`` (LITERAL name or ``*``, PREFIXED prefix)."""
        if self.resource_type != resource_type:
            return False
        if self.pattern_type == "LITERAL":
            return self.resource_name in (name, "*")
        return self.pattern_type == "PREFIXED" and name.startswith(self.resource_name)


Quote = Callable[[str, str], str]  # (value, what it is) -> one shell word


def _shell_word(value: str, _what: str) -> str:
    return shlex.quote(value)


def operation_word(operation: str) -> str:
    """``DESCRIBE_CONFIGS`` -> ``DescribeConfigs``, as ``kafka-acls.sh --operation`` takes it."""
    return "".join(part.title() for part in operation.split("_"))


def kafka_acls_arguments(acl: Acl, quote: Quote = _shell_word) -> str:
    """The ``kafka-acls.sh`` arguments naming ``acl`` (after ``--add`` or ``--remove``)."""
    kind = acl.permission.lower()
    option = _RESOURCE_OPTIONS.get(acl.resource_type)
    resource = f"{option} {quote(acl.resource_name, 'an ACL resource name')}" if option else "--cluster"
    if option is None and acl.resource_type != "CLUSTER":
        raise ValueError(f"kafka-acls.sh has no option for resource type {acl.resource_type}")
    return (
        f"--{kind}-principal {quote(acl.principal, 'an ACL principal')} --{kind}-host {quote(acl.host, 'an ACL host')} "
        f"--operation {operation_word(acl.operation)} {resource} --resource-pattern-type {acl.pattern_type.lower()}"
    )


def kafka_acls_command(acl: Acl, bootstrap: str, *, remove: bool = False) -> str:
    """``kafka-acls.sh`` adding (or removing) ``acl``, run with an admin's client properties."""
    return (
        f"kafka-acls.sh --bootstrap-server {bootstrap} --command-config admin.properties "
        f"{'--remove --force' if remove else '--add'} {kafka_acls_arguments(acl)}"
    )
