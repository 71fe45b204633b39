"""secure-mirror failback PROFILE --back BACK --as-admin ADMIN --run-dir DIR --back-run-dir BACK_DIR [--group G ...]
[--dry-run] [--force] [--json]: the way back of a complete ``cutover`` (docs/cutover.md). The way back's mirror
(``secure-mirror run BACK --run-dir BACK_DIR``, BACK written by ``secure-mirror reverse PROFILE``) copies what the
applications wrote on the target since the promotion; this command then runs the same steps in the other direction:
check, fence the target's producers, drain, move the groups back, stop the way back's mirror, restore both clusters'
bindings to what they were before the cut-over, report. Recorded step by step in BACK_DIR/cutover.json: a re-run
goes on from the first step not done. Exit 0 when complete, 1 when a step stopped, 2 for bad input."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from secure_mirror import folders
from secure_mirror.commands import arguments
from secure_mirror.commands.cutover import printer
from secure_mirror.cutover import fence, machine, state, steps
from secure_mirror.errors import EXIT_FAILED, EXIT_OK, BadInputError
from secure_mirror.identities import Identities
from secure_mirror.kafka import client_support
from secure_mirror.preflight.admin_identity import admin_clusters
from secure_mirror.profile import load_profile
from secure_mirror.profile.cluster import Cluster, Side
from secure_mirror.profile.models import Profile


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


def way_back_problems(forward: Profile, back: Profile) -> list[str]:
    """Why ``back`` is not the way back of ``forward`` that failback can use (sentences; empty when it is)."""
    out = []
    if (back.source.alias, back.target.alias) != (forward.target.alias, forward.source.alias):
        out.append(
            f"--back copies {back.source.alias} -> {back.target.alias}, not {forward.target.alias} -> "
            f"{forward.source.alias}: write it with `secure-mirror reverse PROFILE --out BACK`"
        )
    if forward.mirror.rename.rule != "identity":
        out.append(
            f"the cut-over's mirror renames topics (mirror.rename.rule: {forward.mirror.rename.rule}): the producers "
            "now write the target's copies, which the way back does not copy; failback needs kept names "
            "(rename: identity, with provenance headers)"
        )
    if not back.mirror.provenance_headers:
        out.append("--back: mirror.provenance_headers is off, so the way back would copy the cut-over's records back")
    return out


def forward_record(run_dir: Path, back_record: state.Record | None) -> tuple[state.Record, Path]:
    """The cut-over's record: in ``run_dir``, or where a failback that restored already kept it."""
    kept = (back_record.notes.get("forward_record") if back_record else None) or ""
    path = Path(kept) if kept and Path(kept).exists() else run_dir / state.FILE
    try:
        record = state.Record.of(json.loads(path.read_text(encoding="utf-8")))
    except FileNotFoundError:
        raise BadInputError(
            f"{path}: no cut-over is recorded there; name the --run-dir of a complete cutover"
        ) from None
    except (ValueError, KeyError, TypeError, AttributeError) as damaged:
        raise BadInputError(f"{path} is not a cut-over record this version reads ({damaged})") from None
    if record.command.get("direction") != state.CUTOVER:
        raise BadInputError(f"{path} records a {record.command.get('direction')}, not a cutover")
    if not record.complete:
        raise BadInputError(
            f"{path}: the cut-over is not complete (next: {record.next_step()}); finish it first with the same "
            "`secure-mirror cutover` command"
        )
    return record, path


def run(args: argparse.Namespace) -> int:
    profile, back = load_profile(args.profile), load_profile(args.back)
    if problems := way_back_problems(profile, back):
        raise BadInputError("; ".join(problems))
    client_support.require(back.mechanisms, "failback")
    admins = admin_clusters(profile, args.as_admin)
    if set(admins) != {"source", "target"}:
        raise BadInputError("--as-admin: name an admin identity for both the source and the target")
    back_admins: dict[Side, Cluster] = {"source": admins["target"], "target": admins["source"]}
    run_dir, back_dir = folders.named(args.run_dir), folders.named(args.back_run_dir)
    for flag, folder in (("--run-dir", run_dir), ("--back-run-dir", back_dir)):
        if not folder.is_dir():
            raise BadInputError(f"{flag}: {folder} is not a folder")
    store = state.RecordFile(back_dir)
    back_text = Path(args.back).read_text(encoding="utf-8")
    existing = store.peek()
    forward, forward_path = forward_record(run_dir, existing)
    if (
        forward.command["profile_sha256"]
        != state.command_key(Path(args.profile).read_text("utf-8"), "", [])["profile_sha256"]
    ):
        raise BadInputError(f"{forward_path}: that cut-over ran with another profile's content than {args.profile}")
    groups = list(dict.fromkeys(args.group or [])) or list(forward.command["groups"])
    say = printer(args.json)
    with Identities.for_profile(back, admins=back_admins, prefix="secure-mirror-failback-") as identities:
        key = state.command_key(back_text, state.FAILBACK, groups)
        record = (store.load(key) if existing else None) or state.Record.start(key)
        ctx = steps.Context(
            back,
            back_admins,
            groups,
            back_dir,
            record,
            lambda: store.save(record),
            identities,
            force=args.force,
            timeout=args.timeout,
            say=say,
            admin_names={side: back_admins[side].kafka_principal for side in back_admins},
            forward=steps.Forward(profile, forward, run_dir, forward_path),
        )
        if args.dry_run:
            return _dry_run(ctx)
        code = machine.drive(ctx)
    if args.json:
        print(machine.json_text(record))
    return code


def _dry_run(ctx: steps.Context) -> int:
    """What the fence and the restore would change, from what both clusters hold now; nothing changed or written."""
    ctx.record, ctx.save = state.Record.start(dict(ctx.record.command)), lambda: None
    ctx.say("dry run: nothing is changed or written")
    try:
        steps.check(ctx)
        ctx.say("check: would pass")
    except steps.StepFailed as failed:
        ctx.say(f"check: would stop: {failed}")
    acls, topics = steps.read_inventory(ctx, "source")
    plan = fence.fence_plan(ctx.profile, acls, ctx.profile.selection().select(list(topics)))
    for item in plan.unfenceable:
        ctx.say(f"fence: would stop: {item.binding.words()}: {item.reason}")
    for binding in plan.deny:
        ctx.say(f"fence: would add on {ctx.profile.source.alias} {binding.words()}")
    for binding in plan.remove:
        ctx.say(f"fence: would remove on {ctx.profile.source.alias} {binding.words()}")
    ctx.say(f"sync: would translate and commit {', '.join(ctx.groups)} on {ctx.profile.target.alias}")
    assert ctx.forward is not None
    notes = {"fence": {"remove": [a.to_dict() for a in plan.remove], "deny": [a.to_dict() for a in plan.deny]}}
    restore = fence.restore_plan(ctx.forward.record.notes, notes)
    alias: dict[str, str] = {"source": ctx.profile.target.alias, "target": ctx.profile.source.alias}
    for side in ("source", "target"):
        for binding in restore.add[side]:
            ctx.say(f"restore: would add on {alias[side]} {binding.words()}")
        for binding in restore.delete[side]:
            ctx.say(f"restore: would remove on {alias[side]} {binding.words()}")
    return EXIT_FAILED if plan.unfenceable else EXIT_OK
