"""secure-mirror schema: print the JSON Schema of the profile (for editors and CI checks)."""

from __future__ import annotations

import argparse
import sys

from secure_mirror.errors import EXIT_OK
from secure_mirror.profile.schema import profile_json_schema_text


def add_arguments(parser: argparse.ArgumentParser) -> None:
    del parser  # no options


def run(args: argparse.Namespace) -> int:
    del args
    sys.stdout.write(profile_json_schema_text())
    return EXIT_OK
