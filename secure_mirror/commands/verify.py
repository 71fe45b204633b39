"""secure-mirror verify PROFILE: compare source and target over the mirrored range (exit 0 match, 1 mismatch); ``--json``
as ``schema/verify-output.schema.json``."""

from __future__ import annotations

import argparse

from secure_mirror.commands import outputs
from secure_mirror.errors import EXIT_FAILED, EXIT_OK
from secure_mirror.kafka import client_support
from secure_mirror.profile import load_profile
from secure_mirror.verify import verify


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("profile", help="the profile YAML file")
    parser.add_argument("--json", action="store_true", help="print the result as JSON (schema --of verify)")


def run(args: argparse.Namespace) -> int:
    profile = load_profile(args.profile)
    client_support.require(profile.mechanisms, "verify")
    result = verify(profile)
    print(outputs.dump(outputs.verify_output(result)) if args.json else result.text())
    return EXIT_OK if result.ok else EXIT_FAILED
