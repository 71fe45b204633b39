"""secure-mirror lag PROFILE: per topic-partition, the source's end offset against the mirror's checkpoint; and the
flow's heartbeat, flagged when stale (text: a ``heartbeat:`` line; ``--json``: the rows, unchanged)."""

from __future__ import annotations

import argparse
import json

from secure_mirror.errors import EXIT_OK
from secure_mirror.kafka import client_support
from secure_mirror.profile import load_profile
from secure_mirror.run.lag import format_table, lag, lag_heartbeat


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("profile", help="the profile YAML file")
    parser.add_argument("--json", action="store_true", help="print the rows as JSON")


def run(args: argparse.Namespace) -> int:
    profile = load_profile(args.profile)
    client_support.require(profile.mechanisms, "lag")
    rows = lag(profile)
    if args.json:
        print(json.dumps([row.to_dict() for row in rows], indent=2))
        return EXIT_OK
    print(format_table(rows))
    if (beat := lag_heartbeat(profile)) is not None:
        print(beat.text())
    return EXIT_OK
