"""Secret references: a profile names where a secret lives (``env:NAME`` or ``file:/path``), never its value.

The value is read only by :meth:`SecretRef.resolve`, called by the renderers and the run layer. Nothing in
this module puts a value into a message or a ``repr``: errors name the reference, which is not secret.

An ``env:`` secret is in this process's environment, which every child inherits (and shows in
``/proc/PID/environ``): processes we start do so inside :func:`withheld_from_children`, which takes the
``env:`` variables this process has looked at out of the environment for that moment. The children read
secrets from 0600 files, or are handed them through a pipe (:func:`env_secrets`, :func:`adopt`).
"""

from __future__ import annotations

import contextlib
import os
import threading
from dataclasses import dataclass
from pathlib import Path

from secure_mirror.errors import BadInputError
from secure_mirror.profile import policy
from secure_mirror.profile.policy import printable, shorten

ENV_PREFIX = "env:"
FILE_PREFIX = "file:"
HOW_TO_WRITE = "write env:NAME (an environment variable) or file:/absolute/path (a file holding the secret)"
_ENV_LOCK = threading.RLock()  # the environment is changed only under it (see withheld_from_children)
_ENV_SECRETS: set[str] = set()  # names of the env: secrets this process has checked or read
_HANDED: dict[str, str] = {}  # env: secrets a parent handed to this worker process (not in its environment)


@contextlib.contextmanager
def withheld_from_children():
    """Start child processes inside this block: the ``env:`` secrets are out of ``os.environ`` meanwhile."""
    with _ENV_LOCK:
        saved = {name: os.environ.pop(name) for name in sorted(_ENV_SECRETS) if name in os.environ}
        try:
            yield
        finally:
            os.environ.update(saved)


def withheld_names() -> frozenset[str]:
    """The ``env:`` variables :func:`withheld_from_children` takes out now (a worker started before a name joined
    them still has it in its environment: callers that keep workers start new ones when this changes)."""
    with _ENV_LOCK:
        return frozenset(_ENV_SECRETS)


def env_secrets() -> dict[str, str]:
    """The ``env:`` secrets this process knows, to hand to a worker process of ours through a pipe."""
    with _ENV_LOCK:
        return {**_HANDED, **{name: os.environ[name] for name in _ENV_SECRETS if os.environ.get(name)}}


def adopt(values: dict[str, str]) -> None:
    """In a worker: the ``env:`` secrets its parent handed over, read as if they were in the environment."""
    _HANDED.update(values)


def _env_value(name: str) -> str | None:
    with _ENV_LOCK:
        value = os.environ.get(name) or _HANDED.get(name)  # ValueError for a name the OS cannot encode
        _ENV_SECRETS.add(name)
        return value


class SecretUnavailable(BadInputError):
    """A reference points at nothing: an unset variable, a missing or unreadable file."""


@dataclass(frozen=True)
class SecretRef:
    """``env:NAME`` or ``file:/path``; ``str()`` and ``repr()`` give the reference, never the value."""

    kind: str  # "env" | "file"
    name: str  # the variable name or the absolute file path

    @classmethod
    def parse(cls, text: str, base_dir: Path | None = None) -> SecretRef:
        if text.startswith(ENV_PREFIX) and text[len(ENV_PREFIX) :]:
            return cls("env", text[len(ENV_PREFIX) :])
        if text.startswith(FILE_PREFIX) and text[len(FILE_PREFIX) :]:
            path = Path(text[len(FILE_PREFIX) :])
            try:
                path = path.expanduser()
            except RuntimeError:  # ~user of an unknown user
                raise ValueError(
                    f"{text}: cannot expand {path.parts[0]} (no such user); write an absolute path"
                ) from None
            return cls("file", str(path if path.is_absolute() or base_dir is None else base_dir / path))
        raise ValueError(f"not a secret reference; {HOW_TO_WRITE} (literal secrets are not allowed in a profile)")

    def __str__(self) -> str:
        return f"{self.kind}:{self.name}"

    def __repr__(self) -> str:
        return f"SecretRef({str(self)!r})"

    def problem(self) -> str | None:
        """Why this reference cannot be resolved (with the fix), or None when it can."""
        try:
            return self._problem()
        except (OSError, ValueError) as exc:  # a NUL byte, a name the OS cannot encode or that is too long ...
            reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else "not a usable name"
            what = "environment variable name" if self.kind == "env" else "file name"
            return f"cannot use {self._short()} as a {what} ({reason}); fix the reference"

    def _short(self) -> str:
        return printable(shorten(str(self)))

    def _problem(self) -> str | None:
        if self.kind == "env":
            if not _env_value(self.name):
                return f"environment variable {self.name} is not set (or empty); export it before running"
            return None
        path = Path(self.name)
        if not path.is_file():
            return f"file {path} does not exist; create it (mode 0600) or fix the path"
        if not os.access(path, os.R_OK):
            return f"file {path} is not readable by this user; fix its owner or mode"
        return None

    def resolve(self) -> str:
        """The secret's value. A trailing newline of a file is dropped (``echo pw > file`` is the usual way)."""
        problem = self.problem()
        if problem:
            raise SecretUnavailable(f"{self._short()}: {problem}")
        if self.kind == "env":
            if (value := _env_value(self.name)) is None:  # unset since problem() looked
                raise SecretUnavailable(f"{self._short()}: {self._problem()}")
        else:
            try:
                value = Path(self.name).read_bytes().decode("utf-8").removesuffix("\n").removesuffix("\r")
            except OSError as exc:
                raise SecretUnavailable(f"{self._short()}: cannot read it ({exc.strerror}); fix the file") from None
            except UnicodeDecodeError:  # the message would quote the bytes around the error: say only where
                raise SecretUnavailable(
                    f"{self._short()}: the secret is not UTF-8 text; rewrite the file as UTF-8"
                ) from None
        if not _encodable(value):  # os.environ decodes undecodable bytes to lone surrogates
            raise SecretUnavailable(f"{self._short()}: the secret is not valid UTF-8 text; set it again as UTF-8")
        if (match := policy.FORBIDDEN.search(value)) is not None:  # where, never what: the value is the secret
            raise SecretUnavailable(
                f"{self._short()}: the secret contains {policy.describe(match.group())}, which "
                "no client configuration can carry safely; set a secret without it"
            )
        return value


def _encodable(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True
