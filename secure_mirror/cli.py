"""Command-line entry point: parse arguments, dispatch to ``secure_mirror.commands.<name>``.

Every command module exposes ``add_arguments(parser)`` and ``run(args) -> int``. This module owns the
translation of errors into exit codes (see ``secure_mirror.errors``): a user's mistake becomes one clear
sentence on stderr, never a traceback; an unexpected error is written to a private log file.
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
import tempfile
import traceback
from types import ModuleType
from typing import NoReturn

from secure_mirror import __version__
from secure_mirror.commands import (
    acls,
    bundle,
    cutover,
    demo,
    doctor,
    failback,
    failover,
    groups,
    lag,
    preflight,
    render,
    reverse,
    run,
    sandbox,
    schema,
    validate,
    verify,
)
from secure_mirror.errors import EXIT_BAD_INPUT, EXIT_INTERNAL, EXIT_INTERRUPTED, SecureMirrorError

# name -> (the module implementing it, one-line help); every command is imported here, none found at run time.
COMMANDS: dict[str, tuple[ModuleType, str]] = {
    "demo": (demo, "bring up the sandbox, render, pre-flight, mirror until caught up, verify"),
    "sandbox": (sandbox, "start, stop or show the built-in test bed (KDC with two realms, two Kafka clusters)"),
    "validate": (validate, "check a profile and report every problem at once"),
    "schema": (schema, "print the JSON Schema of the profile"),
    "render": (render, "render every credential and client file from a profile"),
    "preflight": (preflight, "prove credentials, TLS trust and ACLs on both clusters before the mirror starts"),
    "run": (run, "run the mirror job (pre-flight first)"),
    "lag": (lag, "show per-partition lag of the mirror"),
    "verify": (verify, "compare source and target over the mirrored range"),
    "acls": (acls, "plan the target-side ACLs the source's consumers need after failover (--consumers); never applied"),
    "groups": (groups, "show consumer groups' source offsets, their translation and the target's offsets"),
    "failover": (failover, "move consumer groups to the target: a last translation and commit, and the cut-over"),
    "cutover": (
        cutover,
        "move the applications to the target in one resumable command: check, fence, drain, sync, "
        "stop, promote, report",
    ),
    "failback": (
        failback,
        "the way back of a cut-over: fence the target, drain the way back's mirror, move the groups back, restore "
        "both clusters' bindings",
    ),
    "reverse": (reverse, "write the profile of the way back (B -> A), names mapped back, loop-safe"),
    "doctor": (doctor, "tell what this machine has and lacks to run a mirror, each with the fix"),
    "bundle": (bundle, "write the wheel, its Python dependencies and the connector jars for an offline install"),
}


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:  # usage errors are bad input: exit 2, one sentence
        self.print_usage(sys.stderr)
        print(f"secure-mirror: error: {message}", file=sys.stderr)
        raise SystemExit(EXIT_BAD_INPUT)


def build_parser() -> tuple[argparse.ArgumentParser, dict[str, ModuleType]]:
    parser = _Parser(prog="secure-mirror", description=__doc__.splitlines()[0])
    parser.add_argument("--version", action="version", version=f"secure-mirror {__version__}")
    parser.add_argument("-v", "--verbose", action="store_true", help="log details (librdkafka included) to stderr")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    for name, (module, help_text) in COMMANDS.items():
        module.add_arguments(sub.add_parser(name, help=help_text, description=help_text))
    return parser, {name: module for name, (module, _) in COMMANDS.items()}


def _write_crash_log(exc: BaseException) -> str:
    fd, path = tempfile.mkstemp(prefix="secure-mirror-error-", suffix=".log")
    with os.fdopen(fd, "w") as fh:  # mkstemp creates the file with mode 0600
        traceback.print_exception(exc, file=fh)
    return path


def main(argv: list[str] | None = None) -> int:
    parser, modules = build_parser()
    args = parser.parse_args(argv)
    if args.verbose:
        logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(levelname)s %(message)s")
    if not args.command:
        parser.print_help()
        return EXIT_BAD_INPUT
    try:
        return int(modules[args.command].run(args))
    except SecureMirrorError as exc:
        print(f"secure-mirror {args.command}: {exc}", file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        print(f"secure-mirror {args.command}: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except Exception as exc:  # noqa: BLE001 - the one place unexpected errors are turned into exit 3
        path = _write_crash_log(exc)
        print(
            f"secure-mirror {args.command}: unexpected error ({type(exc).__name__}); details in {path}",
            file=sys.stderr,
        )
        return EXIT_INTERNAL
