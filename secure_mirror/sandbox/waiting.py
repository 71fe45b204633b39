"""Waiting on what runs over the sandbox, for the tests and the benchmarks: a condition asked again until it holds
(:func:`wait_for`), and a mirror caught up (:func:`caught_up`, from its lag table)."""

from __future__ import annotations

import time

from secure_mirror.run.lag import lag


def caught_up(profile, topics: set[str]):
    """The lag rows once every topic of ``topics`` is mirrored and nothing is behind (else None)."""
    rows = lag(profile)
    mirrored = {r.topic for r in rows if r.offset is not None}
    return rows if topics <= mirrored and all(r.lag == 0 for r in rows) else None


def wait_for(predicate, timeout: float, what: str, step: float = 1.0):
    """``predicate()``'s first true value, asked every ``step`` seconds; an AssertionError (a test's failure, a
    benchmark's recorded error) naming ``what`` after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(step)
    raise AssertionError(f"timed out after {timeout:.0f} s waiting for {what}")
