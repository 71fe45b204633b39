"""Secret references: a profile names where a secret lives (``env:NAME`` or ``file:/path``), never its value.

The value is read only by :meth:`SecretRef.resolve`, called by the renderers and the run layer. Nothing in
this module puts a value into a message or a ``repr``: errors name the reference, which is not secret.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from secure_mirror.errors import BadInputError

ENV_PREFIX = "env:"
FILE_PREFIX = "file:"
HOW_TO_WRITE = "write env:NAME (an environment variable) or file:/absolute/path (a file holding the secret)"


class SecretUnavailable(BadInputError):
    """A reference points at nothing: an unset variable, a missing or unreadable file."""


@dataclass(frozen=True)
class SecretRef:
    """``env:NAME`` or ``file:/path``; ``str()`` and ``repr()`` give the reference, never the value."""

    kind: str  # "env" | "file"
    name: str  # the variable name or the absolute file path

    @classmethod
    def parse(cls, text: str, base_dir: Path | None = None) -> SecretRef:
        if text.startswith(ENV_PREFIX) and text[len(ENV_PREFIX):]:
            return cls("env", text[len(ENV_PREFIX):])
        if text.startswith(FILE_PREFIX) and text[len(FILE_PREFIX):]:
            path = Path(text[len(FILE_PREFIX):]).expanduser()
            return cls("file", str(path if path.is_absolute() or base_dir is None else base_dir / path))
        raise ValueError(f"not a secret reference; {HOW_TO_WRITE} (literal secrets are not allowed in a profile)")

    def __str__(self) -> str:
        return f"{self.kind}:{self.name}"

    def __repr__(self) -> str:
        return f"SecretRef({str(self)!r})"

    def problem(self) -> str | None:
        """Why this reference cannot be resolved (with the fix), or None when it can."""
        if self.kind == "env":
            if not os.environ.get(self.name):
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
            raise SecretUnavailable(f"{self}: {problem}")
        if self.kind == "env":
            return os.environ[self.name]
        return Path(self.name).read_text(encoding="utf-8").removesuffix("\n").removesuffix("\r")
