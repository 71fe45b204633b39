"""The arguments several commands share, each worded once: the profile, a flag, an admin identity, the wait for an
answer or a step, and the one type of an option that takes seconds; and the reading of the values two commands
check alike (both clusters' admins, an existing folder)."""

from __future__ import annotations

import argparse
from pathlib import Path

from secure_mirror import folders
from secure_mirror.errors import BadInputError
from secure_mirror.preflight import DEFAULT_TIMEOUT
from secure_mirror.preflight.admin_identity import admin_clusters
from secure_mirror.profile.cluster import Cluster, Side
from secure_mirror.profile.models import Profile


def profile(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("profile", help="the profile YAML file")


def flag(parser: argparse.ArgumentParser, name: str, help_text: str) -> None:
    parser.add_argument(name, action="store_true", help=help_text)


def as_admin(parser: argparse.ArgumentParser, purpose: str, without: str) -> None:
    """``--as-admin ADMIN``, read by ``preflight/admin_identity.admin_clusters``; ``purpose``: what the admin does,
    ``without``: what happens when it is not given."""
    parser.add_argument(
        "--as-admin",
        metavar="ADMIN",
        help=f"{purpose} with an admin identity: a profile file, or SIDE.KEY=VALUE,... (principal, keytab / "
        f"username, password); without it, {without}",
    )


def both_admins(profile: Profile, value: str) -> dict[Side, Cluster]:
    """``--as-admin`` read (``admin_clusters``) where a command needs an admin identity of both clusters."""
    admins = admin_clusters(profile, value)
    if set(admins) != {"source", "target"}:
        raise BadInputError("--as-admin: name an admin identity for both the source and the target")
    return admins


def existing_folder(option: str, value: str, fix: str = "") -> Path:
    """The folder ``option`` names (``folders.named``), which must exist; ``fix`` ends the sentence when it does not."""
    folder = folders.named(value)
    if not folder.is_dir():
        raise BadInputError(f"{option}: {folder} is not a folder{fix}")
    return folder


STEP_TIMEOUT = 300.0  # a cut-over's step (a long drain may need more: --timeout)
MOST_SECONDS = 10**6  # far beyond any wait a command means, short of what Python's waits and the clients take


def seconds(text: str) -> float:
    """The type of every option that takes seconds (``--timeout``, ``--status-interval``): a number above 0 and below
    ``MOST_SECONDS`` (``0``, ``nan`` and ``inf`` refused), else a usage error: one sentence, exit 2."""
    try:
        value = float(text)
    except ValueError:
        value = 0.0
    if not 0 < value < MOST_SECONDS:
        raise argparse.ArgumentTypeError(f"{text[:40]!r} is not a positive number of seconds below {MOST_SECONDS}")
    return value


def timeout(parser: argparse.ArgumentParser, answers: str) -> None:
    """``--timeout S``: seconds to wait for each of ``answers``."""
    _timeout(parser, DEFAULT_TIMEOUT, f"seconds to wait for each {answers} answer")


def step_timeout(parser: argparse.ArgumentParser) -> None:
    """``--timeout S`` of ``cutover`` and ``failback``: how long each step may wait (for the mirror to catch up, the
    fence to settle, the job to stop), not one request's timeout (``kafka/timeouts.py`` maps it to the clients')."""
    _timeout(parser, STEP_TIMEOUT, "seconds each step may wait")


def _timeout(parser: argparse.ArgumentParser, default: float, meaning: str) -> None:
    parser.add_argument(
        "--timeout", type=seconds, default=default, metavar="S", help=f"{meaning} (default {default:g})"
    )


def secrets(parser: argparse.ArgumentParser, values_means: str) -> None:
    """``--secrets references|values``: how the files written carry the profile's secrets (render/providers.py)."""
    parser.add_argument(
        "--secrets",
        choices=("references", "values"),
        help="references (the default): Kafka config provider references (${env:NAME}, ${directory:/dir:file}, "
        f"${{jceks-...:alias}}) that Java clients resolve, so no file holds a secret (docs/security.md); values: "
        f"{values_means}",
    )
