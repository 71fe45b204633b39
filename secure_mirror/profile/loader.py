"""Load a profile file and report every problem in it at once, each as ``<field.path>: <what>; <fix>``."""

from __future__ import annotations

import difflib
import types
import typing
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ValidationError

from secure_mirror.errors import BadInputError
from secure_mirror.profile.fields import Problem, keytab_warning
from secure_mirror.profile.models import MECHANISMS, GssapiSasl, Profile, truststore_type

EXAMPLE = "docs/profile-example.yaml"


class ProfileError(BadInputError):
    """A profile with problems; ``problems`` lists each one, the message lists them all."""

    def __init__(self, source: Path | str, problems: list[str]):
        self.problems = problems
        count = f"{len(problems)} problem{'s' if len(problems) != 1 else ''}"
        super().__init__(f"{source}: {count}:\n" + "\n".join(f"  - {problem}" for problem in problems))


def load_profile(path: Path | str) -> Profile:
    """Read, validate and check a profile (files, keytabs, secret references); raise :class:`ProfileError`."""
    path = Path(path)
    data = _read_yaml(path)
    context = {"base_dir": path.resolve().parent, "check_files": True}
    try:
        return Profile.model_validate(data, context=context)
    except ValidationError as exc:
        raise ProfileError(path, [format_problem(error) for error in exc.errors()]) from None


def _read_yaml(path: Path) -> Any:
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ProfileError(path, [f"(file): cannot read it ({exc.strerror}); check the path"]) from None
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:  # only the position and the problem: the snippet could hold anything
        mark = getattr(exc, "problem_mark", None)
        where = f"line {mark.line + 1} column {mark.column + 1}" if mark else "somewhere"
        problem = getattr(exc, "problem", None) or "invalid YAML"
        raise ProfileError(path, [f"(file): not valid YAML at {where}: {problem}; fix the syntax"]) from None
    if not isinstance(data, dict):
        raise ProfileError(path, [f"(file): the top level must be a mapping; start from {EXAMPLE}"])
    return data


def format_problem(error: dict[str, Any]) -> str:
    """One pydantic error as ``<field.path>: <what is wrong>; <how to fix>`` (never the input value)."""
    loc = _without_union_tags(error["loc"])
    cause = (error.get("ctx") or {}).get("error")
    if isinstance(cause, Problem):
        loc = (*loc, *cause.subpath.split("."))
    return f"{'.'.join(str(part) for part in loc) or '(profile)'}: {_describe(error)}"


def _describe(error: dict[str, Any]) -> str:
    kind = error["type"]
    if kind == "extra_forbidden":
        return _unknown_key(error["loc"])
    if kind == "missing":
        return f"is required; add it (see {EXAMPLE})"
    if kind == "union_tag_invalid":
        return f"unknown mechanism {error['ctx']['tag']!r}; use one of {', '.join(MECHANISMS)}"
    if kind == "union_tag_not_found":
        return f"mechanism is required; use one of {', '.join(MECHANISMS)}"
    if kind in ("value_error", "assertion_error"):
        return error["msg"].removeprefix("Value error, ").removeprefix("Assertion failed, ")
    return f"{error['msg'][0].lower()}{error['msg'][1:]}; see {EXAMPLE}"


def _without_union_tags(loc: tuple) -> tuple:
    """pydantic puts the discriminator value into the path (``sasl.GSSAPI.keytab``); users never wrote it."""
    return tuple(part for i, part in enumerate(loc) if not (i and loc[i - 1] == "sasl" and part in MECHANISMS))


def _unknown_key(loc: tuple) -> str:
    allowed = _allowed_keys(loc[:-1])
    close = difflib.get_close_matches(str(loc[-1]), allowed, n=1)
    if close:
        return f"unknown key; did you mean {close[0]!r}?"
    return f"unknown key; remove it (allowed here: {', '.join(allowed)})" if allowed else "unknown key; remove it"


def _allowed_keys(loc: tuple) -> list[str]:
    node: Any = Profile
    for part in loc:
        node = _child(node, part)
    return list(node.model_fields) if isinstance(node, type) and issubclass(node, BaseModel) else []


def _child(node: Any, part: Any) -> Any:
    node = _unwrap(node)
    if isinstance(node, type) and issubclass(node, BaseModel):
        field = node.model_fields.get(str(part))
        return field.annotation if field else None
    origin, args = typing.get_origin(node), typing.get_args(node)
    if origin is dict:
        return args[1]
    if origin is list:
        return args[0]
    if origin in (typing.Union, types.UnionType):  # a discriminated union: ``part`` is the tag
        return next((member for member in args if part in _tags(member)), None)
    return None


def _tags(member: Any) -> tuple:
    field = getattr(member, "model_fields", {}).get("mechanism")
    return typing.get_args(field.annotation) if field else ()


def _unwrap(node: Any) -> Any:
    """Strip ``Annotated[...]`` and ``Optional[...]`` until the real type shows."""
    while True:
        if typing.get_origin(node) is typing.Annotated:
            node = typing.get_args(node)[0]
            continue
        members = [arg for arg in typing.get_args(node) if arg is not type(None)]
        if typing.get_origin(node) in (typing.Union, types.UnionType) and len(members) == 1:
            node = members[0]
            continue
        return node


def profile_warnings(profile: Profile) -> list[str]:
    """Things that work but should be fixed (e.g. a keytab others can read), as ``<field.path>: <advice>``."""
    warnings = []
    for side, cluster in profile.clusters().items():
        if isinstance(cluster.sasl, GssapiSasl) and cluster.sasl.keytab.exists():
            if warning := keytab_warning(cluster.sasl.keytab):
                warnings.append(f"{side}.sasl.keytab: {warning}")
        ca = cluster.tls.ca if cluster.tls else None
        if ca is not None and truststore_type(ca) != "PEM":
            warnings.append(f"{side}.tls.ca: librdkafka (kcat) cannot read a {truststore_type(ca)} truststore; "
                            "also provide the CA as PEM to use librdkafka.conf")
    if profile.uses_kerberos and profile.kerberos is None:
        warnings.append("kerberos: not set, so clients use the system krb5.conf; declare realms or krb5_conf")
    return warnings
