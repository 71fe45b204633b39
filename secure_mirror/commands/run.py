"""secure-mirror run PROFILE: pre-flight, then the Spark mirror job (the rendered spark-submit.sh); ``--json``: what
it prints on stdout as JSON lines (run/json_lines.py, ``schema/run-output.schema.json``)."""

from __future__ import annotations

import argparse
import re
import sys

from secure_mirror.commands import arguments
from secure_mirror.kafka import client_support
from secure_mirror.profile import load_profile, profile_warnings, refuse_warnings
from secure_mirror.run.launcher import RunOptions, run_mirror

# What Spark's processing-time trigger parses: "5 seconds", "1 minute 30 seconds", "500 milliseconds", "0 seconds".
_UNIT = r"\d{1,9} (?:week|day|hour|minute|second|millisecond)s?"
_INTERVAL = re.compile(rf"^(?:interval )?{_UNIT}(?: {_UNIT})*$")


def _interval(text: str) -> str:
    if not _INTERVAL.match(text):
        raise argparse.ArgumentTypeError(f"{text[:40]!r} is not an interval such as '5 seconds' or '500 milliseconds'")
    return text


def _count(text: str) -> int:
    if not text.isdigit():
        raise argparse.ArgumentTypeError(f"{text[:40]!r} is not a whole number of restarts (0 or more)")
    return int(text)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    arguments.profile(parser)
    arguments.flag(
        parser, "--until-caught-up", "mirror what the source holds now, then stop (Spark's availableNow trigger)"
    )
    arguments.flag(parser, "--supervise", "restart a failed job with a growing pause")
    parser.add_argument("--max-restarts", type=_count, default=5, help="with --supervise (default 5)")
    parser.add_argument("--trigger-interval", type=_interval, default="5 seconds", help="time between micro-batches")
    parser.add_argument("--metrics-file", help="JSON-lines metrics per batch and topic-partition (appended)")
    parser.add_argument(
        "--status-interval", type=arguments.seconds, default=10.0, help="seconds between idle status lines"
    )
    arguments.flag(parser, "--skip-preflight", "start without the pre-flight checks")
    arguments.flag(
        parser, "--strict", "warnings stop the run too (pre-flight's; with --skip-preflight the profile's, exit 2)"
    )
    arguments.flag(
        parser,
        "--accept-unverified",
        "start although pre-flight could not prove some required permissions (e.g. WRITE on target topics that do "
        "not exist yet); they are listed",
    )
    arguments.flag(
        parser,
        "--json",
        "print pre-flight, start, status lines and the outcome as JSON lines (schema: schema --of run)",
    )
    arguments.secrets(
        parser,
        "the values in the job's 0600 option files, for executors that cannot read the referenced files (another "
        "machine's)",
    )
    parser.add_argument(
        "--run-dir", help="folder for the job log, metrics and rendered files (default: a new private temporary folder)"
    )


def run(args: argparse.Namespace) -> int:
    profile = load_profile(args.profile)
    warnings = profile_warnings(profile)
    client_support.require(profile.mechanisms, "run")
    if args.strict and args.skip_preflight:  # pre-flight fails on them otherwise (config.weak-settings)
        refuse_warnings(args.profile, warnings)
    for warning in warnings:
        print(f"warning: {warning}", file=sys.stderr)
    options = RunOptions(
        until_caught_up=args.until_caught_up,
        supervise=args.supervise,
        max_restarts=args.max_restarts,
        trigger_interval=args.trigger_interval,
        metrics_file=args.metrics_file,
        status_interval=args.status_interval,
        skip_preflight=args.skip_preflight,
        strict=args.strict,
        accept_unverified=args.accept_unverified,
        json_lines=args.json,
        secrets=args.secrets or "references",
    )
    return run_mirror(profile, options, run_dir=args.run_dir)
