"""secure-mirror schema [--of profile|NAME]: print a JSON Schema: the profile's (for editors and CI checks), or the
shape of ``NAME --json`` (validate, render, groups, lag, verify, doctor, preflight, acls; run: one schema whose
``kind`` tells its lines apart). All are committed in schema/."""

from __future__ import annotations

import argparse
import sys

from secure_mirror.commands import outputs
from secure_mirror.errors import EXIT_OK
from secure_mirror.profile.schema import profile_json_schema_text


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--of", choices=["profile", *outputs.SHAPES], default="profile", help="which schema (profile)")


def run(args: argparse.Namespace) -> int:
    sys.stdout.write(profile_json_schema_text() if args.of == "profile" else outputs.schema_text(args.of))
    return EXIT_OK
