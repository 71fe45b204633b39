"""secure-mirror groups PROFILE [--group G|GLOB ...] [--all] [--json [--page-size N] [--after GROUP]]: per consumer
group and source partition, the group's source offset, its translation through the offset map, the target group's
committed offset and the state; over the profile's groups or a glob, a summary by state first and the table of the
groups that need attention (docs/failover.md)."""

from __future__ import annotations

import argparse

from secure_mirror.errors import EXIT_OK, BadInputError
from secure_mirror.kafka import client_support
from secure_mirror.profile import load_profile
from secure_mirror.profile.models import Profile
from secure_mirror.run.groups import report
from secure_mirror.run.groups.chosen import chosen, is_pattern
from secure_mirror.run.groups.session import Session


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("profile", help="the profile YAML file")
    parser.add_argument(
        "--group",
        action="append",
        help="only this group, or the groups mirror.groups selects that a glob matches ('billing-*'); repeat for "
        "more (default: every group mirror.groups selects)",
    )
    parser.add_argument(
        "--all", action="store_true", help="after the summary, every group, not only those that need attention"
    )
    parser.add_argument("--json", action="store_true", help="print the result as JSON (schema: schema --of groups)")
    parser.add_argument("--page-size", type=_count, metavar="N", help="with --json: N groups a page (default: all)")
    parser.add_argument(
        "--after", metavar="GROUP", help="with --json: the page of the groups after GROUP (the last's next_after)"
    )


def _count(text: str) -> int:
    if not text.isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"{text[:40]!r} is not a whole number above 0")
    return int(text)


def run(args: argparse.Namespace) -> int:
    profile = load_profile(args.profile)
    _check(args, profile)
    client_support.require(profile.mechanisms, "groups")
    with Session(profile) as session:
        observation = session.observe(named_groups(session, args.group))
    result = report.output(
        observation,
        observation.plan(),
        (profile.source.alias, profile.target.alias),
        (session.map_topic, session.checkpoints_topic),
    )
    if args.json:
        print(report.page(result, args.page_size, args.after).model_dump_json(indent=2))
    elif args.group and not any(map(is_pattern, args.group)):
        print(report.table(result))  # groups named one by one: each in full
    else:
        print(report.overview(result, args.all))
    return EXIT_OK


def _check(args: argparse.Namespace, profile: Profile) -> None:
    """The options' problems, before any cluster is asked."""
    if not args.group and not profile.mirror.groups.enabled:
        raise BadInputError(
            "mirror.groups.include selects no consumer group; set it in the profile, or name groups with --group"
        )
    if not profile.mirror.groups.enabled and (patterns := [g for g in args.group or () if is_pattern(g)]):
        raise BadInputError(
            f"--group {patterns[0]!r} is a pattern, matched against the groups mirror.groups.include selects, and "
            "the profile selects none; name the groups exactly, or set mirror.groups.include"
        )
    if not args.json and (args.page_size or args.after is not None):
        raise BadInputError("--page-size and --after page the output of --json; add --json")
    if args.json and args.all:
        raise BadInputError(
            "--all chooses the table's groups; --json prints every group (a page of them with --page-size)"
        )


def named_groups(session: Session, asked: list[str] | None) -> list[str] | None:
    """The groups to observe: those named and those the patterns match among the selected groups (listed once);
    None: every selected group."""
    if not asked:
        return None
    if not any(map(is_pattern, asked)):
        return list(dict.fromkeys(asked))
    listed = session.selected_groups()
    names, unmatched = chosen(asked, listed)
    if unmatched:
        raise BadInputError(unmatched_sentence(unmatched, len(listed), session.profile.source.alias))
    return names


def unmatched_sentence(patterns: list[str], listed: int, alias: str) -> str:
    """Why ``--group`` with these patterns shows nothing: what they were matched against, and what to do."""
    named = " and ".join(repr(piece) for piece in patterns)
    matches = "each matches" if len(patterns) > 1 else "matches"
    against = (
        f"mirror.groups.include selects no group on the source ({alias})"
        if listed == 0
        else f"{matches} none of the {listed} group{'s' if listed > 1 else ''} mirror.groups.include selects on the "
        f"source ({alias})"
    )
    return f"--group {named}: {against}; check the pattern, or list the groups with `secure-mirror groups PROFILE`"
