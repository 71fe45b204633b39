"""Folders a command makes for the user (``run --run-dir``, ``render --out``, ``sandbox --dir``): checked before any
work so a bad one is one sentence naming the option (exit 2), never a traceback.

The rules: a folder is taken as named (:func:`named`), never through a symbolic link in its last place, dangling or
not (:func:`check_creatable`, :func:`make`); missing parents are made along the named path only (a dangling link
on the way is refused, never followed); an existing folder keeps its mode, and a folder that replaces one is never
wider than it was (:func:`narrowest_mode`).
"""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import NoReturn

from secure_mirror.errors import BadInputError


def named(folder: Path | str) -> Path:
    """``folder`` made absolute as the user named it: ``.`` and ``..`` are taken away as a shell's ``cd`` does, and
    no symbolic link is followed (``Path.resolve`` would follow one in the last place, and then check its target)."""
    return Path(os.path.abspath(folder))


def check_creatable(folder: Path, option: str) -> None:
    """Refuse ``folder`` when it is a symbolic link, or could not be made or written, without making it."""
    check_not_a_link(folder, option)
    existing = next(p for p in (folder, *folder.parents) if p.exists() or p.is_symlink())
    if existing.is_symlink() and not existing.exists():  # dangling, or a loop: mkdir would follow it
        refuse(folder, option, f"{existing} is a symbolic link that leads to no folder")
    if not existing.is_dir():
        refuse(folder, option, f"{existing} is not a folder")
    if not os.access(existing, os.W_OK | os.X_OK):
        refuse(folder, option, f"{existing} is not writable by this user")


def check_not_a_link(folder: Path, option: str, what: str = "folder") -> None:
    if folder.is_symlink():
        raise BadInputError(link_refused(option, folder, what))


def link_refused(option: str, path: Path | str, what: str = "folder") -> str:
    return f"{option} {path} is a symbolic link, and nothing is written through one; name the {what} itself"


def append(path: Path | str, data: bytes, mode: int = 0o666) -> None:
    """``data`` appended to the file ``path`` (created with ``mode``, less the umask) in one write(2) to a descriptor
    opened O_APPEND, so lines of several writers never interleave; never through a symbolic link in its place, which
    raises OSError ELOOP (one put there since the path was checked: the folder may be writable by others)."""
    descriptor = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW, mode)
    try:
        os.write(descriptor, data)
    finally:
        os.close(descriptor)


def replace(path: Path, text: str, mode: int) -> None:
    """Write ``text`` to ``path`` as a new file made with ``mode``: a file or link there is removed first, so the text
    never goes through a link and the file never keeps a wider mode it had."""
    path.unlink(missing_ok=True)
    with os.fdopen(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode), "w", encoding="utf-8") as handle:
        handle.write(text)


def write_durably(path: Path, text: str, mode: int) -> None:
    """Write ``text`` to ``path`` so that a crash at any moment leaves the old file or the new one whole, never a part:
    a temporary file beside it (made with ``mode``, never through a link), synced, renamed over ``path`` (which
    replaces a link there, never follows it), and the folder synced so that the rename itself is kept."""
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    temporary.unlink(missing_ok=True)  # one of ours, left by a process of the same pid that died
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW
    with os.fdopen(os.open(temporary, flags, mode), "w", encoding="utf-8") as handle:
        handle.write(text)
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(temporary, path)
    folder = os.open(path.parent, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(folder)
    finally:
        os.close(folder)


def make(folder: Path, option: str, mode: int = 0o700) -> None:
    """Make ``folder`` (and its parents, along the named path); an existing one keeps its mode. A failure, or a
    symbolic link in ``folder``'s place, is bad input naming ``option``."""
    check_not_a_link(folder, option)
    try:
        folder.mkdir(mode=mode, parents=True, exist_ok=True)  # never follows a link in the place it makes
    except OSError as exc:
        refuse(folder, option, exc.strerror or type(exc).__name__)
    check_not_a_link(folder, option)  # put there since the check: exist_ok accepts a link to a folder


def make_parents(folder: Path, option: str) -> None:
    """Make ``folder``'s missing parents, along the named path, as ``mkdir -p`` does (the umask decides their mode);
    an existing parent may be a link to a folder (``/tmp`` is one on some systems)."""
    try:
        folder.parent.mkdir(mode=0o777, parents=True, exist_ok=True)
    except OSError as exc:
        refuse(folder, option, exc.strerror or type(exc).__name__)


def narrowest_mode(folder: Path, mode: int) -> int:
    """``mode``, narrowed to the permissions ``folder`` has now when it exists: what replaces a folder is never
    wider than it was."""
    try:
        return mode & stat.S_IMODE(folder.lstat().st_mode)
    except FileNotFoundError:
        return mode


def refuse(folder: Path, option: str, reason: str) -> NoReturn:
    raise BadInputError(f"{option} {folder} cannot be created ({reason}); choose another folder")
