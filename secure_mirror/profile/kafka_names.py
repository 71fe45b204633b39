"""The name a Kafka broker gives the mirror's identity, computed as the broker computes it.

A GSSAPI login becomes ``User:<short name>`` through the brokers' ``sasl.kerberos.principal.to.local.rules``
(Kafka's ``KerberosName``, ``KerberosShortNamer`` and ``KerberosRule``); a client certificate's subject becomes
``User:<name>`` through ``ssl.principal.mapping.rules`` (``SslPrincipalMapper``). Both are written here from
Kafka's documented and observed behaviour with Java's regex semantics: the patterns are translated by
:mod:`javaregex` (a construct it cannot reproduce exactly is refused, :class:`UnsupportedRule`), and Java's find
loop and replacement syntax (``$1``, ``${name}``, ``\\``) are reproduced below.
``tests/unit/profile/test_kafka_names_oracle.py`` compares every answer with Kafka's own classes on generated
rules and names.

Kafka's quirks kept on purpose: ``DEFAULT`` maps only names of the broker's default realm (to their first
component); a rule whose result still holds ``/`` or ``@`` stops the search with an error instead of trying the
next rule; ``/L`` and ``/U`` apply after that check; the SSL rules' replacement escapes back-references to missing
groups by positions counted in the unescaped text.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from secure_mirror.profile.javaregex import JavaRegexError, compile_java

INT_MAX = 2**31 - 1
_DOT = "[^\n\r\x85\u2028\u2029]"  # Java's '.': anything but a line terminator
_END = "(?=[\x85\u2028\u2029]?\\Z)"  # Java's '$' on text whose ends were trimmed of characters <= ' '


class NameRuleError(ValueError):
    """Kafka maps no name: ``stage`` is ``rules`` (the broker refuses the rules), ``name`` (the name does not
    parse) or ``apply``; ``java_error`` is the simple name of the exception Kafka throws."""

    def __init__(self, stage: str, java_error: str, message: str):
        super().__init__(message)
        self.stage, self.java_error = stage, java_error


class UnsupportedRule(ValueError):
    """A rule secure-mirror cannot evaluate exactly as Java does (``index`` counts from 0): its regex, or /L on a
    capital sigma (Java picks its final form by word boundaries, Python by Unicode's Final_Sigma context)."""

    def __init__(self, index: int, message: str):
        super().__init__(message)
        self.index = index


# ---- Java's regex semantics ------------------------------------------------------------------------------------
def java_finditer(pattern: re.Pattern[str], text: str) -> Iterator[re.Match[str]]:
    """``Matcher.find()`` repeated: after an empty match the next search starts one character later."""
    first, last = -1, 0
    while True:
        start = last + 1 if last == first else last
        if start > len(text) or (match := pattern.search(text, start)) is None:
            return
        first, last = match.start(), match.end()
        yield match


def java_replace(pattern: re.Pattern[str], text: str, replacement: str, replace_all: bool) -> str:
    """``Matcher.replaceAll`` / ``replaceFirst`` with Java's replacement syntax."""
    out, position = [], 0
    for match in java_finditer(pattern, text):
        out += [text[position : match.start()], _expand(replacement, match)]
        position = match.end()
        if not replace_all:
            break
    return "".join(out) + text[position:]


def _bmp_only(text: str, index: int) -> str:
    """``text``, if Java's regex would step through it as Python does: Java's find loop moves past an empty match
    by one UTF-16 unit, so it can match between the two halves of a character beyond U+FFFF (and a replacement
    then splits it), where Python moves by one character. Such names are refused rather than guessed."""
    if any(ord(char) > 0xFFFF for char in text):
        raise UnsupportedRule(
            index,
            f"rule {index + 1} rewrites a name holding a character beyond U+FFFF, which Java's regex may split "
            "in two; secure-mirror cannot tell what the brokers make of it: set sasl.kafka_principal",
        )
    return text


def _expand(replacement: str, match: re.Match[str]) -> str:
    out, cursor = [], 0
    while cursor < len(replacement):
        char = replacement[cursor]
        if char == "\\":
            if cursor + 1 == len(replacement):
                raise NameRuleError("apply", "IllegalArgumentException", "character to be escaped is missing")
            out.append(replacement[cursor + 1])
            cursor += 2
        elif char == "$":
            group, cursor = _group_reference(replacement, cursor + 1, match)
            if match.start(group) != -1:
                out.append(match.group(group))
        else:
            out.append(char)
            cursor += 1
    return "".join(out)


def _group_reference(replacement: str, cursor: int, match: re.Match[str]) -> tuple[int, int]:
    """The group ``$n`` or ``${name}`` at ``cursor`` (just after the ``$``) refers to, and the position after it."""
    if cursor == len(replacement):
        raise NameRuleError("apply", "IllegalArgumentException", "Illegal group reference: group index is missing")
    if replacement[cursor] == "{":
        return _named_reference(replacement, cursor + 1, match)
    group = ord(replacement[cursor]) - ord("0")
    if not 0 <= group <= 9:
        raise NameRuleError("apply", "IllegalArgumentException", "Illegal group reference")
    cursor += 1
    while cursor < len(replacement) and "0" <= replacement[cursor] <= "9":  # the longest number naming a group
        if group * 10 + int(replacement[cursor]) > match.re.groups:
            break
        group, cursor = group * 10 + int(replacement[cursor]), cursor + 1
    if group > match.re.groups:
        raise NameRuleError("apply", "IndexOutOfBoundsException", f"No group {group}")
    return group, cursor


def _named_reference(replacement: str, cursor: int, match: re.Match[str]) -> tuple[int, int]:
    name, last = "", "{"
    while cursor < len(replacement):
        last = replacement[cursor]
        if not (last.isascii() and last.isalnum()):
            break
        name, cursor = name + last, cursor + 1
    if not name:
        raise NameRuleError("apply", "IllegalArgumentException", "named capturing group has 0 length name")
    if last != "}":
        raise NameRuleError("apply", "IllegalArgumentException", "named capturing group is missing trailing '}'")
    if name[0].isdigit() or name not in match.re.groupindex:
        raise NameRuleError("apply", "IllegalArgumentException", f"No group with name {{{name}}}")
    return match.re.groupindex[name], cursor + 1


def _java_int(digits: str) -> int | None:
    """``Integer.parseInt`` of ASCII digits, or None where it throws (empty, or beyond 2^31-1)."""
    return int(digits) if digits and int(digits) <= INT_MAX else None


def _compile(index: int, pattern: str) -> re.Pattern[str]:
    try:
        return compile_java(pattern, ascii_text=False)
    except JavaRegexError as exc:
        raise UnsupportedRule(
            index, f"rule {index + 1}: the regex {pattern!r} cannot be evaluated exactly as Java does ({exc})"
        ) from None


def _java_case(text: str, lower: bool, upper: bool, rule: int) -> str:
    """``toLowerCase``/``toUpperCase(Locale.ENGLISH)``: Python's mappings, apart from the final sigma."""
    if lower and "\u03a3" in text:
        raise UnsupportedRule(
            rule,
            f"rule {rule + 1} lower-cases a name with a capital sigma, which Java and Python lower-case differently",
        )
    return text.lower() if lower else text.upper() if upper else text


# ---- sasl.kerberos.principal.to.local.rules --------------------------------------------------------------------
_KERBEROS_RULE = re.compile(
    r"(?P<default>DEFAULT)|RULE:\[(?P<n>\d*):(?P<format>[^\]]*)\]"
    r"(?:\((?P<match>[^)]*)\))?(?:s/(?P<sfrom>[^/]*)/(?P<sto>[^/]*)/(?P<g>g)?)?/?(?P<case>[LU])?",
    re.ASCII,
)
_PARAMETER = re.compile(r"(?P<text>[^$]*)(?:\$(?P<digits>\d*))?", re.ASCII)
_KERBEROS_NAME = re.compile(r"(?P<first>[^/@]*)(?:/(?P<second>[^/@]*))?@(?P<realm>[^/@]*)")


@dataclass(frozen=True)
class KerberosRule:
    text: str
    index: int
    default_realm: str | None = None  # set for DEFAULT
    components: int = 0
    format: str = ""
    match: re.Pattern[str] | None = None
    sfrom: re.Pattern[str] | None = None
    sto: str = ""
    repeat: bool = False
    case: str | None = None

    def apply(self, params: list[str]) -> str | None:
        """The short name for ``params`` (realm, then the components), None when the rule does not apply."""
        if self.default_realm is not None:
            result = params[1] if params[0] == self.default_realm else None
        elif len(params) - 1 != self.components:
            result = None
        else:
            base = _replace_parameters(self.format, params)
            result = (
                None
                if self.match is not None and not self.match.fullmatch(base)
                else base
                if self.sfrom is None
                else java_replace(self.sfrom, _bmp_only(base, self.index), self.sto, self.repeat)
            )
        if result is not None and ("/" in result or "@" in result):
            raise NameRuleError(
                "apply",
                "NoMatchingRule",
                f"rule {self.text} turns the name into {result}, which still holds '/' or '@'",
            )
        return None if result is None else _java_case(result, self.case == "L", self.case == "U", self.index)


def _replace_parameters(fmt: str, params: list[str]) -> str:
    out, start = [], 0
    while start < len(fmt):
        piece = _PARAMETER.match(fmt, start)  # never empty here: it takes text up to a '$', or the '$'
        assert piece is not None  # every part of the pattern is optional: it matches anywhere
        out.append(piece["text"])
        if piece["digits"] is not None:
            number = _java_int(piece["digits"])
            if number is None or number >= len(params):
                raise NameRuleError(
                    "apply",
                    "BadFormatString",
                    f"{fmt} refers to ${piece['digits']} but the name has only $0 to ${len(params) - 1}",
                )
            out.append(params[number])
        start = piece.end()
    return "".join(out)


def parse_kerberos_rules(rules: Sequence[str], default_realm: str) -> list[KerberosRule]:
    """The rules as Kafka's broker reads them at start; :class:`NameRuleError` (stage ``rules``) where it would
    refuse to start, :class:`UnsupportedRule` for a regex we cannot evaluate exactly."""
    return [_kerberos_rule(index, rule, default_realm) for index, rule in enumerate(rules)]


def _whole_rule(parser: re.Pattern[str], index: int, rule: str, how: str) -> re.Match[str]:
    """``rule`` (the ``index``-th) parsed whole by ``parser``, or the broker's refusal naming how a rule is written."""
    found = parser.match(rule)
    if found is None or found.end() != len(rule):
        raise NameRuleError(
            "rules", "IllegalArgumentException", f"rule {index + 1} ({rule}) is not a rule Kafka reads: write {how}"
        )
    return found


def _kerberos_rule(index: int, rule: str, default_realm: str) -> KerberosRule:
    found = _whole_rule(
        _KERBEROS_RULE, index, rule, "DEFAULT or RULE:[n:format](regex)s/from/to/g with optional /L or /U"
    )
    if found["default"]:
        return KerberosRule(rule, index, default_realm=default_realm)
    components = _java_int(found["n"])
    if components is None:
        raise NameRuleError(
            "rules",
            "NumberFormatException",
            f"rule {index + 1} ({rule}) needs the number of "
            "components in RULE:[n:...] (1 for name@REALM, 2 for name/host@REALM)",
        )
    match = None if found["match"] is None else _compile(index, found["match"])
    sfrom = None if found["sfrom"] is None else _compile(index, found["sfrom"])
    return KerberosRule(
        rule,
        index,
        None,
        components,
        found["format"],
        match,
        sfrom,
        found["sto"] or "",
        found["g"] == "g",
        found["case"],
    )


def kerberos_params(principal: str) -> list[str] | None:
    """``[realm, first, second?]`` as Kafka's ``KerberosName`` splits ``principal``; None for a name without a
    realm (Kafka uses such a name as it is); :class:`NameRuleError` for a malformed one."""
    found = _KERBEROS_NAME.fullmatch(principal)
    if found is None:
        if "@" in principal:
            raise NameRuleError(
                "name",
                "IllegalArgumentException",
                f"{principal} is not a Kerberos name Kafka parses (at most two components, one realm)",
            )
        return None
    parts = [found["realm"], found["first"]]
    return parts if found["second"] is None else [*parts, found["second"]]


def kerberos_short_name(principal: str, rules: Sequence[str], default_realm: str) -> str:
    """The short name Kafka's ``KerberosShortNamer`` gives ``principal``: the broker's principal is
    ``User:<this>``. ``default_realm`` is the broker's (the JVM's krb5.conf ``default_realm``)."""
    parsed = parse_kerberos_rules(rules, default_realm)
    params = kerberos_params(principal)
    if params is None:
        return principal
    for rule in parsed:
        if (result := rule.apply(params)) is not None:
            return result
    raise NameRuleError("apply", "NoMatchingRule", f"no rule maps {principal}")


# ---- ssl.principal.mapping.rules -------------------------------------------------------------------------------
_SSL_RULE = (
    rf"(?P<default>DEFAULT)|RULE:(?P<pattern>(?:\\{_DOT}|[^\\/])*)/(?P<replacement>(?:\\{_DOT}|[^\\/])*)"
    rf"/(?P<case>[LU]?){_DOT}*?|(?P<other>{_DOT}*?)"
)
_SSL_SPLITTER = re.compile(rf"\s*(?P<rule>{_SSL_RULE})\s*(?:,\s*|{_END})", re.ASCII)
_SSL_PARSER = re.compile(_SSL_RULE, re.ASCII)
_BACK_REFERENCE = re.compile(r"\$(\d+)", re.ASCII)


@dataclass(frozen=True)
class SslRule:
    text: str
    index: int
    pattern: re.Pattern[str] | None = None  # None for DEFAULT
    replacement: str = ""
    case: str = ""

    def apply(self, name: str) -> str | None:
        if self.pattern is None:
            return name
        found = self.pattern.fullmatch(name)
        if found is None:
            return None
        replacement = _escape_missing_groups(self.replacement, self.pattern.groups)
        return _java_case(
            java_replace(self.pattern, _bmp_only(name, self.index), replacement, True),
            self.case == "L",
            self.case == "U",
            self.index,
        )


def _escape_missing_groups(replacement: str, groups: int) -> str:
    """A ``$n`` naming no group becomes literal text: ``\\`` is inserted, at positions of the original text."""
    if groups == 0:
        return replacement
    value = replacement
    for reference in java_finditer(_BACK_REFERENCE, replacement):
        digits = reference.group(1)
        if digits.startswith("0"):
            continue
        number = _java_int(digits)
        if number is None:
            raise NameRuleError("apply", "NumberFormatException", f"${digits} is too large a group number")
        while number > groups and number >= 10:
            number //= 10
        if number > groups:
            at = reference.start(1) - 1
            value = value[:at] + "\\" + value[at:]
    return value


def _java_trim(text: str) -> str:
    start, end = 0, len(text)
    while start < end and text[start] <= " ":
        start += 1
    while end > start and text[end - 1] <= " ":
        end -= 1
    return text[start:end]


def parse_ssl_rules(rules: str) -> list[SslRule]:
    """The rules as Kafka's broker reads ``ssl.principal.mapping.rules`` (one string, rules separated by commas
    outside their regexes); errors as :func:`parse_kerberos_rules`."""
    texts = [found["rule"] for found in java_finditer(_SSL_SPLITTER, _java_trim(rules))]
    return [rule for index, text in enumerate(texts) if (rule := _ssl_rule(index, text)) is not None]


def _ssl_rule(index: int, text: str) -> SslRule | None:
    # _SSL_PARSER always matches (its last branch matches the empty string), though maybe not the whole rule
    found = _whole_rule(_SSL_PARSER, index, text, "DEFAULT or RULE:regex/replacement/ with optional L or U after it")
    if found["default"]:
        return SslRule(text, index)
    if found["pattern"] is None:
        return None  # an empty rule: Kafka ignores it
    return SslRule(text, index, _compile(index, found["pattern"]), found["replacement"], found["case"])


def ssl_principal_name(distinguished_name: str, rules: str) -> str:
    """The name Kafka's ``SslPrincipalMapper`` gives a certificate subject (RFC 2253): the broker's principal is
    ``User:<this>``."""
    for rule in parse_ssl_rules(rules):
        if (result := rule.apply(distinguished_name)) is not None:
            return result
    raise NameRuleError("apply", "NoMatchingRule", f"no rule maps {distinguished_name}")
