"""Folders a command makes for the user (``run --run-dir``, ``render --out``'s parent, ``sandbox --dir``): checked
before any work so a bad one is one sentence naming the option (exit 2), never a traceback."""

from __future__ import annotations

import os
from pathlib import Path

from secure_mirror.errors import BadInputError


def check_creatable(folder: Path, option: str) -> None:
    """Refuse ``folder`` when it could not be made or written, without making it."""
    existing = next(p for p in (folder, *folder.parents) if p.exists() or p.is_symlink())
    if not existing.is_dir():
        refuse(folder, option, f"{existing} is not a folder")
    if not os.access(existing, os.W_OK | os.X_OK):
        refuse(folder, option, f"{existing} is not writable by this user")


def make(folder: Path, option: str, mode: int = 0o700) -> None:
    """Make ``folder`` (and its parents); a failure is bad input naming ``option``."""
    try:
        folder.mkdir(mode=mode, parents=True, exist_ok=True)
    except OSError as exc:
        refuse(folder, option, exc.strerror or type(exc).__name__)


def refuse(folder: Path, option: str, reason: str) -> None:
    raise BadInputError(f"{option} {folder} cannot be created ({reason}); choose another folder")
