"""Settings and the summary of the reliability suite's hostile-input tests (tests/reliability/test_hostile_input.py).

Two hypothesis settings profiles; the quick one is the default:

- ``reliability-quick``: 150 examples per property, 30 s per example at most (the hard time limit in the
  tests is separate and applies to every setting).
  This is what CI runs: ``.venv/bin/python -m pytest tests/reliability -q -m reliability``.
- ``reliability-long``: 3000 examples per property, no hypothesis deadline (the hard per-run limit still holds).
  Select it with ``SECURE_MIRROR_RELIABILITY=long``; it takes about 6 minutes on 2 cores (quick: about 25 s).

Hypothesis keeps no example database here (its .hypothesis/ cache is git-ignored); a failure prints the seed and
a reproduction blob (``@reproduce_failure``). The counts the tests record (:data:`STATS`) are printed at the end
of the session: "hostile inputs tried: N, tracebacks: 0, leaks: 0, ...".
"""

from __future__ import annotations

import os
from collections import Counter
from datetime import timedelta

from hypothesis import HealthCheck, settings

STATS: Counter = Counter()  # filled by the tests, printed by pytest_terminal_summary

_COMMON = dict(
    database=None,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much,
                           HealthCheck.large_base_example],
)
settings.register_profile("reliability-quick", max_examples=150, deadline=timedelta(seconds=30), **_COMMON)
settings.register_profile("reliability-long", max_examples=3000, deadline=None, **_COMMON)

LONG = os.environ.get("SECURE_MIRROR_RELIABILITY", "quick") == "long"
PROFILE = "reliability-long" if LONG else "reliability-quick"


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    if not STATS:
        return
    line = (f"hostile inputs tried: {STATS['inputs']}, tracebacks: {STATS['tracebacks']}, "
            f"leaks: {STATS['leaks']}, hangs: {STATS['hangs']}, exit 3: {STATS['exit3']}, "
            f"left-behind renders: {STATS['left_behind']}")
    detail = (f"(setting {PROFILE}; cli runs: {STATS['cli_runs']} in-process + {STATS['subprocess_runs']} as a "
              f"process; exit 0: {STATS['exit0']}, exit 2: {STATS['exit2']}; JAAS entries parsed by Kafka/JDK: "
              f"{STATS['jaas_parsed']}, injections that changed an option: {STATS['jaas_injections']}; "
              f"unrepresentable values refused: {STATS['jaas_refused']})")
    terminalreporter.write_sep("-", "hostile input summary")
    terminalreporter.write_line(line)
    terminalreporter.write_line(detail)
