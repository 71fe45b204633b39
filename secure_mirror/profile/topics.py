"""Which topics are mirrored, and what they are called on the target.

Selection follows MirrorMaker: ``include`` and ``exclude`` are Java regexes matched against the whole topic name,
a comma means "or", and what :data:`ALWAYS_EXCLUDED` names is never mirrored: Kafka's internal topics
(``__consumer_offsets``, ``__transaction_state``, any ``__*``), MirrorMaker 2's default exclusions (its own and other
mirrors' ``*.internal`` topics: offset-syncs, checkpoints, its Connect configs/offsets/status; ``*.replica``), mirrors'
heartbeats, Kafka Connect's default internal topics and Schema Registry's. :func:`subscribe_pattern` compiles a
selection into the one Java regex Spark's ``subscribePattern`` takes; :meth:`TopicSelection.matches` applies the same
selection in Python.

A name the mirror may write on the target is decided by :func:`target_name_problem` alone (validate, render's ACLs and
the job ask it): Kafka's legal characters and length, and never an internal or reserved name (:func:`reserved`).
A PREFIXED ACL covers every name under its prefix: :func:`prefix_covers_reserved` says when that would include
an internal or reserved topic.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cached_property
from typing import Self

from secure_mirror.profile import javaregex

INTERNAL_TOPICS = "__.*"
HEARTBEATS_TOPIC = "heartbeats"  # MirrorMaker 2's (ReplicationPolicy.heartbeatsTopic()), on the target
MAX_TOPIC_LENGTH = 249  # Kafka's limit (Topic.MAX_NAME_LENGTH)
LEGAL_TOPIC = re.compile(r"^[A-Za-z0-9._-]{1,249}$")
# Names that belong to Kafka, Kafka Connect, MirrorMaker 2 or Schema Registry, never to an application's data: the job
# never reads them, never writes them, and no grant may cover them. As Java regexes, with why.
RESERVED_TOPICS = (
    (INTERNAL_TOPICS, "Kafka's internal topics (__consumer_offsets, __transaction_state, ...)"),
    ("\\..*", "names starting with '.', internal to MirrorMaker 2's replication policy"),
    (".*[\\-\\.]internal", "MirrorMaker 2's internal topics (offset-syncs, checkpoints, mm2-configs/offsets/status)"),
    ("heartbeats|.*\\.heartbeats", "mirrors' heartbeats topics"),
    ("connect-configs|connect-offsets|connect-status", "Kafka Connect's internal topics (their default names)"),
    ("_schemas|_confluent.*", "Schema Registry's and Confluent Platform's internal topics"),
)
# Never mirrored either, as MirrorMaker 2's default topics.exclude says, though a target may be named so.
REPLICA_TOPICS = ".*\\.replica"
ALWAYS_EXCLUDED = (*(pattern for pattern, _ in RESERVED_TOPICS), REPLICA_TOPICS)
# For prefix grants: the fixed starts of reserved names (a grant on a prefix of one, or under one, covers it) and the
# reserved names that are fixed words. Names ending in .internal / .heartbeats under a user's own prefix are covered by
# any grant on that prefix; they are excluded from mirroring, and the MANIFEST says so.
OFFSET_MAP_PREFIX = "secure_mirror.offset-map."  # every mirror's offset map (offset_map_topic), whatever its alias
RESERVED_PREFIXES = ("__", ".", "_confluent", "mm2-", OFFSET_MAP_PREFIX)
RESERVED_NAMES = ("heartbeats", "connect-configs", "connect-offsets", "connect-status", "_schemas")
_LITERAL = re.compile(r"^(?:[A-Za-z0-9_-]|\\[.-])+$")


def offset_map_topic(source_alias: str) -> str:
    """The target topic where the sink records its source-to-target offset map (docs/offset-map.md): a reserved
    ``*.internal`` name, so no mirror copies it."""
    return f"{OFFSET_MAP_PREFIX}{source_alias}.internal"


def checkpoints_topic(source_alias: str) -> str:
    """MirrorMaker 2's checkpoints topic on the target (``<source alias>.checkpoints.internal``), which
    ``RemoteClusterUtils.translateOffsets`` reads."""
    return f"{source_alias}.checkpoints.internal"


def split_patterns(text: str) -> list[str]:
    """``"orders.*, payments"`` -> ``["orders.*", "payments"]`` (a comma means "or", as in MirrorMaker)."""
    return [piece.strip() for piece in text.split(",") if piece.strip()]


def check_pattern(piece: str) -> str | None:
    """Why ``piece`` cannot be used (with the fix), or None."""
    try:
        javaregex.compile_java(piece)
    except javaregex.JavaRegexError as exc:
        hint = " (a comma separates patterns, so {n,m} cannot be used)" if "{" in piece or "}" in piece else ""
        return f"pattern {piece!r}: {exc}{hint}"
    return None


def _alternatives(pieces: list[str]) -> str:
    return "|".join(pieces)


def subscribe_pattern(include: list[str], exclude: list[str]) -> str:
    """ONE Java regex selecting ``include`` minus ``exclude`` minus :data:`ALWAYS_EXCLUDED` (for ``subscribePattern``).

    Java's ``Matcher.matches()`` (used by the Kafka consumer) needs the whole name to match, so the exclusions are
    a negative lookahead anchored at the end: ``(?!(?:__.*|x)$)(?:a|b)``.
    """
    excluded = _alternatives([*ALWAYS_EXCLUDED, *exclude])
    return f"(?!(?:{excluded})$)(?:{_alternatives(include)})"


_RESERVED = [(re.compile(pattern), why) for pattern, why in RESERVED_TOPICS]  # plain Python regex, ASCII patterns


def reserved(name: str) -> str | None:
    """Why ``name`` is an internal or reserved topic (whose, in words), or None."""
    return next((why for pattern, why in _RESERVED if pattern.fullmatch(name)), None)


def target_name_problem(name: str) -> str | None:
    """Why the mirror may not write a topic called ``name`` (Kafka would refuse it, or it is reserved), or None.
    The one rule for a target name: validate asks it of every name it can know, the job of every topic it plans."""
    if not name:
        return "is empty"
    if len(name) > MAX_TOPIC_LENGTH:
        return f"is {len(name)} characters long, and Kafka's limit is {MAX_TOPIC_LENGTH}"
    if name in (".", ".."):
        return f"is {name!r}, which Kafka refuses as a topic name"
    if not LEGAL_TOPIC.match(name):
        return "holds characters Kafka refuses in a topic name (only letters, digits, '.', '_' and '-')"
    if (why := reserved(name)) is not None:
        return f"is reserved: {why}"
    return None


def prefix_covers_reserved(prefix: str, reserved_names: tuple[str, ...] = ()) -> bool:
    """True when a PREFIXED grant on ``prefix`` covers an internal or reserved topic: one of
    :data:`RESERVED_PREFIXES` starts with ``prefix`` or ``prefix`` starts with it, or a reserved name (of
    :data:`RESERVED_NAMES` and ``reserved_names``, e.g. the profile's own MirrorMaker 2 topics) starts with it."""
    return any(r.startswith(prefix) or prefix.startswith(r) for r in RESERVED_PREFIXES) or any(
        name.startswith(prefix) for name in (*RESERVED_NAMES, *reserved_names)
    )


@dataclass(frozen=True)
class Selection:
    """Names selected by Java regexes, ``include`` less ``exclude`` (each a list written with commas), in the one Java
    regex :meth:`java_pattern` a subclass builds, matched against the whole name as Java's ``Matcher.matches()``
    does."""

    include: tuple[str, ...]
    exclude: tuple[str, ...] = ()

    @classmethod
    def parse(cls, include: str, exclude: str | None = None) -> Self:
        return cls(tuple(split_patterns(include)), tuple(split_patterns(exclude or "")))

    def java_pattern(self) -> str:
        raise NotImplementedError

    @cached_property
    def _python(self) -> re.Pattern[str]:
        return javaregex.compile_java(self.java_pattern())

    def matches(self, name: str) -> bool:
        """True when ``name`` is selected (same answer as Java's ``Pattern.matches(java_pattern(), name)``)."""
        return self._python.fullmatch(name) is not None

    def select(self, names: list[str]) -> list[str]:
        return sorted(name for name in names if self.matches(name))


@dataclass(frozen=True)
class TopicSelection(Selection):
    """The topics mirrored."""

    def java_pattern(self) -> str:
        return subscribe_pattern(list(self.include), list(self.exclude))


@dataclass(frozen=True)
class TopicResource:
    """How one include pattern can be named in an ACL: LITERAL name, PREFIXED prefix, or only as a regex."""

    kind: str  # "literal" | "prefix" | "regex"
    value: str  # the name, the prefix (empty: every topic), or the regex


def classify(piece: str) -> TopicResource:
    """``payments`` -> literal, ``orders.*`` / ``orders\\..*`` -> prefix, ``.*`` -> prefix '', else regex."""
    if _LITERAL.match(piece):
        return TopicResource("literal", _unescape(piece))
    if piece.endswith(".*") and (piece == ".*" or _LITERAL.match(piece[:-2])):
        return TopicResource("prefix", _unescape(piece[:-2]))
    return TopicResource("regex", piece)


def _unescape(literal: str) -> str:
    return re.sub(r"\\(.)", r"\1", literal)
