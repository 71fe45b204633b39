"""secure-mirror render PROFILE --out DIR: every credential and client file, written all or nothing."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from secure_mirror.commands import arguments, outputs
from secure_mirror.errors import EXIT_OK, BadInputError
from secure_mirror.profile import load_profile, profile_warnings, refuse_warnings
from secure_mirror.profile.policy import printable
from secure_mirror.render import render_all
from secure_mirror.render.providers import Secrets


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("profile", help="the profile YAML file")
    parser.add_argument(
        "--out",
        required=True,
        help="folder to render into (created; must be empty; never a symbolic link; an existing folder keeps its mode)",
    )
    parser.add_argument("--force", action="store_true", help="replace an existing non-empty --out folder")
    parser.add_argument("--strict", action="store_true", help="warnings are errors too (exit 2, nothing rendered)")
    parser.add_argument("--json", action="store_true", help="print the rendered files and the warnings as JSON")
    arguments.secrets(
        parser, "the values in 0600 files, for readers older than Kafka 2.7 (3.5 for env:); --strict refuses it"
    )
    parser.add_argument(
        "--with-librdkafka-secrets",
        action="store_true",
        help="with references: librdkafka.conf holds the values all the same (librdkafka cannot resolve references)",
    )


def run(args: argparse.Namespace) -> int:
    profile = load_profile(args.profile)
    secrets = Secrets(args.secrets or "references", librdkafka_values=args.with_librdkafka_secrets)
    if args.strict and args.secrets == "values":
        raise BadInputError(
            "--strict refuses --secrets values: every rendered file of a Java client would hold the secrets' values; "
            "leave --secrets out for references (Kafka's Java clients 2.7+ resolve them, 3.5+ for env: secrets)"
        )
    warnings = profile_warnings(profile)
    if args.strict:
        refuse_warnings(args.profile, warnings)
    for warning in [] if args.json else warnings:
        print(f"warning: {warning}", file=sys.stderr)
    files = render_all(profile, args.out, force=args.force, secrets=secrets)
    if args.json:
        entries = [
            outputs.RenderedEntry(path=f.path, purpose=f.purpose, secret=f.secret, mode=f"{f.mode:04o}") for f in files
        ]
        print(outputs.dump(outputs.RenderOutput(out=str(Path(args.out).absolute()), files=entries, warnings=warnings)))
        return EXIT_OK
    secret = sum(1 for rendered in files if rendered.secret)
    out = printable(args.out)
    print(f"rendered {len(files)} files into {out} ({secret} with secrets, mode 0600); see {out}/MANIFEST.md")
    return EXIT_OK
