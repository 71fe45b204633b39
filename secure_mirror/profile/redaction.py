"""Spark's redaction settings in ``mirror.spark.conf``: a value may add to what Spark hides, never hide less.

Spark replaces the values of configuration keys and environment variables that its redaction patterns find (Spark
UI's Environment page, event logs, YARN's logs) and of SQL options in plans. Its defaults, read from Spark 4.0.0
(``spark-core``'s ``config/package.scala`` and ``spark-catalyst``'s ``SQLConf.scala``, in pyspark's jars):

- ``spark.redaction.regex``: ``(?i)secret|password|token|access[.]?key``
- ``spark.sql.redaction.options.regex``: ``(?i)url``

A value replaces the default, so one that drops it shows every password, token and JDBC URL it no longer finds.
Spark searches keys and values with the pattern (``Utils.redact``: ``findFirstIn``), so a value that keeps the
default as a run of its top-level alternatives (``<default>|<yours>``) finds everything the default finds; any other
value is refused at validate (see ``runtime.Spark``).

``spark.redaction.string.regex`` and ``spark.sql.redaction.string.regex`` (the SQL one falls back to the other) have no
default: Spark replaces what they find in strings such as SQL plans. The job always hides its own pattern
(:data:`JOB_PLAN_REDACTION`: secret settings and PEM keys in plan strings) and adds the profile's or the cluster's as a
further alternative (:func:`plan_redaction`), so a value must stand as one alternative (balanced, no comments flag);
and because Spark replaces each match of the whole pattern from left to right, a match of that value that starts
before a secret setting and ends inside it leaves the rest of the secret showing: a warning says so
(:func:`string_redaction_finding`).

A ``spark.*`` setting can also come as ``-D<key>=<value>`` in a JVM's options (``spark.driver.extraJavaOptions``,
``spark.executorEnv.JAVA_TOOL_OPTIONS``: ``SparkConf`` reads ``spark.*`` system properties), so the same rules apply
to each such ``-D`` (:func:`redaction_problem`).
"""

from __future__ import annotations

import re

from secure_mirror.profile.jvm_options import holds_jvm_options, system_properties

SPARK_REDACTION_DEFAULTS = {
    "spark.redaction.regex": "(?i)secret|password|token|access[.]?key",
    "spark.sql.redaction.options.regex": "(?i)url",
}
STRING_REDACTION_KEYS = ("spark.redaction.string.regex", "spark.sql.redaction.string.regex")
SPARK_REDACTION_KEYS = (*SPARK_REDACTION_DEFAULTS, *STRING_REDACTION_KEYS)  # every redaction setting of Spark 4.0.0
# The job's own (run/job/entry.py sets it): a password/secret/token setting or JAAS option (quoted or up to the next
# comma) and PEM private keys (ssl.keystore.key); Spark replaces the matches with *********(redacted).
JOB_PLAN_REDACTION = (
    r'(?i)(password|secret|token)[^=\s]*=("(?:[^"\\]|\\.)*"|[^,\s}]*)'
    r"|-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?-----END [A-Z ]*PRIVATE KEY-----"
)
_COMMENTS_FLAG = re.compile(r"\(\?[a-zA-Z]*x[a-zA-Z]*(?:-[a-zA-Z]*)?[:)]")
_WHAT_SHOWS = {
    "spark.redaction.regex": "settings and environment variables holding passwords, secrets, tokens and access keys",
    "spark.sql.redaction.options.regex": "SQL options holding URLs (which often carry credentials)",
}


def top_level_alternatives(pattern: str) -> list[str]:
    """``pattern`` (a Java regex) cut at each ``|`` outside groups, character classes, escapes and ``\\Q...\\E``."""
    return _scan(pattern)[0]


def _scan(pattern: str) -> tuple[list[str], bool]:
    """The top-level alternatives of ``pattern``, and whether it is self-contained: every group it opens closed, none
    it did not open closed, no class, ``\\Q`` or escape left open at its end (so ``(?:<pattern>)`` is one group)."""
    pieces, start, depth, in_class, i, closed = [], 0, 0, 0, 0, True
    while i < len(pattern):
        char = pattern[i]
        if pattern.startswith("\\Q", i):  # quoted up to \E, or to the end
            end = pattern.find("\\E", i + 2)
            closed &= end >= 0
            i = len(pattern) if end < 0 else end + 2
            continue
        if char == "\\":
            closed &= i + 1 < len(pattern)
            i += 2
            continue
        if char == "[":  # Java nests classes inside classes ([a-z&&[^q]])
            in_class, i = in_class + 1, _class_start(pattern, i)
            continue
        if in_class:
            in_class -= char == "]"
        elif char in "()":
            depth += 1 if char == "(" else -1
            closed &= depth >= 0
        elif char == "|" and depth == 0:
            pieces.append(pattern[start:i])
            start = i + 1
        i += 1
    pieces.append(pattern[start:])
    return pieces, closed and depth == 0 and not in_class


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
    """Why ``mirror.spark.conf.<key>`` would make Spark or the job redact less (with the fix), or None: a redaction
    setting (:data:`SPARK_REDACTION_KEYS`), or JVM options setting one with ``-D``. The value is not repeated: it is
    the user's pattern, and the message names what to write instead."""
    if holds_jvm_options(key):
        found = (f"-D{name}: {why}" for name, v in system_properties(str(value)) if (why := _setting_problem(name, v)))
        return next(found, None)
    return _setting_problem(key, value)


def _setting_problem(key: str, value: object) -> str | None:
    if key in STRING_REDACTION_KEYS:
        return _string_problem(value)
    default = SPARK_REDACTION_DEFAULTS.get(key)
    if default is None or (isinstance(value, str) and keeps(value, default)):
        return None
    return (
        f"replaces Spark's default pattern {default} and does not keep it, so {_WHAT_SHOWS[key]} that it no longer "
        f"finds would show in the Spark UI, event logs and YARN logs; keep the default as an alternative: write "
        f"{default}|<yours>"
    )


def _string_problem(value: object) -> str | None:
    """A string redaction pattern the job cannot add to its own as one alternative (:func:`plan_redaction`)."""
    text = str(value)
    if _COMMENTS_FLAG.search(text):
        why = "turns on the comments flag (?x), where '#' comments out the rest of the pattern"
    elif not _scan(text)[1]:
        why = "is not self-contained (a group, class or \\Q...\\E left open, or a ')' it did not open)"
    else:
        return None
    return (
        f"{why}, so the job cannot add it to its own plan redaction as one alternative (<the job's>|(?:<yours>)) and "
        "plans would show the secrets the job's pattern hides; write a balanced pattern without (?x), or remove it"
    )


def string_redaction_finding(key: str) -> str | None:
    """For a warning: what a string redaction pattern in ``mirror.spark.conf.<key>`` does to the job's own, or None."""
    if key not in STRING_REDACTION_KEYS:
        return None
    return (
        "the job adds this pattern to its own plan redaction (password, secret and token settings, PEM private keys), "
        "and Spark replaces matches from left to right: where a match of yours begins before such a setting and ends "
        "inside it (db\\.password before =<the password>), only your match is hidden and the rest of the secret shows"
    )


def plan_redaction(effective: str | None) -> str:
    """The SQL string redaction the job sets: :data:`JOB_PLAN_REDACTION`, with ``effective`` (the session's
    ``spark.sql.redaction.string.regex``, which falls back to ``spark.redaction.string.regex``: the profile's or the
    cluster's) as a further alternative. Java reads ``(?i)`` at the job's start up to the pattern's end, which only
    widens the addition; the job's alternatives come first, so at each position Spark tries them first."""
    if not effective or effective == JOB_PLAN_REDACTION or effective.startswith(JOB_PLAN_REDACTION + "|(?:"):
        return effective or JOB_PLAN_REDACTION
    return f"{JOB_PLAN_REDACTION}|(?:{effective})"
