"""One input policy for every value that can land in a rendered file.

Whatever its kind (an alias, a host, a principal, a realm, a path, a topic pattern, a client option, a resolved
secret, a folder given on the command line, a name read from a certificate), a value may not hold a character
that some reader of our files treats as structure rather than text and that nobody means in such a value:

- line terminators: ``\\n``, ``\\r``, U+0085 (NEL), U+2028, U+2029 (a new line is a new setting, a new command);
- NUL and every other C0 or C1 control character, and DEL (C readers stop at NUL; terminals act on the rest);
- the invisible Unicode format characters that reorder or hide text (bidirectional overrides and isolates,
  U+200E/U+200F, a byte-order mark): a reviewer would read something else than the program does.

The narrower rules of each kind (an alias is a word, a host is ``host:port``, an option key is a dotted name)
are on the fields of the model; this module holds the one rule they all share, the sentence it says, and how a
value is shown in a message (:func:`printable`, :func:`shorten`).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from secure_mirror.errors import BadInputError

FORBIDDEN = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029\u200e\u200f\u202a-\u202e\u2066-\u2069\ufeff]")
OPTION_KEY = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")  # a Kafka, Spark or MirrorMaker 2 configuration key

_NAMES = {
    "\x00": "NUL",
    "\t": "a tab",
    "\n": "a line feed",
    "\r": "a carriage return",
    "\x0b": "a vertical tab",
    "\x0c": "a form feed",
    "\x1b": "an escape",
    "\x7f": "DEL",
    "\x85": "a next-line (NEL)",
    "\u2028": "a line separator",
    "\u2029": "a paragraph separator",
    "\ufeff": "a byte-order mark",
}


def describe(char: str) -> str:
    """``char`` named for a message: its code point and what it is, never the surrounding value."""
    code = f"U+{ord(char):04X}"
    if char in _NAMES:
        return f"{_NAMES[char]} ({code})"
    if char in "\u200e\u200f" or "\u202a" <= char <= "\u202e" or "\u2066" <= char <= "\u2069":
        return f"an invisible text-direction mark ({code})"
    return f"a control character ({code})"


def problem(text: str) -> str | None:
    """Why ``text`` breaks the policy (naming the first bad character and where it is), or None."""
    match = FORBIDDEN.search(text)
    if match is None:
        return None
    return (
        f"contains {describe(match.group())} at character {match.start() + 1}, which no rendered file can "
        "carry safely; remove it"
    )


def check(text: str) -> str:
    """``text`` unchanged, or ValueError with :func:`problem`'s sentence (for pydantic validators)."""
    if (reason := problem(text)) is not None:
        raise ValueError(reason)
    return text


def tree_problems(
    data: Any, path: tuple[str, ...] = (), _seen: set[int] | None = None
) -> list[tuple[tuple[str, ...], str]]:
    """Every policy problem in the loaded YAML ``data``: (field path, sentence), keys and values alike. YAML aliases
    can share one container many times over (a "billion laughs") or make a list contain itself (``a: &x [*x]``):
    each container is walked once, under the first path that reaches it (the model refuses such values itself)."""
    seen = set() if _seen is None else _seen
    found: list[tuple[tuple[str, ...], str]] = []
    if isinstance(data, (dict, list)):
        if id(data) in seen:
            return found
        seen.add(id(data))
    if isinstance(data, dict):
        for key, value in data.items():
            where = (*path, str(key))
            if isinstance(key, str) and (reason := problem(key)):
                found.append((where, f"the key {reason}"))
            found.extend(tree_problems(value, where, seen))
    elif isinstance(data, list):
        for index, value in enumerate(data):
            found.extend(tree_problems(value, (*path, str(index)), seen))
    elif isinstance(data, str) and (reason := problem(data)):
        found.append((path, reason))
    return found


def option_key_problem(key: str) -> str | None:
    """Why ``key`` cannot be a configuration key (letters, digits, ``.``, ``_``, ``-``), or None."""
    if OPTION_KEY.match(key):
        return None
    return "is not a configuration key; use letters, digits, '.', '_' and '-' (starting with a letter or digit)"


def check_argument(value: str, option: str) -> str:
    """A folder or file given on the command line (``--out``, ``--run-dir``): it lands in rendered files too."""
    if (reason := problem(value)) is not None:
        raise BadInputError(f"{option} {shorten(printable(value), 80)}: {reason} (choose another folder)")
    return value


_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]")


def printable(text: str) -> str:
    """``text`` on one line: control characters and line breaks (a file name may hold them) as escapes, so that
    a path in a message cannot start a line of its own that looks like ours."""
    return _CONTROL.sub(lambda match: match.group().encode("unicode_escape").decode("ascii"), text)


def shorten(text: str, limit: int = 200) -> str:
    """``text`` cut to ``limit`` characters for a message (a 5000-character path helps nobody)."""
    return text if len(text) <= limit else f"{text[:limit]}...({len(text)} characters)"


def some_of(names: Sequence[str], most: int = 10) -> str:
    """The first ``most`` of ``names`` and how many more, for a sentence (1,000 group names help nobody in one)."""
    return ", ".join(names[:most]) + (f" and {len(names) - most} more" if len(names) > most else "")
