"""Seeded random schedules. Every seed is drawn here: from ``SECURE_MIRROR_SEED`` when set (to repeat a failed run),
else at random; each one is listed under "random seeds" in the report of a failing test (tests/conftest.py)."""

from __future__ import annotations

import os
import random

ENV = "SECURE_MIRROR_SEED"
DRAWN: list[str] = []  # "what: seed N (...)", in the order drawn


def draw_seed(what: str) -> int:
    seed = int(os.environ.get(ENV) or random.SystemRandom().randrange(2**32))
    DRAWN.append(f"{what}: seed {seed} (repeat with {ENV}={seed})")
    return seed


def seeded(what: str) -> random.Random:
    """A ``random.Random`` for the schedule ``what``, its seed recorded."""
    return random.Random(draw_seed(what))
