"""secure-mirror failback PROFILE --back BACK --as-admin ADMIN --run-dir DIR --back-run-dir BACK_DIR [--group G ...]
[--dry-run] [--force] [--json]: the way back of a complete ``cutover`` (docs/cutover.md). The way back's mirror
(``secure-mirror run BACK --run-dir BACK_DIR``, BACK written by ``secure-mirror reverse PROFILE``) copies what the
applications wrote on the target since the promotion; this command then runs the way back's steps
(``cutover/steps``), whose last change restores both clusters' bindings to what they were before the cut-over.
Recorded step by step in BACK_DIR/cutover.json: a re-run goes on from the first step not done. Exit 0 when complete,
1 when a step stopped, 2 for bad input."""

from __future__ import annotations

import argparse
from pathlib import Path

from secure_mirror.commands import arguments
from secure_mirror.commands.cutover import drive, printer
from secure_mirror.cutover import machine
from secure_mirror.cutover.context import Context
from secure_mirror.cutover.record import FAILBACK, command_key
from secure_mirror.cutover.way_back import OTHER, forward_of, way_back_problems
from secure_mirror.errors import BadInputError
from secure_mirror.kafka import client_support
from secure_mirror.profile import load_profile
from secure_mirror.run.clients import inspection


def add_arguments(parser: argparse.ArgumentParser) -> None:
    arguments.profile(parser)
    parser.add_argument(
        "--back",
        required=True,
        metavar="BACK",
        help="the way back's profile (`secure-mirror reverse PROFILE --out BACK`)",
    )
    parser.add_argument(
        "--group",
        action="append",
        help="a consumer group to move back (repeat; default: the groups the cut-over moved)",
    )
    parser.add_argument(
        "--as-admin",
        metavar="ADMIN",
        required=True,
        help="the admin identity of both clusters, as for cutover (source and target as PROFILE names them)",
    )
    parser.add_argument("--run-dir", metavar="DIR", required=True, help="the run folder of the cut-over (its record)")
    parser.add_argument(
        "--back-run-dir", metavar="BACK_DIR", required=True, help="the --run-dir the way back's mirror runs with"
    )
    arguments.flag(parser, "--dry-run", "ask both clusters and print what the fence and the restore would change")
    arguments.flag(parser, "--force", "move a group back although it still has members on the target")
    arguments.flag(parser, "--json", "print the report as JSON")
    arguments.step_timeout(parser)


def run(args: argparse.Namespace) -> int:
    profile, back = load_profile(args.profile), load_profile(args.back)
    if problems := way_back_problems(profile, back):
        raise BadInputError("; ".join(problems))
    client_support.require(back.mechanisms, "failback")
    admins = arguments.both_admins(profile, args.as_admin)
    back_admins = {side: admins[OTHER[side]] for side in admins}  # the way back's source is the forward's target
    run_dir = arguments.existing_folder("--run-dir", args.run_dir)
    back_dir = arguments.existing_folder("--back-run-dir", args.back_run_dir)
    forward = forward_of(profile, args.profile, run_dir, machine.record_file(back_dir))
    groups = list(dict.fromkeys(args.group or [])) or list(forward.record.command.groups)
    key = command_key(Path(args.back).read_text(encoding="utf-8"), FAILBACK, groups)
    # one set of identities for the whole command, handed down to every reader: one folder, one set of processes a side
    with inspection(back, admins=back_admins, prefix="secure-mirror-failback-") as identities:
        record, save = machine.open_record(back_dir, key, args.dry_run)
        say = printer(args.json)
        ctx = Context(
            back, back_admins, groups, back_dir, record, save, identities, args.force, args.timeout, say, forward
        )
        return drive(args, ctx)
