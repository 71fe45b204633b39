"""secure-mirror cutover PROFILE (--group G ... | --all-groups) --as-admin ADMIN --run-dir DIR [--dry-run] [--force]
[--json]: move the applications of the mirrored topics and groups to the target in one resumable command
(docs/cutover.md): check, fence, drain, sync, stop, promote, report. Every step is recorded in DIR/cutover.json before
and after it runs; the same command run again after a crash or Ctrl-C goes on from the first step not done.
``--dry-run`` asks both clusters and prints what each step would do, changing nothing and writing nothing.
Exit 0 when complete, 1 when a step stopped (its sentence says what to fix; run the same command again after)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from secure_mirror import folders
from secure_mirror.commands import arguments
from secure_mirror.cutover import fence, machine, state, steps
from secure_mirror.errors import EXIT_FAILED, EXIT_OK, BadInputError
from secure_mirror.identities import Identities
from secure_mirror.kafka import client_support
from secure_mirror.preflight.admin_identity import admin_clusters
from secure_mirror.profile import load_profile, policy
from secure_mirror.render import consumer_acls
from secure_mirror.run.groups.session import Session


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
    admins = admin_clusters(profile, args.as_admin)
    if set(admins) != {"source", "target"}:
        raise BadInputError("--as-admin: name an admin identity for both the source and the target")
    run_dir = folders.named(args.run_dir)
    if not run_dir.is_dir():
        raise BadInputError(f"--run-dir: {run_dir} is not a folder; name the --run-dir the mirror runs with")
    groups = list(dict.fromkeys(args.group or [])) or _all_groups(profile)
    if not groups:
        raise BadInputError("--all-groups: mirror.groups selects no group on the source; name them with --group")
    say = printer(args.json)
    with Identities.for_profile(profile, admins=admins, prefix="secure-mirror-cutover-") as identities:
        store = state.RecordFile(run_dir)
        key = state.command_key(Path(args.profile).read_text(encoding="utf-8"), "cutover", groups)
        record = state.Record.start(key) if args.dry_run else (store.load(key) or state.Record.start(key))
        ctx = steps.Context(
            profile,
            admins,
            groups,
            run_dir,
            record,
            (lambda: None) if args.dry_run else (lambda: store.save(record)),
            identities,
            force=args.force,
            timeout=args.timeout,
            say=say,
            admin_names={side: admins[side].kafka_principal for side in admins},
        )
        if args.dry_run:
            return _dry_run(ctx)
        code = machine.drive(ctx)
    if args.json:
        print(machine.json_text(record))
    return code


def printer(quiet: bool):
    def say(line: str) -> None:
        print(f"secure-mirror cutover: {policy.printable(line)}", file=sys.stderr if quiet else sys.stdout)

    return say


def _all_groups(profile) -> list[str]:
    if not profile.mirror.groups.enabled:
        raise BadInputError("--all-groups needs mirror.groups in the profile; name the groups with --group instead")
    with Session(profile) as session:
        return sorted(session.observe(None).sources)


def _dry_run(ctx: steps.Context) -> int:
    """What each step would do, from what both clusters hold now; nothing changed, nothing written (the context's record
    is a fresh one that is never saved)."""
    profile, groups, run_dir, say = ctx.profile, ctx.groups, ctx.run_dir, ctx.say
    say("dry run: nothing is changed or written")
    try:
        steps.check(ctx)
        say("check: would pass")
    except steps.StepFailed as failed:
        say(f"check: would stop: {failed}")
    source_acls, source_topics = steps.read_inventory(ctx, "source")
    target_acls, _ = steps.read_inventory(ctx, "target")
    selected = profile.selection().select(list(source_topics))
    plan = fence.fence_plan(profile, source_acls, selected)
    for item in plan.unfenceable:
        say(f"fence: would stop: {item.binding.words()}: {item.reason}")
    for binding in plan.deny:
        say(f"fence: would add {binding.words()}")
    for binding in plan.remove:
        say(f"fence: would remove {binding.words()}")
    say(f"drain: would wait for the mirror to reach the fenced ends of {len(selected)} topic(s), then verify")
    say(f"sync: would translate and commit {', '.join(groups)} on the target")
    say(f"stop: would stop the job running from {run_dir}")
    grants = fence.promote_plan(profile, plan, target_acls)
    consumers = consumer_acls.consumer_plan(profile, source_acls, list(source_topics), target_acls)
    for binding in [*grants.grant, *consumers.to_add]:
        say(f"promote: would add on the target {binding.words()}")
    return EXIT_FAILED if plan.unfenceable else EXIT_OK
