"""The committed ``--json`` shapes (schema/NAME-output.schema.json) as a JSON Schema validator reads them: jsonschema's
Draft 2020-12 validator, not the pydantic models the schemas are generated from, judges what a command printed.

The schemas are read closed: an object that lists its properties takes no other (``additionalProperties: false``
where the schema says nothing), so a field a command prints and its committed schema does not name fails, as a
field it names with another type does. Objects kept open on purpose (``details``, maps) say so in the schema and
stay open.
"""

from __future__ import annotations

import copy
import json
from functools import cache

from jsonschema import Draft202012Validator

from secure_mirror import paths

SCHEMAS = paths.REPO_ROOT / "schema"


def _closed(node):
    if isinstance(node, dict):
        node = {key: _closed(value) for key, value in node.items()}
        if "properties" in node and "additionalProperties" not in node:
            node["additionalProperties"] = False
    elif isinstance(node, list):
        node = [_closed(item) for item in node]
    return node


@cache
def validator(name: str) -> Draft202012Validator:
    """The validator of ``schema/<name>-output.schema.json``, read closed."""
    schema = json.loads((SCHEMAS / f"{name}-output.schema.json").read_text())
    Draft202012Validator.check_schema(schema)
    return Draft202012Validator(_closed(copy.deepcopy(schema)))


def problems(name: str, printed: str | dict | list) -> list[str]:
    """Where ``printed`` (a command's ``--json`` text, or its parsed value) departs from its committed schema: one
    line per error, with the path to the value."""
    value = json.loads(printed) if isinstance(printed, str) else printed
    return [
        f"{'/'.join(map(str, error.absolute_path)) or '(top)'}: {error.message}"
        for error in sorted(validator(name).iter_errors(value), key=lambda e: list(map(str, e.absolute_path)))
    ]


def assert_valid(name: str, printed: str | dict | list) -> None:
    found = problems(name, printed)
    assert not found, f"not the shape of schema/{name}-output.schema.json:\n" + "\n".join(found[:20])


def assert_valid_lines(name: str, printed: str) -> None:
    """Each line of ``printed`` (``run --json`` prints JSON lines) is one value of the schema."""
    lines = printed.splitlines()
    assert lines, "no line printed"
    for number, line in enumerate(lines, 1):
        found = problems(name, line)
        assert not found, f"line {number} is not the shape of schema/{name}-output.schema.json: {line[:300]}\n" + (
            "\n".join(found[:20])
        )
