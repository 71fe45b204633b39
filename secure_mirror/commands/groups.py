"""secure-mirror groups PROFILE [--json]: per consumer group and source partition, the group's source offset, its
translation through the offset map, the target group's committed offset and the state (docs/failover.md)."""

from __future__ import annotations

import argparse

from secure_mirror.errors import EXIT_OK, BadInputError
from secure_mirror.kafka import client_support
from secure_mirror.profile import load_profile
from secure_mirror.run.groups import report
from secure_mirror.run.groups.session import Session


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("profile", help="the profile YAML file")
    parser.add_argument("--group", action="append", help="only this group (repeat for more; default: mirror.groups)")
    parser.add_argument("--json", action="store_true", help="print the result as JSON (schema: schema --of groups)")


def run(args: argparse.Namespace) -> int:
    profile = load_profile(args.profile)
    if not args.group and not profile.mirror.groups.enabled:
        raise BadInputError(
            "mirror.groups.include selects no consumer group; set it in the profile, or name groups with --group"
        )
    client_support.require(profile.mechanisms, "groups")
    with Session(profile) as session:
        observation = session.observe(args.group)
    result = report.output(
        observation,
        observation.plan(),
        (profile.source.alias, profile.target.alias),
        (session.map_topic, session.checkpoints_topic),
    )
    print(result.model_dump_json(indent=2) if args.json else report.table(result))
    return EXIT_OK
