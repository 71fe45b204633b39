"""secure-mirror preflight PROFILE: prove credentials, TLS trust and ACLs on both clusters (exit 0 ok, 1 failed); ``--json``
as ``schema/preflight-output.schema.json``."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from secure_mirror.commands import arguments, outputs
from secure_mirror.errors import EXIT_FAILED, EXIT_OK
from secure_mirror.kafka import client_support
from secure_mirror.preflight import SIDES, render_table, run_preflight
from secure_mirror.preflight.admin_identity import admin_clusters
from secure_mirror.preflight.table import report_output
from secure_mirror.profile import load_profile, profile_warnings


def add_arguments(parser: argparse.ArgumentParser) -> None:
    arguments.profile(parser)
    arguments.flag(parser, "--json", "print the report as JSON (schema --of preflight)")
    parser.add_argument("--side", choices=SIDES, help="check only this side")
    arguments.flag(parser, "--strict", "warnings fail too (the profile's and the checks')")
    arguments.flag(
        parser, "--accept-unverified", "exit 0 although some required permissions could not be proven (they are listed)"
    )
    arguments.as_admin(parser, "audit the mirror's ACLs", "no audit")
    arguments.timeout(parser, "KDC, TLS or Kafka")
    parser.add_argument("--write-acls", metavar="DIR", help="write the missing ACLs as DIR/<side>.acls.json")


def run(args: argparse.Namespace) -> int:
    profile = load_profile(args.profile)
    for warning in profile_warnings(profile):  # also the WARN checks config.weak-settings and files.keytab
        print(f"warning: {warning}", file=sys.stderr)
    admin = admin_clusters(profile, args.as_admin) if args.as_admin else None
    sides = (args.side,) if args.side else SIDES
    client_support.require([profile.cluster(side).mechanism for side in sides], "preflight")
    report = run_preflight(profile, sides=sides, timeout=args.timeout, admin=admin)
    if args.write_acls:
        write_acls(report, Path(args.write_acls), sides)
    if args.json:
        print(outputs.dump(report_output(report)))
    else:
        render_table(report)
    return EXIT_OK if report.ok(strict=args.strict, accept_unverified=args.accept_unverified) else EXIT_FAILED


def write_acls(report, out_dir: Path, sides) -> None:
    import json

    out_dir.mkdir(parents=True, exist_ok=True)
    for side in sides:
        acls = [acl.to_dict() for acl in report.missing_acls(side)]
        (out_dir / f"{side}.acls.json").write_text(json.dumps(acls, indent=2) + "\n")
