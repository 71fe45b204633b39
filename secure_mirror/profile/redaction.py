"""Spark's redaction settings in ``mirror.spark.conf``: a value may add to what Spark hides, never hide less.

Spark replaces the values of configuration keys and environment variables that its redaction patterns find (Spark
UI's Environment page, event logs, YARN's logs) and of SQL options in plans. Its defaults, read from Spark 4.0.0
(``spark-core``'s ``config/package.scala`` and ``spark-catalyst``'s ``SQLConf.scala``, in pyspark's jars):

- ``spark.redaction.regex``: ``(?i)secret|password|token|access[.]?key``
- ``spark.sql.redaction.options.regex``: ``(?i)url``

A value replaces the default, so one that drops it shows every password, token and JDBC URL it no longer finds.
Spark searches keys and values with the pattern (``Utils.redact``: ``findFirstIn``), so a value that keeps the
default as a run of its top-level alternatives (``<default>|<yours>``) finds everything the default finds; any other
value is refused at validate (see ``models.Spark``).

``spark.redaction.string.regex`` and ``spark.sql.redaction.string.regex`` have no default pattern (unset, nothing
in plan strings is redacted by Spark), so any value only adds redaction and is accepted. The job sets the SQL one
itself when the profile does not (``run/job/entry.py``, ``PLAN_REDACTION``).
"""

from __future__ import annotations

import re

SPARK_REDACTION_DEFAULTS = {
    "spark.redaction.regex": "(?i)secret|password|token|access[.]?key",
    "spark.sql.redaction.options.regex": "(?i)url",
}
_COMMENTS_FLAG = re.compile(r"\(\?[a-zA-Z]*x[a-zA-Z]*(?:-[a-zA-Z]*)?[:)]")
_WHAT_SHOWS = {
    "spark.redaction.regex": "settings and environment variables holding passwords, secrets, tokens and access keys",
    "spark.sql.redaction.options.regex": "SQL options holding URLs (which often carry credentials)",
}


def top_level_alternatives(pattern: str) -> list[str]:
    """``pattern`` (a Java regex) cut at each ``|`` outside groups, character classes, escapes and ``\\Q...\\E``."""
    pieces, start, depth, in_class, i = [], 0, 0, 0, 0
    while i < len(pattern):
        char = pattern[i]
        if pattern.startswith("\\Q", i):  # quoted up to \E, or to the end
            end = pattern.find("\\E", i + 2)
            i = len(pattern) if end < 0 else end + 2
            continue
        if char == "\\":
            i += 2
            continue
        if char == "[":  # Java nests classes inside classes ([a-z&&[^q]])
            in_class, i = in_class + 1, _class_start(pattern, i)
            continue
        if in_class:
            in_class -= char == "]"
        elif char in "()":
            depth += 1 if char == "(" else -1
        elif char == "|" and depth == 0:
            pieces.append(pattern[start:i])
            start = i + 1
        i += 1
    pieces.append(pattern[start:])
    return pieces


def _class_start(pattern: str, i: int) -> int:
    """The index after a class's ``[``, its ``^`` and a ``]`` that, first in a class, Java reads as a character."""
    i += 1 + pattern.startswith("^", i + 1)
    return i + pattern.startswith("]", i)


def keeps(value: str, default: str) -> bool:
    """True when the alternatives of ``default`` appear, in order and together, among those of ``value``, and no
    inline ``x`` flag (comments mode, where ``#`` comments out the rest of a line) can swallow them."""
    if _COMMENTS_FLAG.search(value):
        return False
    ours, theirs = top_level_alternatives(default), top_level_alternatives(value)
    return any(theirs[i : i + len(ours)] == ours for i in range(len(theirs) - len(ours) + 1))


def redaction_problem(key: str, value: object) -> str | None:
    """Why ``mirror.spark.conf.<key>`` would make Spark redact less than by default (with the fix), or None. The
    value is not repeated: it is the user's pattern, and the message names what to write instead."""
    default = SPARK_REDACTION_DEFAULTS.get(key)
    if default is None or (isinstance(value, str) and keeps(value, default)):
        return None
    return (
        f"replaces Spark's default pattern {default} and does not keep it, so {_WHAT_SHOWS[key]} that it no longer "
        f"finds would show in the Spark UI, event logs and YARN logs; keep the default as an alternative: write "
        f"{default}|<yours>"
    )
