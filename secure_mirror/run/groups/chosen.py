"""Which groups ``groups --group`` names (pure): a name as given, and a pattern (an fnmatch glob: ``billing-*``,
``app-?``, ``[ab]-*``; a name holding ``*``, ``?`` or ``[`` is one) matched against the groups the profile selects on
the source, listed once (``Session.selected_groups``): a group is then asked about only when it is shown."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from fnmatch import fnmatchcase

PATTERN_CHARACTERS = frozenset("*?[")


def is_pattern(name: str) -> bool:
    return not PATTERN_CHARACTERS.isdisjoint(name)


def chosen(asked: Sequence[str], listed: Iterable[str]) -> tuple[list[str], list[str]]:
    """(the groups ``asked`` names or matches among ``listed``, each once, a name where asked and a pattern's matches in
    name order; the patterns that matched none). Group ids are case-sensitive, and so is the match."""
    names = sorted(listed)
    out: dict[str, None] = {}
    unmatched = []
    for piece in dict.fromkeys(asked):
        if not is_pattern(piece):
            out[piece] = None
            continue
        matches = [name for name in names if fnmatchcase(name, piece)]
        out.update(dict.fromkeys(matches))
        if not matches:
            unmatched.append(piece)
    return list(out), unmatched
