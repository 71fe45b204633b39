"""secure-mirror validate PROFILE: report every problem of a profile at once (exit 2), or summarise it with its
warnings (``--strict``: warnings are problems too; ``--json``: either as ``schema/validate-output.schema.json``)."""

from __future__ import annotations

import argparse
import sys

from secure_mirror.commands import outputs
from secure_mirror.errors import EXIT_BAD_INPUT, EXIT_OK
from secure_mirror.profile import Profile, ProfileError, Side, load_profile, profile_warnings, refuse_warnings
from secure_mirror.profile.security import UnmappedPrincipal


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("profile", help="the profile YAML file")
    parser.add_argument("--strict", action="store_true", help="warnings are errors too (exit 2)")
    parser.add_argument("--json", action="store_true", help="print the result (or every problem) as JSON")


def summary(profile: Profile) -> str:
    def side(name: Side) -> str:
        cluster = profile.cluster(name)
        mechanism = f"/{cluster.mechanism}" if cluster.mechanism else ""
        return f"{name} {cluster.alias} ({cluster.security_protocol}{mechanism})"

    return (
        f"{side('source')} -> {side('target')}; topics {profile.selection().java_pattern()}; "
        f"rename {profile.mirror.rename.rule}"
    )


def _side(profile: Profile, name: Side) -> outputs.SideSummary:
    cluster = profile.cluster(name)
    try:
        principal: str | None = cluster.kafka_principal
    except UnmappedPrincipal:
        principal = None
    return outputs.SideSummary(
        alias=cluster.alias,
        security_protocol=cluster.security_protocol,
        mechanism=cluster.mechanism,
        principal=principal,
    )


def run(args: argparse.Namespace) -> int:
    try:
        profile = load_profile(args.profile)
        warnings = profile_warnings(profile)
        if args.strict:
            refuse_warnings(args.profile, warnings)
    except ProfileError as exc:
        if not args.json:
            raise
        print(outputs.dump(outputs.ValidateOutput(ok=False, problems=exc.problems, warnings=[])))
        return EXIT_BAD_INPUT
    if args.json:
        result = outputs.ValidateOutput(
            ok=True,
            problems=[],
            warnings=warnings,
            source=_side(profile, "source"),
            target=_side(profile, "target"),
            subscribe_pattern=profile.selection().java_pattern(),
            rename=profile.mirror.rename.rule,
        )
        print(outputs.dump(result))
        return EXIT_OK
    for warning in warnings:
        print(f"warning: {warning}", file=sys.stderr)
    print(f"profile OK: {summary(profile)}")
    return EXIT_OK
