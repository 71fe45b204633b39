"""Field types of the profile that know about files: input files, keytabs and secret references.

When the profile is loaded from a file, validation runs with a context ``{"base_dir": ..., "check_files": True}``:
relative paths are taken relative to the profile's folder and every referenced file or variable is checked, so
that one validation pass reports every problem. Built in code without a context, nothing touches the disk.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Annotated, Any

from pydantic import AfterValidator, PlainSerializer, PlainValidator, ValidationInfo, WithJsonSchema

from secure_mirror.profile.secrets import HOW_TO_WRITE, SecretRef

KEYTAB_MAGIC = b"\x05\x02"  # MIT/Java keytab file format version 0x0502


class Problem(ValueError):
    """A validation problem that belongs to a sub-field (``subpath``) of the field being validated."""

    def __init__(self, subpath: str, message: str):
        super().__init__(message)
        self.subpath = subpath


def _context(info: ValidationInfo) -> dict[str, Any]:
    return info.context or {}


def _absolute(path: Path, info: ValidationInfo) -> Path:
    path = path.expanduser()
    base = _context(info).get("base_dir")
    return path if path.is_absolute() or base is None else Path(base) / path


def file_problem(path: Path) -> str | None:
    """Why ``path`` cannot be read as a file by this user (with the fix), or None."""
    if not path.exists():
        return f"file {path} does not exist; fix the path or create the file"
    if not path.is_file():
        return f"{path} is not a regular file; point at the file itself"
    if not os.access(path, os.R_OK):
        return f"file {path} is not readable by this user; fix its owner or mode (chmod 0600, owned by you)"
    return None


def _input_file(value: Path, info: ValidationInfo) -> Path:
    path = _absolute(value, info)
    if _context(info).get("check_files") and (problem := file_problem(path)):
        raise ValueError(problem)
    return path


def _keytab(value: Path, info: ValidationInfo) -> Path:
    path = _input_file(value, info)
    if _context(info).get("check_files") and path.read_bytes()[:2] != KEYTAB_MAGIC:
        raise ValueError(f"{path} is not a keytab (no 0x0502 header); export one with kadmin ktadd or ktutil")
    return path


def _pkcs8_key(value: Path, info: ValidationInfo) -> Path:
    path = _input_file(value, info)
    if _context(info).get("check_files") and b"-----BEGIN PRIVATE KEY-----" not in path.read_bytes() \
            and b"-----BEGIN ENCRYPTED PRIVATE KEY-----" not in path.read_bytes():
        raise ValueError(f"{path} is not a PEM PKCS#8 private key, which Kafka's Java client needs; convert it with "
                         "openssl pkcs8 -topk8 -in KEY -out KEY.pk8 (add -nocrypt for no password)")
    return path


def keytab_warning(path: Path) -> str | None:
    """A keytab other users can read is a credential leak; it still works, so this is only a warning."""
    mode = path.stat().st_mode & 0o777
    if mode & 0o077:
        return f"keytab {path} has mode {mode:04o} (group/others can access it); run chmod 0600 {path}"
    return None


def _secret_ref(value: Any, info: ValidationInfo) -> SecretRef:
    if isinstance(value, SecretRef):
        return value
    if not isinstance(value, str):
        raise ValueError(f"not a secret reference; {HOW_TO_WRITE}")
    ref = SecretRef.parse(value, _context(info).get("base_dir"))
    if _context(info).get("check_files") and (problem := ref.problem()):
        raise ValueError(problem)
    return ref


InputFile = Annotated[Path, AfterValidator(_input_file)]
KeytabFile = Annotated[Path, AfterValidator(_keytab)]
PrivateKeyFile = Annotated[Path, AfterValidator(_pkcs8_key)]
Secret = Annotated[
    SecretRef,
    PlainValidator(_secret_ref),
    PlainSerializer(str, return_type=str),
    WithJsonSchema(
        {
            "type": "string",
            "pattern": "^(env:|file:).+$",
            "description": "a secret reference: env:NAME or file:/path (never the secret itself)",
        }
    ),
]
