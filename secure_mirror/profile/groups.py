"""Which consumer groups' committed offsets follow the mirror (``mirror.groups``, issue 28), and how their grants are
named.

Selection follows MirrorMaker 2's ``groups`` / ``groups.exclude``: Java regexes matched against the whole group id, a
comma means "or", and MirrorMaker 2's default exclusions (:data:`MM2_GROUPS_EXCLUDED`) apply unless ``exclude`` is
given. The mirror's own groups (:data:`MIRROR_GROUPS`: Spark's, and exactly_once's position groups) are never synced.

Unlike a topic include, a group include is granted as it is written, so it must be what a Kafka ACL can express
(:func:`classify`): a literal group id (a Java regex without metacharacters, ``app\\.orders`` for the group
``app.orders``) is a LITERAL grant, ``prefix.*`` a PREFIXED one; a general regex is refused at validate with the
reason, and so is ``.*`` (every group: a GROUP '*' grant). :func:`include_problems` says why a piece is refused.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from secure_mirror.profile.policy import shorten
from secure_mirror.profile.topics import Selection, split_patterns

MM2_GROUPS_EXCLUDED = "console-consumer-.*,connect-.*,__.*"  # MirrorMaker 2's default groups.exclude
MIRROR_GROUPS = "secure-mirror-"  # the start of every group id the mirror itself uses (Profile.group_prefix)
ALWAYS_EXCLUDED_GROUPS = (f"{MIRROR_GROUPS}.*",)  # MIRROR_GROUPS holds no metacharacter
# A Java regex that matches one string only: no metacharacter, or one quoted by a backslash (Java quotes any
# non-alphabetic character so; a backslash before a letter or digit is a construct: \d, \Q, \1).
_LITERAL = re.compile(r"^(?:[^\\^$.|?*+()\[\]{}]|\\[^A-Za-z0-9])+$")
HOW = (
    "a group grant is a literal group id (write a '.' in it as \\., e.g. app\\.orders) or a prefix written "
    "prefix.* (e.g. app\\..*)"
)


def mirror_group_prefix(source_alias: str, target_alias: str) -> str:
    """The prefix of every group id and transactional id of the mirror ``source_alias -> target_alias``
    (``Profile.group_prefix``): ``secure-mirror-<source>-<target>``, each alias with its '-' written as '.'.

    An alias holds letters, digits, '_' and '-', never '.', so the aliases can be read back from the prefix: aliases
    ``a``/``b-c`` give ``secure-mirror-a-b.c`` and ``a-b``/``c`` give ``secure-mirror-a.b-c``, where writing them as they
    are gave both ``secure-mirror-a-b-c`` (shared groups, and exactly_once's transactional ids fencing each other).
    With no '-' inside the written aliases, ``<prefix>-`` of one mirror never starts another's either, so what the
    mirror appends after a '-' (Spark's ``-<uuid>...``, ``-eos-<topic>-<partition>``) is its own. An alias without '-'
    is written as it is: the prefix of such a pair is what it always was. Render grants READ on ``<prefix>-``
    (``Profile.own_groups``), which covers no other mirror's groups."""
    return f"{MIRROR_GROUPS}{_written(source_alias)}-{_written(target_alias)}"


def _written(alias: str) -> str:
    return alias.replace("-", ".")


@dataclass(frozen=True)
class GroupResource:
    """How one include piece is granted: ``literal`` (LITERAL, the group id) or ``prefix`` (PREFIXED)."""

    kind: str  # "literal" | "prefix"
    value: str  # the group id, or the prefix ('' for ".*": every group, refused)

    @property
    def pattern_type(self) -> str:
        return "LITERAL" if self.kind == "literal" else "PREFIXED"


def classify(piece: str) -> GroupResource | None:
    """``app\\.orders`` -> literal ``app.orders``; ``app.*`` -> prefix ``app``; ``.*`` -> prefix ''; None: a regex
    no ACL can express."""
    if _LITERAL.match(piece):
        return GroupResource("literal", _unescape(piece))
    if piece.endswith(".*") and (piece == ".*" or _LITERAL.match(piece[:-2])):
        return GroupResource("prefix", _unescape(piece[:-2]))
    return None


def _unescape(literal: str) -> str:
    return re.sub(r"\\(.)", r"\1", literal)


def piece_problem(piece: str) -> str | None:
    """Why the include piece ``piece`` cannot be granted within the privilege rule (with the fix), or None."""
    shown = shorten(piece, 80)
    resource = classify(piece)
    if resource is None:
        return f"{shown} is a regex, which a Kafka ACL cannot express{_dotted_hint(piece)}; {HOW}"
    if resource.kind == "prefix" and not resource.value:
        return (
            f"{shown} selects every consumer group, and its grants would be GROUP '*' (every group of the cluster, "
            "other applications' included); list the groups, or the prefixes of those whose offsets should follow"
        )
    if "*" in resource.value:
        return (
            f"{shown} names a group holding '*', which Kafka's authorizer reads as every group in a grant; "
            "name the groups without '*'"
        )
    if resource.value.startswith(MIRROR_GROUPS):
        return (
            f"{shown} names the mirror's own consumer groups ({MIRROR_GROUPS}*: Spark's and exactly_once's "
            "positions), which are never synced; remove it"
        )
    return None


def _dotted_hint(piece: str) -> str:
    """``app.orders`` -> `` (for the group app.orders write app\\.orders)``: a piece that is literal, or a prefix,
    once its dots are escaped ('' when it is not)."""
    body, star = (piece[:-2], ".*") if piece.endswith(".*") else (piece, "")
    escaped = re.sub(r"(?<!\\)\.", r"\\.", body) + star
    resource = classify(escaped)
    if resource is None or not resource.value:
        return ""
    what = f"the group {resource.value}" if resource.kind == "literal" else f"groups starting with {resource.value}"
    return f" (for {shorten(what, 80)} write {shorten(escaped, 80)})"


def include_problems(include: str) -> list[str]:
    """Why the pieces of ``include`` cannot be granted (one sentence each), none when all can."""
    return [problem for piece in split_patterns(include) if (problem := piece_problem(piece))]


@dataclass(frozen=True)
class GroupSelection(Selection):
    """The groups selected: ``include`` less ``exclude`` less :data:`ALWAYS_EXCLUDED_GROUPS`, each matched against the
    whole group id as Java's ``Matcher.matches()`` does (as ``topics.TopicSelection`` matches topics)."""

    def java_pattern(self) -> str:
        """ONE Java regex for the selection: the exclusions as a negative lookahead anchored at the end."""
        excluded = "|".join((*ALWAYS_EXCLUDED_GROUPS, *self.exclude))
        return f"(?!(?:{excluded})$)(?:{'|'.join(self.include)})"

    def matches(self, name: str) -> bool:
        return bool(self.include) and super().matches(name)

    def resources(self) -> list[GroupResource]:
        """How each include piece is granted (only for a selection validate accepted: every piece classifies)."""
        found = [classify(piece) for piece in self.include]
        return [resource for resource in found if resource is not None]

    def excluded_literals(self) -> list[str]:
        """The group ids the include names literally that the exclusions drop (validate refuses them)."""
        named = [r.value for r in self.resources() if r.kind == "literal"]
        return [name for name in named if not self.matches(name)]
