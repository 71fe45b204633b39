"""What every benchmark's command shares: its log lines (``bench: ...`` on stderr), its options (``--seed``,
``--sandbox``, ``--out``, ``--read-ahead-kb``), the seed drawn when none is given and written into the command, and a
SIGTERM that unwinds like Ctrl-C."""

from __future__ import annotations

import argparse
import os
import random
import signal
import sys
from collections.abc import Callable
from pathlib import Path

from benchmarks.harness import read_ahead

RESULTS = Path(__file__).resolve().parents[1] / "results"  # benchmarks/results


def log(text: str) -> None:
    print(f"bench: {text}", file=sys.stderr, flush=True)


def prefixed(scenario: str) -> Callable[[str], None]:
    """:func:`log` with the scenario's name before each line (``bench: scale: ...``)."""
    return lambda text: log(f"{scenario}: {text}")


def add_seed_option(parser: argparse.ArgumentParser) -> None:
    """``--seed`` (default: SECURE_MIRROR_SEED, else a random one drawn by :func:`drawn_seed`)."""
    parser.add_argument(
        "--seed",
        type=int,
        default=int(os.environ.get("SECURE_MIRROR_SEED", "0")) or None,
        help="the data and run-order seed (default: random, printed)",
    )


def add_sandbox_option(parser: argparse.ArgumentParser) -> None:
    """``--sandbox DIR``: a running sandbox to use and leave running (default: SECURE_MIRROR_TEST_SANDBOX, else a
    fresh one the script starts and stops)."""
    parser.add_argument(
        "--sandbox",
        type=Path,
        default=os.environ.get("SECURE_MIRROR_TEST_SANDBOX") or None,
        help="a running sandbox's folder (left running); default: a fresh one",
    )


def add_out_option(parser: argparse.ArgumentParser) -> None:
    """``--out DIR``: where the results files go (default: benchmarks/results)."""
    parser.add_argument("--out", type=Path, default=RESULTS)


def add_read_ahead_option(parser: argparse.ArgumentParser) -> None:
    """``--read-ahead-kb KB``: the sandbox disk's read-ahead during the run (benchmarks/harness/read_ahead.py)."""
    parser.add_argument(
        "--read-ahead-kb",
        type=int,
        default=read_ahead.LINUX_DEFAULT_KB,
        help="the sandbox disk's read-ahead during the run, put back after (0: as it is; NOTES section 16)",
    )


def given(argv: list[str] | None) -> list[str]:
    """The command's arguments: ``argv``, else this process's."""
    return list(argv if argv is not None else sys.argv[1:])


def drawn_seed(seed: int | None, given: list[str]) -> int:
    """The run's seed: ``seed``, or a random one added to ``given`` (the command's arguments, so that the command
    written into the results repeats the run); printed either way."""
    if seed is None:
        seed = random.SystemRandom().randrange(1, 2**31)
        given += ["--seed", str(seed)]
    log(f"seed {seed} (--seed {seed} or SECURE_MIRROR_SEED={seed} repeats the data and the run order)")
    return seed


def stop_on_sigterm() -> None:
    """A SIGTERM unwinds like Ctrl-C: every contender, leftover process and the sandbox are stopped on the way out."""
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
