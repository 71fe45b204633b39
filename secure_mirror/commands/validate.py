"""secure-mirror validate PROFILE: report every problem of a profile at once (exit 2), or summarise it with its
warnings (``--strict``: warnings are problems too)."""

from __future__ import annotations

import argparse
import sys

from secure_mirror.errors import EXIT_OK
from secure_mirror.profile import Profile, Side, load_profile, profile_warnings, refuse_warnings


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("profile", help="the profile YAML file")
    parser.add_argument("--strict", action="store_true", help="warnings are errors too (exit 2)")


def summary(profile: Profile) -> str:
    def side(name: Side) -> str:
        cluster = profile.cluster(name)
        mechanism = f"/{cluster.mechanism}" if cluster.mechanism else ""
        return f"{name} {cluster.alias} ({cluster.security_protocol}{mechanism})"

    return (
        f"{side('source')} -> {side('target')}; topics {profile.selection().java_pattern()}; "
        f"rename {profile.mirror.rename.rule}"
    )


def run(args: argparse.Namespace) -> int:
    profile = load_profile(args.profile)
    warnings = profile_warnings(profile)
    if args.strict:
        refuse_warnings(args.profile, warnings)
    for warning in warnings:
        print(f"warning: {warning}", file=sys.stderr)
    print(f"profile OK: {summary(profile)}")
    return EXIT_OK
