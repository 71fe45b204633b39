"""One encoder per rendered format, written for the program that reads that format, and registered as the only
way a template places a value (comments included).

Each encoder returns text its reader turns back into exactly the value, or refuses the value with
:class:`UnrepresentableValue` naming the field (never the value). Values already passed the input policy
(``secure_mirror.profile.policy``: no line terminators or control characters); the encoders check again, since
a value can also come from elsewhere (a folder on the command line, a certificate), and a template must not be
able to place what its reader would read as structure.

| filter | reader | what it does |
| --- | --- | --- |
| ``sh`` | bash / POSIX sh | one single-quoted word |
| ``sh_comment`` | bash | text after ``#``: refuses line terminators |
| ``properties_key``, ``properties_value`` | ``java.util.Properties.load(InputStream)`` | backslash escapes |
| ``properties_comment`` | the same | text after ``#``: refuses ``\\n``/``\\r`` |
| ``jaas`` | Kafka's ``JaasConfig``, the JDK's ``ConfigFile`` | a double-quoted string (see ``render/jaas.py``) |
| ``jaas_secret`` | the same (a reference: Kafka's ``JaasConfig`` only) | ``jaas``, or a reference (``render/providers.py``) |
| ``jaas_comment`` | the JDK's ``ConfigFile`` (``StreamTokenizer``) | text after ``//`` |
| ``rdkafka_value``, ``rdkafka_comment`` | kcat ``-F`` (``fgets`` into 512 bytes) | refuses what kcat alters |
| ``krb5_tag``, ``krb5_value``, ``krb5_comment`` | MIT krb5's profile library | refuses what it parses |
| ``jvm_option`` | Spark's ``splitCommandString`` and the launcher's ``parseOptionString`` | one quoted word |
| ``hadoop_xml_name``, ``hadoop_xml_value``, ``xml_comment`` | Hadoop's ``Configuration`` (``*-site.xml``) | XML escapes |
| ``md`` | Markdown (a person) | its marks escaped; a line feed as ``<br>``, other controls named: refuses nothing |
"""

from __future__ import annotations

import json
import re
import shlex
from collections.abc import Callable

from secure_mirror.errors import BadInputError
from secure_mirror.profile import policy
from secure_mirror.render import templating


class UnrepresentableValue(BadInputError):
    """A value a target format cannot carry exactly; the message names the field, never the value."""


def _refuse(field: str, what: str, fmt: str) -> UnrepresentableValue:
    return UnrepresentableValue(f"{field}: the value contains {what}, which {fmt} cannot represent; change the value")


def _policy(value: object, field: str, fmt: str) -> str:
    text = option_text(value)
    if (match := policy.FORBIDDEN.search(text)) is not None:
        raise _refuse(field, policy.describe(match.group()), fmt)
    return text


def option_text(value: object) -> str:
    """An option value as every client reads it: booleans as ``true``/``false``, the rest as ``str``."""
    return str(value).lower() if isinstance(value, bool) else str(value)


# ---- POSIX shell ---------------------------------------------------------------------------------------------
def sh(value: object, field: str = "a shell word") -> str:
    """One word for bash: single quotes (``'`` as ``'"'"'``), inside which bash interprets nothing."""
    return shlex.quote(_policy(value, field, "a shell script"))


def sh_comment(value: object, field: str = "a shell comment") -> str:
    """Text inside a ``#`` comment: a comment ends at the line's end only, so only line terminators matter."""
    return _policy(value, field, "a shell comment")


# ---- Java .properties ----------------------------------------------------------------------------------------
_ESCAPES = {"\\": "\\\\", "\n": "\\n", "\r": "\\r", "\t": "\\t", "\f": "\\f"}


def _escape(text: str, specials: str) -> str:
    out = []
    for char in text:
        if char in _ESCAPES:
            out.append(_ESCAPES[char])
        elif char in specials:
            out.append("\\" + char)
        elif " " <= char <= "~":
            out.append(char)
        else:  # Properties.load(InputStream) reads ISO-8859-1: everything else as UTF-16 \uXXXX units
            encoded = char.encode("utf-16-be")
            out.extend(f"\\u{encoded[i : i + 2].hex()}" for i in range(0, len(encoded), 2))
    return "".join(out)


def properties_key(key: str) -> str:
    return _escape(key, "=: #!")


def properties_value(value: object) -> str:
    """A value that ``Properties.load`` reads back exactly (leading blanks and ``#``/``!`` kept)."""
    escaped = _escape(option_text(value), "")
    if escaped[:1] in (" ", "#", "!"):
        escaped = "\\" + escaped
    return escaped


def properties_comment(value: object, field: str = "a .properties comment") -> str:
    """Text after ``#``: ``Properties.load`` ends a comment at ``\\n`` or ``\\r`` only."""
    return _policy(value, field, "a Java .properties comment")


# ---- JAAS ------------------------------------------------------------------------------------------------------
_JAAS_UNREPRESENTABLE = {
    "\n": "a line break",
    "\r": "a carriage return",
    "${": "'${' (the JDK's JAAS file parser expands it as a system property)",
}


def jaas(value: str, field: str) -> str:
    """``value`` as a double-quoted JAAS option value (``\\`` and ``"`` escaped), or a refusal naming ``field``."""
    for text, description in _JAAS_UNREPRESENTABLE.items():
        if text in value:
            raise UnrepresentableValue(
                f"{field}: the value contains {description}, which a JAAS configuration cannot represent; "
                "change the value (e.g. rotate the password) or the path"
            )
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


def jaas_comment(value: object, field: str = "a JAAS comment") -> str:
    """Text after ``//``: the JDK's tokenizer ends such a comment at ``\\n`` or ``\\r`` only (so ``*/`` is inert)."""
    return _policy(value, field, "a JAAS comment")


# ---- librdkafka.conf, as kcat -F reads it ------------------------------------------------------------------------
RDKAFKA_MAX_LINE = 510  # kcat: fgets(buf, 512): 511 bytes including the newline; a longer line's rest is a new line


def rdkafka_line(key: str, value: str, field: str) -> str:
    """``key=value`` if kcat reads it back exactly, else a refusal naming ``field``."""
    text = _policy(value, field, "a librdkafka configuration file")
    line = f"{key}={text}"
    problem = None
    if text != text.strip():  # kcat trims both ends of the line and of the value after '='
        problem = "blanks at its start or end (kcat trims them)"
    elif "\\=" in text or "\\:" in text:
        problem = "\\= or \\: (kcat unescapes them)"
    elif len(line.encode("utf-8")) > RDKAFKA_MAX_LINE:
        problem = f"more than {RDKAFKA_MAX_LINE} bytes on one line (kcat reads 511 at most)"
    if problem:
        raise _refuse(field, problem, "a librdkafka configuration file")
    return line


def rdkafka_comment(value: object, field: str = "a librdkafka.conf comment") -> str:
    """Text in a ``#`` line: kcat splits a line longer than its buffer, and the rest would be read as a setting."""
    text = _policy(value, field, "a librdkafka configuration file")
    if len(text.encode("utf-8")) > RDKAFKA_MAX_LINE - 80:  # the comment's own words take up to 80 bytes
        raise _refuse(field, f"more than {RDKAFKA_MAX_LINE - 80} bytes", "a librdkafka configuration comment")
    return text


# ---- krb5.conf, as MIT krb5's profile library reads it -----------------------------------------------------------
KRB5_MAX_LINE = 2047  # prof_parse.c reads lines with fgets into a 2048-byte buffer; the rest is a new line
_KRB5_STRUCTURE = re.compile(r"[\s{}=#;\"\\]")


def krb5_tag(value: object, field: str = "a krb5.conf name") -> str:
    """A relation or subsection name: one token, not a section (``[``), a close (``}``) nor a final mark (``*``)."""
    text = _krb5_token(value, field)
    if "*" in text or text[:1] in ("[", "}"):  # MIT's parser cuts a name at '*' (its "final" mark)
        raise _refuse(field, "'*', or '[' or '}' at the start", "a krb5.conf name")
    return text


def krb5_value(value: object, field: str = "a krb5.conf value") -> str:
    """A relation value: one token (a quote would start an escaped string, ``{`` a subsection)."""
    return _krb5_token(value, field)


def _krb5_token(value: object, field: str) -> str:
    text = _policy(value, field, "krb5.conf")
    if not text or _KRB5_STRUCTURE.search(text):
        raise _refuse(field, "a blank, a brace, '=', '#', ';', a quote or a backslash (or is empty)", "krb5.conf")
    if len(text.encode("utf-8")) > KRB5_MAX_LINE - 80:
        raise _refuse(field, f"more than {KRB5_MAX_LINE - 80} bytes", "a krb5.conf line")
    return text


def krb5_comment(value: object, field: str = "a krb5.conf comment") -> str:
    text = _policy(value, field, "krb5.conf")
    if len(text.encode("utf-8")) > KRB5_MAX_LINE - 80:
        raise _refuse(field, f"more than {KRB5_MAX_LINE - 80} bytes", "a krb5.conf comment")
    return text


# ---- JVM options in one string (spark.*.extraJavaOptions) ---------------------------------------------------------
def jvm_option(value: object, field: str = "a JVM option") -> str:
    """One option as Spark splits ``extraJavaOptions``: in double quotes, ``\\`` and ``"`` escaped by a backslash
    (``Utils.splitCommandString`` for executors, the launcher's ``parseOptionString`` for a client-mode driver)."""
    text = _policy(value, field, "a JVM option string")
    if any(ord(char) > 0xFFFF for char in text):  # parseOptionString steps by UTF-16 unit: it doubles their halves
        raise _refuse(field, "a character beyond U+FFFF (Spark's launcher splits it into two)", "a JVM option string")
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


# ---- Hadoop's *-site.xml, as org.apache.hadoop.conf.Configuration reads it --------------------------------------------
_XML_ESCAPES = {"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&apos;"}


def _xml_escape(text: str) -> str:
    return "".join(_XML_ESCAPES.get(char, char) for char in text)


def _xml_text(value: object, field: str, hadoop_syntax: bool = False) -> str:
    text = _policy(value, field, "a Hadoop configuration file")
    if (
        "${" in text and not hadoop_syntax
    ):  # Configuration.get expands ${name} from other properties and system properties
        raise _refuse(field, "'${' (Hadoop's Configuration expands it as a variable)", "a Hadoop configuration file")
    return _xml_escape(text)


def hadoop_xml_name(value: object, field: str = "a Hadoop property name") -> str:
    """A ``<name>``: Configuration trims names, so a name with blanks at its ends or inside cannot be read back."""
    text = option_text(value)
    if not text or any(char.isspace() for char in text):
        raise _refuse(field, "a blank (or is empty)", "a Hadoop property name")
    return _xml_text(text, field)


def hadoop_xml_value(value: object, field: str = "a Hadoop property value", hadoop_syntax: bool = False) -> str:
    """A ``<value>``: XML escapes; blanks at the ends are refused (``Configuration.getTrimmed`` drops them).
    ``hadoop_syntax``: the value was read from a cluster's own site file, where ``${name}`` is Hadoop's variable
    and keeps that meaning here; a value of ours with ``${`` is refused (Hadoop would expand it)."""
    text = option_text(value)
    if text != text.strip():
        raise _refuse(field, "blanks at its start or end (Hadoop trims them)", "a Hadoop property value")
    return _xml_text(text, field, hadoop_syntax)


def ivy_attribute(value: object, field: str = "an Ivy settings value") -> str:
    """An attribute value of an Ivy settings file (``spark.jars.ivySettings``): XML escapes; ``${`` is refused (Ivy
    substitutes ``${name}`` from its variables in every attribute)."""
    text = _policy(value, field, "an Ivy settings file")
    if "${" in text:
        raise _refuse(field, "'${' (Ivy expands it as a variable)", "an Ivy settings file")
    return _xml_escape(text)


def xml_comment(value: object, field: str = "an XML comment") -> str:
    """Text inside ``<!-- -->``: ``--`` may not appear there, nor a trailing ``-``."""
    text = _policy(value, field, "an XML comment")
    if "--" in text or text.endswith("-"):
        raise _refuse(field, "'--' or a trailing '-'", "an XML comment")
    return text


# ---- JSON and Markdown ---------------------------------------------------------------------------------------------
def json_text(data: object) -> str:
    """A whole JSON document: ``json.dumps`` escapes every control character and quote."""
    return json.dumps(data, indent=2) + "\n"


def json_inline(data: object) -> str:
    """A JSON value on one line, for an option that carries JSON (a list of names) inside another format."""
    return json.dumps(data, separators=(",", ":"))


_MD_SPECIAL = re.compile(r"([\\`|<>*_\[\]&])")


def md(value: object) -> str:
    """Any text in Markdown (a table's cell, a heading, a list item), as a person reads it back exactly, refusing
    nothing: a step's error is a client library's message, data to show, never a reason to lose the report.
    Markdown's marks (``|``, backticks, ``<``, ``&``, ``\\`` ...) are escaped with a backslash; a line feed becomes
    ``<br>`` (a line break inside the cell); every other character the input policy forbids is named in a code span
    (`` `U+000D` ``), where it can neither end the row nor hide text."""
    return policy.FORBIDDEN.sub(_md_character, _MD_SPECIAL.sub(r"\\\1", option_text(value)))


def _md_character(match: re.Match[str]) -> str:
    return "<br>" if match.group() == "\n" else f"`U+{ord(match.group()):04X}`"


_TEMPLATE_FILTERS: dict[str, Callable[..., str]] = {
    "sh": sh,
    "sh_comment": sh_comment,
    "properties_key": properties_key,
    "properties_value": properties_value,
    "properties_comment": properties_comment,
    "jaas": jaas,
    "jaas_comment": jaas_comment,
    "rdkafka_comment": rdkafka_comment,
    "krb5_tag": krb5_tag,
    "krb5_value": krb5_value,
    "krb5_comment": krb5_comment,
    "jvm_option": jvm_option,
    "md": md,
    "hadoop_xml_name": hadoop_xml_name,
    "hadoop_xml_value": hadoop_xml_value,
    "xml_comment": xml_comment,
}
for _name, _function in _TEMPLATE_FILTERS.items():
    templating.register_filter(_name, _function)
