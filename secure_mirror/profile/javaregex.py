"""Java regular expressions (the dialect of MirrorMaker and Spark's ``subscribePattern``) checked and translated
to Python's ``re`` so both sides select the same topics.

Only constructs that mean the same in both, or that translate exactly, are accepted. Everything else is refused
with the reason, so a profile never selects different topics in Spark (Java) and in our own tools (Python).
"""

from __future__ import annotations

import re

# POSIX classes Java spells \p{Name}; their ASCII contents (Java's default, without UNICODE_CHARACTER_CLASS).
_POSIX_CLASSES = {
    "Lower": "a-z",
    "Upper": "A-Z",
    "ASCII": "\\x00-\\x7f",
    "Alpha": "a-zA-Z",
    "Digit": "0-9",
    "Alnum": "a-zA-Z0-9",
    "Punct": "!-/:-@\\[-`{-~",
    "Graph": "!-~",
    "Print": " -~",
    "Blank": " \\t",
    "Cntrl": "\\x00-\\x1f\\x7f",
    "XDigit": "0-9a-fA-F",
    "Space": " \\t\\n\\x0b\\f\\r",
}
# Escapes whose meaning differs between Java and Python (or that one of them lacks).
_REFUSED_ESCAPES = {
    "h": "\\h (horizontal whitespace) is Java-only; use [ \\t]",
    "H": "\\H is Java-only; use [^ \\t]",
    "v": "\\v means vertical whitespace in Java but only \\x0b in Python; write the characters",
    "V": "\\V is Java-only",
    "R": "\\R (any line break) is Java-only",
    "X": "\\X (grapheme cluster) is Java-only",
    "G": "\\G (end of previous match) is Java-only",
    "Z": "\\Z differs between Java and Python; use $ (topic names have no line breaks)",
    "c": "\\c (control character) is Java-only; use \\xhh",
    "k": "back-references are not supported (no subscription pattern can combine them; Java reads \\12 unlike Python)",
    "0": "octal escapes differ between Java and Python; use \\xhh",
    "x": None,  # \xhh is the same in both; Java's \x{h..h} is refused below
    "U": "\\U (eight hex digits) is Python-only; use \\uhhhh",
    "N": "\\N{name} names characters differently in Java and Python; write the character or \\uhhhh",
}
# Only where the text may hold non-ASCII letters (not topic names): Java 17's \b counts them as word characters.
_REFUSED_FOR_UNICODE_TEXT = {
    "b": "\\b differs between Java versions on non-ASCII letters; use lookarounds with an explicit class",
    "B": "\\B differs between Java versions on non-ASCII letters; use lookarounds with an explicit class",
}
_JAVA_GROUP_NAME = re.compile(r"[A-Za-z][A-Za-z0-9]*>")
_INLINE_FLAGS = re.compile(r"\(\?([a-zA-Z]*(?:-[a-zA-Z]*)?)([:)])")


class JavaRegexError(ValueError):
    """The pattern is not a valid Java regex, or uses a construct Python cannot reproduce exactly."""


def to_python(pattern: str, ascii_text: bool = True) -> str:
    """The Python ``re`` pattern (to be compiled with ``re.ASCII``) equivalent to the Java ``pattern``; with
    ``ascii_text`` false also for text that may hold non-ASCII letters."""
    out: list[str] = []
    i, in_class = 0, False
    while i < len(pattern):
        char = pattern[i]
        if char == "\\":
            if not ascii_text and pattern[i + 1 : i + 2] in _REFUSED_FOR_UNICODE_TEXT:
                raise JavaRegexError(_REFUSED_FOR_UNICODE_TEXT[pattern[i + 1]])
            text, i = _escape(pattern, i, in_class)
            out.append(text)
            continue
        if in_class:
            in_class = _class_char(pattern, i, in_class)
        elif char == "[":
            in_class = True
        elif char == "(":
            out.append(_group_opening(pattern, i))
            i += 1 if not pattern.startswith("(?<", i) or _is_lookbehind(pattern, i) else 3
            continue
        elif char == "{":
            _check_repetition(pattern, i)
        out.append(char)
        i += 1
    if in_class:
        raise JavaRegexError("unclosed character class '['")
    return "".join(out)


def compile_java(pattern: str, ascii_text: bool = True) -> re.Pattern[str]:
    """Compile a Java regex as Python; raise :class:`JavaRegexError` naming the problem."""
    translated = to_python(pattern, ascii_text)
    try:
        return re.compile(translated, re.ASCII)
    except re.error as exc:
        raise JavaRegexError(f"does not compile: {exc.msg} at position {exc.pos}") from None
    except RecursionError:
        raise JavaRegexError("groups are nested too deeply to compile; simplify the pattern") from None
    except OverflowError:
        raise JavaRegexError("a repetition count is too large; use * or + instead") from None


def _class_char(pattern: str, i: int, in_class: bool) -> bool:
    """Inside [...]: refuse Java's nested classes and intersections; return whether we are still inside."""
    char = pattern[i]
    opening = pattern[i - 1] == "[" or pattern[i - 2 : i] == "[^"
    if char == "]" and not opening:
        return False
    if char == "[":
        raise JavaRegexError("nested character classes ([a[b]]) are Java-only; write one class like [ab]")
    if pattern.startswith("&&", i):
        raise JavaRegexError("character class intersection (&&) is Java-only; list the characters instead")
    return in_class


def _escape(pattern: str, i: int, in_class: bool) -> tuple[str, int]:
    if i + 1 >= len(pattern):
        raise JavaRegexError("the pattern ends with a lone backslash")
    letter = pattern[i + 1]
    if letter == "Q":
        end = pattern.find("\\E", i + 2)
        end = len(pattern) if end < 0 else end
        return re.escape(pattern[i + 2 : end]), min(end + 2, len(pattern))
    if letter in "pP":
        return _property_class(pattern, i, in_class)
    if letter.isdigit() and letter != "0":
        raise JavaRegexError(_REFUSED_ESCAPES["k"])
    if letter == "x" and pattern.startswith("{", i + 2):
        raise JavaRegexError("\\x{...} is Java-only; use \\xhh or \\uhhhh")
    if letter == "z":
        return "\\Z", i + 2
    if letter == "e":
        return "\\x1b", i + 2
    reason = _REFUSED_ESCAPES.get(letter)
    if reason:
        raise JavaRegexError(reason)
    return pattern[i : i + 2], i + 2


def _property_class(pattern: str, i: int, in_class: bool) -> tuple[str, int]:
    negated = pattern[i + 1] == "P"
    if pattern.startswith("{", i + 2):
        end = pattern.find("}", i + 3)
        if end < 0:
            raise JavaRegexError("unclosed \\p{...}")
        name, after = pattern[i + 3 : end], end + 1
    else:
        name, after = pattern[i + 2 : i + 3], i + 3
    contents = _POSIX_CLASSES.get(name.removeprefix("Is"))
    if contents is None:
        known = ", ".join(sorted(_POSIX_CLASSES))
        raise JavaRegexError(f"\\p{{{name}}} has no exact Python equivalent; use one of {known} or a class like [a-z]")
    if in_class and negated:
        raise JavaRegexError("\\P{...} inside [...] cannot be translated; write the negated class explicitly")
    if in_class:
        return contents, after
    return f"[{'^' if negated else ''}{contents}]", after


def _group_opening(pattern: str, i: int) -> str:
    if pattern.startswith("(?P", i):
        raise JavaRegexError("(?P...) is Python-only; Java names a group with (?<name>...)")
    if pattern.startswith(("(?#", "(?("), i):
        raise JavaRegexError(f"{pattern[i : i + 3]}...) is Python-only (a comment or a conditional group)")
    if pattern.startswith("(?<", i) and not _is_lookbehind(pattern, i):
        if not _JAVA_GROUP_NAME.match(pattern, i + 3):
            raise JavaRegexError("a group name is a letter then letters or digits, ended by '>' (?<name>...)")
        return "(?P<"  # Java's named group (?<name>...) is Python's (?P<name>...)
    flags = _INLINE_FLAGS.match(pattern, i)
    if flags and flags.group(1):
        _check_flags(flags.group(1), flags.group(2))
    return "("


def _is_lookbehind(pattern: str, i: int) -> bool:
    return pattern[i + 3 : i + 4] in ("=", "!")


def _check_flags(letters: str, closing: str) -> None:
    unsupported = sorted(set(letters.replace("-", "")) - set("ims"))
    if unsupported:
        raise JavaRegexError(f"inline flag(s) {''.join(unsupported)} differ between Java and Python; use only i, m, s")
    if closing == ")":
        raise JavaRegexError(f"write the flags as a scoped group (?{letters}:...) so they apply to this pattern only")


def _check_repetition(pattern: str, i: int) -> None:
    if not re.match(r"\{\d+(,\d*)?\}", pattern[i:], re.ASCII):
        raise JavaRegexError(
            "'{' must start a repetition like {3} or {1,3} (Java rejects it otherwise); escape it as \\{"
        )
