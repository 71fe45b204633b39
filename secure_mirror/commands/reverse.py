"""secure-mirror reverse PROFILE --out PROFILE2: write the profile of the way back (B -> A for a profile A -> B),
validated like any profile (``profile/reverse.py`` says what changes; docs/provenance.md why both ways are safe)."""

from __future__ import annotations

import argparse
import os
import tempfile
from pathlib import Path

import yaml

from secure_mirror.errors import EXIT_OK, BadInputError
from secure_mirror.profile import load_profile
from secure_mirror.profile.reverse import reverse_data

HEADER = "# The way back of {name}, written by `secure-mirror reverse` (docs/provenance.md).\n"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("profile", help="the profile YAML file of the flow A -> B")
    parser.add_argument("--out", required=True, help="where to write the profile of B -> A (a new file)")


def run(args: argparse.Namespace) -> int:
    source, out = Path(args.profile), Path(args.out)
    profile = load_profile(source)  # every problem of the forward profile, as validate tells them
    if out.exists() or out.is_symlink():
        raise BadInputError(f"{out} exists; name a new file for the reversed profile")
    data = yaml.safe_load(source.read_text(encoding="utf-8"))  # loads: load_profile read the same text
    text = HEADER.format(name=source.name) + yaml.safe_dump(reverse_data(data, profile), sort_keys=False)
    write_validated(out, text, source.stat().st_mode & 0o777)
    back = load_profile(out)
    print(
        f"reverse: wrote {out}: {back.source.alias} -> {back.target.alias}, names kept (rename identity), "
        f"topics {back.selection().java_pattern()}, checkpoint {back.mirror.checkpoint_location}"
    )
    return EXIT_OK


def write_validated(out: Path, text: str, mode: int) -> None:
    """Write ``text`` to ``out`` only when it loads as a profile (relative paths resolve from ``out``'s folder)."""
    out.parent.mkdir(parents=True, exist_ok=True)
    fd, name = tempfile.mkstemp(prefix=".reverse-", suffix=".yaml", dir=out.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
        os.chmod(name, mode)
        load_profile(name)
        os.replace(name, out)
    finally:
        if os.path.exists(name):
            os.unlink(name)
