"""Which topics are mirrored, and what they are called on the target.

Selection follows MirrorMaker: ``include`` and ``exclude`` are Java regexes matched against the whole topic name,
a comma means "or", and internal topics (``__consumer_offsets``, ``__transaction_state``, any ``__*``) are always
excluded. :func:`subscribe_pattern` compiles a selection into the one Java regex Spark's ``subscribePattern``
takes; :meth:`TopicSelection.matches` applies the same selection in Python.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cached_property

from secure_mirror.profile import javaregex

INTERNAL_TOPICS = "__.*"
LEGAL_TOPIC = re.compile(r"^[A-Za-z0-9._-]{1,249}$")
_LITERAL = re.compile(r"^(?:[A-Za-z0-9_-]|\\[.-])+$")


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
    """ONE Java regex selecting ``include`` minus ``exclude`` minus internal topics (for ``subscribePattern``).

    Java's ``Matcher.matches()`` (used by the Kafka consumer) needs the whole name to match, so the exclusions are
    a negative lookahead anchored at the end: ``(?!(?:__.*|x)$)(?:a|b)``.
    """
    excluded = _alternatives([INTERNAL_TOPICS, *exclude])
    return f"(?!(?:{excluded})$)(?:{_alternatives(include)})"


@dataclass(frozen=True)
class TopicSelection:
    include: tuple[str, ...]
    exclude: tuple[str, ...] = ()

    @classmethod
    def parse(cls, include: str, exclude: str | None = None) -> TopicSelection:
        return cls(tuple(split_patterns(include)), tuple(split_patterns(exclude or "")))

    def java_pattern(self) -> str:
        return subscribe_pattern(list(self.include), list(self.exclude))

    @cached_property
    def _python(self) -> re.Pattern[str]:
        return javaregex.compile_java(self.java_pattern())

    def matches(self, topic: str) -> bool:
        """True when ``topic`` is mirrored (same answer as Java's ``Pattern.matches(java_pattern(), topic)``)."""
        return self._python.fullmatch(topic) is not None

    def select(self, topics: list[str]) -> list[str]:
        return sorted(topic for topic in topics if self.matches(topic))


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
