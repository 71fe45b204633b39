"""secure-mirror cutover PROFILE (--group G ... | --all-groups) --as-admin ADMIN --run-dir DIR [--dry-run] [--force]
[--json]: move the applications of the mirrored topics and groups to the target in one resumable command
(docs/cutover.md; the steps, in order: ``cutover/steps``). Every step is recorded in DIR/cutover.json before and after
it runs; the same command run again after a crash or Ctrl-C goes on from the first step not done. ``--dry-run`` asks
both clusters and prints each step's preview, changing nothing and writing nothing. Exit 0 when complete, 1 when a
step stopped (its sentence says what to fix; run the same command again after)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from secure_mirror.commands import arguments
from secure_mirror.cutover import machine
from secure_mirror.cutover.context import Context
from secure_mirror.cutover.record import CUTOVER, command_key
from secure_mirror.cutover.steps import sync
from secure_mirror.kafka import client_support
from secure_mirror.profile import load_profile, policy
from secure_mirror.run.clients import inspection


def add_arguments(parser: argparse.ArgumentParser) -> None:
    arguments.profile(parser)
    chosen = parser.add_mutually_exclusive_group(required=True)
    chosen.add_argument("--group", action="append", help="a consumer group to move (repeat for more)")
    chosen.add_argument("--all-groups", action="store_true", help="every source group mirror.groups selects")
    parser.add_argument(
        "--as-admin",
        metavar="ADMIN",
        required=True,
        help="the admin identity of both clusters that changes the producers' and consumers' ACLs: a profile file, or "
        "SIDE.KEY=VALUE,... (principal, keytab / username, password) for source and target",
    )
    parser.add_argument("--run-dir", metavar="DIR", required=True, help="the --run-dir the mirror runs with")
    arguments.flag(parser, "--dry-run", "ask both clusters and print what each step would do; change nothing")
    arguments.flag(parser, "--force", "move a group although it still has members on the source")
    arguments.flag(parser, "--json", "print the report as JSON")
    arguments.step_timeout(parser)


def run(args: argparse.Namespace) -> int:
    profile = load_profile(args.profile)
    client_support.require(profile.mechanisms, "cutover")
    admins = arguments.both_admins(profile, args.as_admin)
    run_dir = arguments.existing_folder("--run-dir", args.run_dir, "; name the --run-dir the mirror runs with")
    # one set of identities for the whole command, handed down to every reader: one folder, one set of processes a side
    with inspection(profile, admins=admins, prefix="secure-mirror-cutover-") as identities:
        groups = list(dict.fromkeys(args.group or [])) or sync.all_groups(profile, identities)
        key = command_key(Path(args.profile).read_text(encoding="utf-8"), CUTOVER, groups)
        record, save = machine.open_record(run_dir, key, args.dry_run)
        say = printer(args.json)
        ctx = Context(profile, admins, groups, run_dir, record, save, identities, args.force, args.timeout, say)
        return drive(args, ctx)


def drive(args: argparse.Namespace, ctx: Context) -> int:
    """The steps driven, or their previews printed (``--dry-run``); with ``--json`` the report after them."""
    if args.dry_run:
        return machine.dry_run(ctx)
    code = machine.drive(ctx)
    if args.json:
        print(machine.json_text(ctx.record))
    return code


def printer(quiet: bool):
    def say(line: str) -> None:
        print(f"secure-mirror cutover: {policy.printable(line)}", file=sys.stderr if quiet else sys.stdout)

    return say
