"""secure-mirror failover PROFILE --group G [--group ...] [--dry-run] [--force] [--rendered DIR]: move consumer groups
(named, or a glob of those mirror.groups selects: ``--group 'billing-*'``) to the target. A last translation of each
group's source offsets through the offset map, written as MirrorMaker 2 checkpoints and committed on the target (never
backwards), then the consumer's cut-over: the target's bootstrap, the topic names and the rendered client settings.
Refuses (exit 1) while a group has active members on the source, unless --force, or on the target; exit 1 too when a
partition cannot be translated (docs/failover.md)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from secure_mirror.commands.groups import named_groups
from secure_mirror.errors import EXIT_FAILED, EXIT_OK, EXIT_REFUSED
from secure_mirror.kafka import client_support
from secure_mirror.profile import load_profile, policy
from secure_mirror.profile.models import Profile
from secure_mirror.render.tree import client_files
from secure_mirror.run.groups import decide, report
from secure_mirror.run.groups.session import Session

RENDERED = "OUT"  # how the output folder of `render --out` is named when --rendered is not given


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("profile", help="the profile YAML file")
    parser.add_argument(
        "--group",
        action="append",
        required=True,
        help="a consumer group to move, or the groups mirror.groups selects that a glob matches ('billing-*'); "
        "repeat for more",
    )
    parser.add_argument("--dry-run", action="store_true", help="translate and show, commit nothing")
    parser.add_argument("--force", action="store_true", help="even while the group has active members on the source")
    parser.add_argument("--rendered", metavar="DIR", help="where `secure-mirror render --out` wrote the client files")


def run(args: argparse.Namespace) -> int:
    profile = load_profile(args.profile)
    client_support.require(profile.mechanisms, "failover")
    with Session(profile) as session:
        observation = session.observe(named_groups(session, args.group))
        if refusals := decide.failover_refusals(observation.sources, args.force):
            for refusal in refusals:
                print(f"secure-mirror failover: {refusal}", file=sys.stderr)
            return EXIT_FAILED
        plan = observation.plan()
        if plan.skipped:
            for group, why in plan.skipped.items():
                print(
                    f"secure-mirror failover: group {group}: {why}; stop its consumers on the target", file=sys.stderr
                )
            return EXIT_FAILED
        failed = {} if args.dry_run else session.write(plan.checkpoints, plan)
        names = (session.map_topic, session.checkpoints_topic)
    result = report.output(observation, plan, (profile.source.alias, profile.target.alias), names)
    print(report.table(result))
    problems = failover_problems(result, failed)
    for problem in problems:
        print(f"secure-mirror failover: {problem}", file=sys.stderr)
    print(cut_over(profile, result, args.rendered, args.dry_run))
    if any("AUTHORIZATION" in why.upper() for why in failed.values()):
        return EXIT_REFUSED
    return EXIT_FAILED if problems else EXIT_OK


def failover_problems(result: report.GroupsOutput, failed: dict[str, str]) -> list[str]:
    """Why the failover is not complete: a group with nothing to move, a partition not translated, a failed write."""
    out = []
    for group in result.groups:
        if not group.partitions:
            out.append(f"group {group.group} has no committed offset on a topic the mirror copies")
        out += [
            f"group {group.group} {p.topic}-{p.partition} is {p.state.replace('_', ' ')}: {p.reason}"
            for p in group.partitions
            if p.state != "translated"
        ]
    out += [f"writing to {name} on the target failed: {why}" for name, why in sorted(failed.items())]
    return out


def _client_files(profile: Profile, rendered: str | None) -> list[str]:
    """The target's client files as render names them (nothing rendered, no secret read)."""
    folder = Path(rendered) if rendered else Path(RENDERED)
    return [f"{folder / name}: {purpose}" for name, purpose in client_files(profile, "target")]


def cut_over(profile: Profile, result: report.GroupsOutput, rendered: str | None, dry_run: bool) -> str:
    """What the group's consumers change to read the target from where they stopped."""
    target = profile.target
    topics = sorted({(p.topic, p.target_topic) for g in result.groups for p in g.partitions if p.target_topic})
    lines = [
        "",
        f"Cut-over{' (dry run: nothing was committed)' if dry_run else ''}: "
        f"start the consumers of {policy.some_of([g.group for g in result.groups])} with the same group.id on the "
        "target",
        f"  bootstrap.servers: {','.join(target.bootstrap_servers)}",
        f"  security.protocol: {target.security_protocol}"
        + (f", SASL mechanism {target.mechanism} (log in as the consumer's own identity)" if target.mechanism else ""),
        "  isolation.level: read_committed (the target's transaction markers and aborted records are not records)",
        "  topics:",
        *(f"    {source} -> {name}" for source, name in topics),
        "  client settings for the target, rendered by `secure-mirror render PROFILE --out "
        f"{rendered or RENDERED}` (the mirror's identity: replace it with the consumer's):",
        *(f"    {line}" for line in _client_files(profile, rendered)),
    ]
    return "\n".join(lines)
