"""secure-mirror doctor: what this machine has and lacks to run a mirror, each item with the fix (exit 0 or 4); ``--json`` as
``schema/doctor-output.schema.json``."""

from __future__ import annotations

import argparse

from secure_mirror.commands import outputs
from secure_mirror.errors import EXIT_ENVIRONMENT, EXIT_OK
from secure_mirror.run import doctor


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--json", action="store_true", help="print the items as JSON (schema --of doctor)")


def run(args: argparse.Namespace) -> int:
    items = doctor.judge(doctor.ask())
    if args.json:
        print(outputs.dump(outputs.doctor_output(items, doctor.ready(items))))
    else:
        for item in items:
            mark = "ok  " if item.ok else ("MISS" if item.required else "note")
            print(f"{mark} {item.name}: {item.found}" + (f" -- fix: {item.fix}" if item.fix else ""))
    return EXIT_OK if doctor.ready(items) else EXIT_ENVIRONMENT
