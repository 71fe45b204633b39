"""The arguments several commands share, each worded once: the profile, a flag, an admin identity, the wait for an
answer."""

from __future__ import annotations

import argparse

from secure_mirror.preflight import DEFAULT_TIMEOUT


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


def timeout(parser: argparse.ArgumentParser, answers: str) -> None:
    """``--timeout S``: seconds to wait for each of ``answers`` (the command refuses a number that is not positive)."""
    parser.add_argument(
        "--timeout",
        type=float,
        default=DEFAULT_TIMEOUT,
        metavar="S",
        help=f"seconds to wait for each {answers} answer (default {DEFAULT_TIMEOUT:g})",
    )
