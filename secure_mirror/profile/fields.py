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

from secure_mirror.profile import policy
from secure_mirror.profile.policy import printable, shorten
from secure_mirror.profile.secrets import HOW_TO_WRITE, SecretRef

KEYTAB_MAGIC = b"\x05\x02"  # MIT/Java keytab file format version 0x0502


class Problem(ValueError):
    """A validation problem that belongs to a sub-field (``subpath``) of the field being validated."""

    def __init__(self, subpath: str, message: str):
        super().__init__(message)
        self.subpath = subpath


def _context(info: ValidationInfo) -> dict[str, Any]:
    return info.context or {}


def expand_user(path: Path) -> Path:
    """``~/x`` and ``~user/x`` expanded; an unknown user is a ValueError (pathlib raises RuntimeError)."""
    try:
        return path.expanduser()
    except RuntimeError:
        raise ValueError(
            f"{path}: cannot expand {path.parts[0]} (no such user or no home folder); write an absolute path"
        ) from None


def in_profile_folder(path: Path, info: ValidationInfo) -> Path:
    """``path`` as the profile means it: a relative one is taken relative to the profile's folder (when validation
    has one in its context)."""
    base = _context(info).get("base_dir")
    return path if path.is_absolute() or base is None else Path(base) / path


def _absolute(path: Path, info: ValidationInfo) -> Path:
    path = in_profile_folder(expand_user(path), info)
    policy.check(str(path))  # the profile's own folder lands in rendered files too
    return path


def file_problem(path: Path) -> str | None:
    """Why ``path`` cannot be read as a file by this user (with the fix), or None."""
    try:
        return _file_problem(path)
    except (OSError, ValueError) as exc:  # a name too long, a NUL byte, a folder we may not search ...
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else "not a usable file name"
        return f"cannot use {shorten(str(path))} as a file ({reason}); fix the path"


def _file_problem(path: Path) -> str | None:
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


def _head(path: Path, size: int) -> bytes:
    """The first ``size`` bytes; a file that cannot be read (``/proc/self/mem``, an I/O error) is a ValueError."""
    try:
        with path.open("rb") as handle:
            return handle.read(size)
    except OSError as exc:
        raise ValueError(f"cannot read {shorten(str(path))} ({exc.strerror}); point at a regular file") from None


def _keytab(value: Path, info: ValidationInfo) -> Path:
    path = _input_file(value, info)
    if _context(info).get("check_files") and _head(path, 2) != KEYTAB_MAGIC:
        raise ValueError(f"{path} is not a keytab (no 0x0502 header); export one with kadmin ktadd or ktutil")
    return path


MAX_PEM_BYTES = 1 << 20  # a certificate chain or a key is a few kB; Kafka inlines them into its configuration


def _pem_text(path: Path, what: str) -> str:
    """The file as ASCII text (PEM is ASCII, and Kafka's Java client reads it inline), else a ValueError."""
    data = _head(path, MAX_PEM_BYTES + 1)
    if len(data) > MAX_PEM_BYTES:
        raise ValueError(f"{path} is larger than {MAX_PEM_BYTES // 1024} kB, too large for a PEM {what}")
    try:
        return data.decode("ascii")
    except UnicodeDecodeError:
        raise ValueError(f"{path} is not a PEM {what} (PEM files are ASCII text); convert it with openssl") from None


def _pkcs8_key(value: Path, info: ValidationInfo) -> Path:
    path = _input_file(value, info)
    if not _context(info).get("check_files"):
        return path
    text = _pem_text(path, "private key")
    if "-----BEGIN PRIVATE KEY-----" not in text and "-----BEGIN ENCRYPTED PRIVATE KEY-----" not in text:
        raise ValueError(
            f"{path} is not a PEM PKCS#8 private key, which Kafka's Java client needs; convert it with "
            "openssl pkcs8 -topk8 -in KEY -out KEY.pk8 (add -nocrypt for no password)"
        )
    return path


def _certificate(value: Path, info: ValidationInfo) -> Path:
    path = _input_file(value, info)
    if not _context(info).get("check_files"):
        return path
    from cryptography import x509

    text = _pem_text(path, "certificate")
    try:
        x509.load_pem_x509_certificate(text.encode("ascii"))
    except ValueError:
        raise ValueError(
            f"{path} is not a PEM X.509 certificate (-----BEGIN CERTIFICATE-----); "
            "convert it with openssl x509 -outform PEM"
        ) from None
    return path


def certificate_subject(path: Path) -> str:
    """The certificate's subject as Kafka's brokers read it (RFC 2253), before their ssl.principal.mapping.rules;
    a ValueError when the subject holds a character no rendered file can carry."""
    from cryptography import x509

    subject = x509.load_pem_x509_certificate(path.read_bytes()).subject.rfc4514_string()
    if (reason := policy.problem(subject)) is not None:  # it lands in ACL files and scripts like a profile value
        raise ValueError(
            f"the subject of certificate {printable(str(path))} {reason.replace('; remove it', '')}; "
            "issue a certificate whose subject has no such character"
        )
    return subject


def secret_file_exposure(path: Path, what: str = "keytab") -> str | None:
    """Why another user can get at a file holding the mirror's credentials (a keytab, a password file, a private
    key), or None: group or others have any access, another user owns it, or the path names a symbolic link. Whoever
    reads it can act as the mirror; it still works, so validate and pre-flight both warn (fix:
    :func:`secret_file_fix`). A file that is gone or cannot be examined is the file checks' business: None."""
    try:
        link = os.readlink(path) if path.is_symlink() else None
        info = path.stat()
    except (OSError, ValueError):
        return None
    reasons = []
    if link is not None:
        reasons.append(f"is a symbolic link to {link} (whoever can change the link chooses the file read)")
    if info.st_uid != os.getuid():
        reasons.append(f"is owned by uid {info.st_uid}, not by this user (uid {os.getuid()})")
    if (mode := info.st_mode & 0o777) & 0o077:
        reasons.append(f"has mode {mode:04o} (group/others can access it)")
    if not reasons:
        return None
    listed = reasons[0] if len(reasons) == 1 else f"{', '.join(reasons[:-1])} and {reasons[-1]}"
    return f"{what} {path} {listed}: anyone who reads it can act as the mirror"


def secret_file_fix(path: Path) -> str:
    """What makes :func:`secret_file_exposure` pass: the file itself named, owned by this user, mode 0600."""
    try:
        link = path.is_symlink()
        real, info = (path.resolve() if link else path), path.stat()
    except (OSError, ValueError, RuntimeError):  # RuntimeError: a loop of links
        return f"chmod 0600 {path}"
    steps = [f"name the file itself ({real}) instead of the link"] if link else []
    if info.st_uid != os.getuid():
        steps.append(f"give it to this user (chown {os.getuid()} {real}, as root)")
    if info.st_mode & 0o077 or not steps:
        steps.append(f"chmod 0600 {real}")
    return " and ".join(steps)


def keytab_exposure(path: Path) -> str | None:
    """:func:`secret_file_exposure` of a keytab."""
    return secret_file_exposure(path, "keytab")


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
CertificateFile = Annotated[Path, AfterValidator(_certificate)]
Secret = Annotated[
    SecretRef,
    PlainValidator(_secret_ref),
    PlainSerializer(str, return_type=str),
    WithJsonSchema(
        {
            "type": "string",
            "pattern": "^(env:|file:|jceks://|localjceks://).+$",
            "description": (
                "a secret reference: env:NAME, file:/path or an alias in a Hadoop credential store, "
                "jceks://file/path.jceks#alias (never the secret itself)"
            ),
        }
    ),
]
