"""Load a profile file and report every problem in it at once, each as ``<field.path>: <what>; <fix>``."""

from __future__ import annotations

import difflib
import types
import typing
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ValidationError
from pydantic_core import ErrorDetails

from secure_mirror.errors import BadInputError
from secure_mirror.profile import compat, policy
from secure_mirror.profile.fields import Problem
from secure_mirror.profile.models import Profile
from secure_mirror.profile.secrets import printable, shorten
from secure_mirror.profile.security import MECHANISMS

EXAMPLE = "docs/profile-example.yaml"


class ProfileError(BadInputError):
    """A profile with problems; ``problems`` lists each one, the message lists them all."""

    def __init__(self, source: Path | str, problems: list[str]):
        problems = [printable(problem) for problem in problems]  # one line each, whatever file names hold
        self.problems = problems
        count = f"{len(problems)} problem{'s' if len(problems) != 1 else ''}"
        super().__init__(f"{source}: {count}:\n" + "\n".join(f"  - {problem}" for problem in problems))


def load_profile(path: Path | str) -> Profile:
    """Read, validate and check a profile (files, keytabs, secret references); raise :class:`ProfileError`."""
    path = Path(path)
    data = _read_yaml(path)
    context = {"base_dir": path.resolve().parent, "check_files": True}
    refused = policy.tree_problems(data)
    try:
        profile = Profile.model_validate(data, context=context)
    except ValidationError as exc:
        problems = [(_path(error), format_problem(error)) for error in exc.errors()]
    else:
        problems = []
    if refused or problems:  # the policy's sentence for a field, else the model's
        refused_paths = {where for where, _ in refused}
        raise ProfileError(
            path,
            [f"{'.'.join(_short(p) for p in where) or '(profile)'}: {reason}" for where, reason in refused]
            + [text for where, text in problems if not _under(where, refused_paths)],
        )
    if client_problems := compat.client_problems(profile):  # what a real client would refuse at start
        raise ProfileError(path, client_problems)
    return profile


def _path(error: ErrorDetails) -> tuple[str, ...]:
    return tuple(str(part) for part in _without_union_tags(error["loc"]))


def _under(where: tuple[str, ...], paths: set[tuple[str, ...]]) -> bool:
    """True when ``where`` is one of ``paths``, or inside or above one of them (the same value's problem)."""
    return any(where[: len(p)] == p or p[: len(where)] == where for p in paths)


def _read_yaml(path: Path) -> Any:
    try:
        text = path.read_bytes().decode("utf-8")
    except OSError as exc:
        raise ProfileError(path, [f"(file): cannot read it ({exc.strerror}); check the path"]) from None
    except UnicodeDecodeError as exc:
        raise ProfileError(
            path, [f"(file): not UTF-8 text (byte {exc.start + 1}); save the profile as UTF-8"]
        ) from None
    try:
        data = yaml.load(text, Loader=_ProfileLoader)  # a SafeLoader, see below
    except yaml.YAMLError as exc:  # only the position and the problem: the snippet could hold anything
        mark = getattr(exc, "problem_mark", None)
        where = f"line {mark.line + 1} column {mark.column + 1}" if mark else "somewhere"
        problem = getattr(exc, "problem", None) or "invalid YAML"
        if isinstance(exc, _NotInAProfile):  # valid YAML, refused: its problem says the fix
            raise ProfileError(path, [f"(file): {where}: {problem}"]) from None
        if isinstance(exc, yaml.reader.ReaderError):  # NUL and other control characters YAML does not allow
            code = exc.character if isinstance(exc.character, int) else ord(exc.character)
            where, problem = f"character {exc.position + 1}", f"the control character #x{code:02x} is not allowed"
        raise ProfileError(path, [f"(file): not valid YAML at {where}: {problem}; fix the syntax"]) from None
    if not isinstance(data, dict):
        raise ProfileError(path, [f"(file): the top level must be a mapping; start from {EXAMPLE}"])
    return data


MAX_DEPTH = 50  # a profile nests five levels; deeper input is an attack or an accident, not a profile
MERGE_KEY_REFUSED = (
    "merge keys (<<) are not accepted in a profile (with two, one silently overrides the other); "
    "write the keys out in this mapping, so the profile loads one way only"
)


class _NotInAProfile(yaml.constructor.ConstructorError):
    """Valid YAML that a profile refuses; its problem is the whole sentence, fix included."""


class _ProfileLoader(yaml.SafeLoader):
    """PyYAML's SafeLoader, made to refuse with a position (a YAMLError) what it would otherwise crash on or
    silently accept: nesting deep enough to exhaust Python's stack, duplicate keys (the last one would win),
    merge keys (``<<``: the profile would read two ways), lone surrogates, and scalars Python cannot hold (a
    5000-digit integer, the date 2001-02-30)."""

    def __init__(self, stream: str):
        super().__init__(stream)
        self._depth = 0

    def compose_node(self, parent: Any, index: Any) -> Any:
        self._depth += 1
        try:
            if self._depth > MAX_DEPTH:
                raise yaml.composer.ComposerError(
                    None, None, f"nested more than {MAX_DEPTH} levels deep", self.peek_event().start_mark
                )
            return super().compose_node(parent, index)
        finally:
            self._depth -= 1

    def construct_mapping(self, node: Any, deep: bool = False) -> Any:
        if isinstance(node, yaml.MappingNode):  # before the base class merges anything
            seen: set = set()
            for key_node, _ in node.value:
                if key_node.tag == "tag:yaml.org,2002:merge":  # `<<:` or `!!merge x:`; a quoted "<<" is a key
                    raise _NotInAProfile(None, None, MERGE_KEY_REFUSED, key_node.start_mark)
                key = self.construct_object(key_node, deep=deep)
                try:
                    duplicate = key in seen
                    seen.add(key)
                except TypeError:  # unhashable: the base class reports it with its position
                    continue
                if duplicate:
                    raise yaml.constructor.ConstructorError(
                        None, None, f"duplicate key {_short(key)!r} (only one may be given)", key_node.start_mark
                    )
        return super().construct_mapping(node, deep=deep)

    def construct_scalar(self, node: Any) -> Any:
        value = super().construct_scalar(node)
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:  # "\ud800" in a double-quoted string: no file name or JAAS value can hold it
            raise yaml.constructor.ConstructorError(
                None, None, "a \\uD800-\\uDFFF escape (half of a UTF-16 pair) is not a character", node.start_mark
            ) from None
        return value

    def construct_object(self, node: Any, deep: bool = False) -> Any:
        try:
            return super().construct_object(node, deep=deep)
        except yaml.YAMLError:
            raise
        except Exception:  # noqa: BLE001 - PyYAML's scalar constructors fail in many ways on odd input:
            # int("9" * 5000), date(2001, 2, 30), "!!int" alone (IndexError), "!!bool" alone (KeyError) ...
            raise yaml.constructor.ConstructorError(
                None,
                None,
                f"not a valid {node.tag.rsplit(':', 1)[-1]} (empty, too large, or a date that "
                "does not exist); quote it to make it a string",
                node.start_mark,
            ) from None


def format_problem(error: ErrorDetails) -> str:
    """One pydantic error as ``<field.path>: <what is wrong>; <how to fix>`` (never the input value)."""
    loc = _without_union_tags(error["loc"])
    cause = (error.get("ctx") or {}).get("error")
    if isinstance(cause, Problem):
        loc = (*loc, *cause.subpath.split("."))
    return f"{'.'.join(_short(part) for part in loc) or '(profile)'}: {_describe(error)}"


def _short(part: Any) -> str:
    """A key as it appears in a message: huge keys are cut (the message must stay readable)."""
    return shorten(str(part), 60)


def _describe(error: ErrorDetails) -> str:
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
    close = difflib.get_close_matches(str(loc[-1])[:100], allowed, n=1)
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
