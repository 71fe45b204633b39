"""Spark settings whose value is a JVM's command-line options, and how Spark splits them into words.

``spark.{driver,executor,yarn.am}.{extra,default}JavaOptions`` are options of the JVMs Spark starts, and so are the
``JAVA_TOOL_OPTIONS``-like variables set through ``spark.executorEnv.*``, ``spark.yarn.appMasterEnv.*`` and
``spark.kubernetes.driverEnv.*``. A ``-D<name>=<value>`` among them sets a system property of those JVMs: a debug
switch (:mod:`.warnings`), or a ``spark.*`` setting, which Spark's ``SparkConf`` reads from system properties
(:mod:`.redaction`).
"""

from __future__ import annotations

from collections.abc import Iterator

JVM_OPTION_KEYS = ("extraJavaOptions", "defaultJavaOptions")  # spark.{driver,executor,yarn.am}.*JavaOptions
ENV_PREFIXES = ("spark.executorEnv.", "spark.yarn.appMasterEnv.", "spark.kubernetes.driverEnv.")
JVM_OPTION_VARIABLES = ("JAVA_TOOL_OPTIONS", "_JAVA_OPTIONS", "JDK_JAVA_OPTIONS")  # options the JVMs there read


def environment_variable(key: str) -> str | None:
    """The variable a Spark setting ``key`` sets in a container's environment (``spark.executorEnv.X`` -> ``X``)."""
    return next((key[len(prefix) :] for prefix in ENV_PREFIXES if key.startswith(prefix)), None)


def holds_jvm_options(key: str) -> bool:
    """True when the value of the Spark setting ``key`` is read as a JVM's command-line options."""
    return key.endswith(JVM_OPTION_KEYS) or environment_variable(key) in JVM_OPTION_VARIABLES


def split_options(text: str) -> list[str]:
    """``text`` split into words as Spark splits ``extraJavaOptions`` (``Utils.splitCommandString``): blanks separate,
    single quotes keep everything, double quotes keep everything but a backslash, which takes the next character."""
    words, word, quote, in_word, i = [], [], "", False, 0
    while i < len(text):
        char = text[i]
        if quote == '"' and char == "\\":
            word.append(text[i + 1 : i + 2])
            i += 1
        elif char == quote:
            quote = ""
        elif quote:
            word.append(char)
        elif char in "\"'":
            quote, in_word = char, True
        elif not char.isspace():
            word.append(char)
            in_word = True
        elif in_word:
            words.append("".join(word))
            word, in_word = [], False
        i += 1
    return [*words, "".join(word)] if in_word else words


def system_properties(options: str) -> Iterator[tuple[str, str]]:
    """Each ``-D<name>=<value>`` (or ``-D<name>``, value empty) among ``options``: (name, value)."""
    for word in split_options(options):
        if word.startswith("-D"):
            name, _, value = word[2:].partition("=")
            yield name, value
