"""Secret references: a profile names where a secret lives (``env:NAME``, ``file:/path``, or an alias in a Hadoop
credential store, ``jceks://file/path.jceks#alias``: ``credstores``), never its value.

The value is read only by :meth:`SecretRef.resolve`, called by the renderers and the run layer. Nothing in
this module puts a value into a message or a ``repr``: errors name the reference, which is not secret.

An ``env:`` secret is in this process's environment, which every child inherits (and shows in
``/proc/PID/environ``): processes we start do so inside :func:`withheld_from_children`, which takes the
``env:`` variables this process has looked at out of the environment for that moment (so is the credential stores'
password, ``HADOOP_CREDSTORE_PASSWORD``, once a ``jceks`` reference was read: only the JVM reading the store gets
it). The children read secrets from 0600 files, or are handed them through a pipe (:func:`env_secrets`,
:func:`adopt`).
"""

from __future__ import annotations

import contextlib
import os
import threading
from dataclasses import dataclass
from pathlib import Path

from secure_mirror.errors import BadInputError
from secure_mirror.profile import credstore_reader, credstores, policy
from secure_mirror.profile.policy import printable, shorten

ENV_PREFIX = "env:"
FILE_PREFIX = "file:"
HOW_TO_WRITE = (
    "write env:NAME (an environment variable), file:/absolute/path (a file holding the secret) or "
    f"{credstores.HOW_TO_WRITE}"
)
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
    """A reference points at nothing: an unset variable, a missing or unreadable file, a store without the alias."""


@dataclass(frozen=True)
class SecretRef:
    """``env:NAME``, ``file:/path`` or ``PROVIDER#ALIAS``; ``str()`` and ``repr()`` give the reference, never the
    value."""

    kind: str  # "env" | "file" | "jceks"
    name: str  # the variable name, the absolute file path, or the credential provider URI
    alias: str = ""  # jceks: the alias in the store

    @classmethod
    def parse(cls, text: str, base_dir: Path | None = None) -> SecretRef:
        if credstores.is_reference(text):
            return cls("jceks", *credstores.parse(text))
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
        return f"{self.name}#{self.alias}" if self.kind == "jceks" else f"{self.kind}:{self.name}"

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

    def local_file(self) -> Path | None:
        """The file on this machine the secret is read from: a ``file:`` secret's, a local credential store."""
        if self.kind == "jceks":
            return credstores.local_file(self.name)
        return Path(self.name) if self.kind == "file" else None

    def _short(self) -> str:
        return printable(shorten(str(self)))

    def _problem(self) -> str | None:
        if self.kind == "jceks":
            return credstores.problem(self.name, self.alias)
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
        value = self._read()
        if not _encodable(value):  # os.environ decodes undecodable bytes to lone surrogates
            raise SecretUnavailable(f"{self._short()}: the secret is not valid UTF-8 text; set it again as UTF-8")
        if (match := policy.FORBIDDEN.search(value)) is not None:  # where, never what: the value is the secret
            raise SecretUnavailable(
                f"{self._short()}: the secret contains {policy.describe(match.group())}, which "
                "no client configuration can carry safely; set a secret without it"
            )
        return value

    def _read(self) -> str:
        if self.kind == "jceks":
            return self._stored()
        if self.kind == "env":
            if (value := _env_value(self.name)) is None:  # unset since problem() looked
                raise SecretUnavailable(f"{self._short()}: {self._problem()}")
            return value
        try:
            return Path(self.name).read_bytes().decode("utf-8").removesuffix("\n").removesuffix("\r")
        except OSError as exc:
            raise SecretUnavailable(f"{self._short()}: cannot read it ({exc.strerror}); fix the file") from None
        except UnicodeDecodeError:  # the message would quote the bytes around the error: say only where
            raise SecretUnavailable(
                f"{self._short()}: the secret is not UTF-8 text; rewrite the file as UTF-8"
            ) from None

    def _stored(self) -> str:
        """The alias's value, read through Hadoop's CredentialProviderFactory; a sentence naming store and alias."""
        password = _env_value(credstores.PASSWORD_ENV)  # withheld from our other children from now on
        answer = credstore_reader.read(self.name, self.alias, password)
        if answer.value is not None:
            return answer.value
        store, fix = f"the credential store {self.name}", credstores.create_command(self.name, self.alias)
        if answer.aliases:
            problem = (
                f"{store} has no alias {self.alias} (it holds {answer.aliases}); add it with {fix}, or fix the alias"
            )
        elif answer.aliases == 0:
            problem = f"{store} holds no alias (is the path right?); add it with {fix}, or fix the path"
        elif "password" in (answer.error or "").lower():
            how = f"{credstores.PASSWORD_ENV} is set" if password else f"{credstores.PASSWORD_ENV} is not set"
            problem = (
                f"{store} did not open with its keystore password ({how}; Hadoop's default is 'none'): "
                f"{answer.error}; set {credstores.PASSWORD_ENV} to the store's password"
            )
        else:
            problem = f"cannot open {store}: {answer.error}; fix the reference or the store"
        raise SecretUnavailable(f"{self._short()}: {printable(shorten(problem, 600))}")


def _encodable(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True
