"""secure-mirror lag PROFILE: per topic-partition, the source's end offset against the mirror's checkpoint; and the
flow's heartbeat, flagged when stale (text: a ``heartbeat:`` line; ``--json``: both, as
``schema/lag-output.schema.json``)."""

from __future__ import annotations

import argparse

from secure_mirror.commands import outputs
from secure_mirror.errors import EXIT_OK
from secure_mirror.kafka import client_support
from secure_mirror.profile import load_profile
from secure_mirror.run.clients import inspection
from secure_mirror.run.lag import format_table, lag, lag_heartbeat


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("profile", help="the profile YAML file")
    parser.add_argument(
        "--json", action="store_true", help="print the rows and the heartbeat as JSON (schema --of lag)"
    )


def run(args: argparse.Namespace) -> int:
    profile = load_profile(args.profile)
    client_support.require(profile.mechanisms, "lag")
    with inspection(profile) as identities:  # one set for both reads
        rows = lag(profile, identities=identities)
        beat = lag_heartbeat(profile, identities=identities)
    if args.json:
        print(outputs.dump(outputs.lag_output(rows, beat)))
        return EXIT_OK
    print(format_table(rows))
    if beat is not None:
        print(beat.text())
    return EXIT_OK
