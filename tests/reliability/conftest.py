"""Settings, figures and the summary of the reliability suite (``-m reliability``).

The tests add their figures to :data:`STATS` (a Counter): ``cases``, ``records_produced``, ``records_lost``,
``records_duplicated``, ``restarts`` (the mirror cases of tests/reliability/harness.py), ``inputs`` (hostile
inputs tried), ``leaks_found`` and ``leak_scans``, plus the hostile-input details below; one line per mirror case
goes to :data:`DETAILS`. The session ends with the line "cases run, records produced, lost, duplicated, restarts,
inputs tried, leaks found"; when ``SECURE_MIRROR_RELIABILITY_RESULTS=PATH.json`` is set (``scripts/reliability``
sets it) the figures are also written to PATH.json and PATH.md with the setting, date, machine and command, and the
build the session started from (``build``: commit, clean tree or not, date, machine; benchmarks/harness/provenance.py).

``SECURE_MIRROR_RELIABILITY=long`` (:data:`LONG`) selects the long setting; quick is the default and what CI runs.
The mirror fault tests (tests/reliability/test_mirror_faults.py) read it for their number of kills, stops and
bounces (see that module); the hostile-input tests (tests/reliability/test_hostile_input.py) for one of two
hypothesis settings profiles:

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

import json
import os
import socket
import sys
import time
from collections import Counter
from datetime import datetime, timedelta, timezone
from pathlib import Path

from hypothesis import HealthCheck, settings

from benchmarks.harness import provenance

STATS: Counter = Counter()  # filled by the tests, printed by pytest_terminal_summary
DETAILS: list[str] = []  # one line per mirror case: what was done to it and its figures
FIGURES: list[dict] = []  # one row per fault case with its figures as numbers (the three-broker cases), if any
_STARTED = time.monotonic()
# The checkout the session starts from (the code it runs), read only when the figures are to be written.
_BUILD = provenance.build() if os.environ.get("SECURE_MIRROR_RELIABILITY_RESULTS") else None

_COMMON = dict(
    database=None,
    print_blob=True,
    suppress_health_check=[
        HealthCheck.too_slow,
        HealthCheck.data_too_large,
        HealthCheck.filter_too_much,
        HealthCheck.large_base_example,
    ],
)
settings.register_profile("reliability-quick", max_examples=150, deadline=timedelta(seconds=30), **_COMMON)
settings.register_profile("reliability-long", max_examples=3000, deadline=None, **_COMMON)

LONG = os.environ.get("SECURE_MIRROR_RELIABILITY", "quick") == "long"
PROFILE = "reliability-long" if LONG else "reliability-quick"


def figures() -> dict:
    return {
        "cases_run": STATS["cases"],
        "records_produced": STATS["records_produced"],
        "records_lost": STATS["records_lost"],
        "records_duplicated": STATS["records_duplicated"],
        "restarts": STATS["restarts"],
        "inputs_tried": STATS["inputs"],
        "leaks_found": STATS["leaks_found"],
        "leak_scans": STATS["leak_scans"],
    }


def summary_line(f: dict) -> str:
    return (
        f"cases run: {f['cases_run']}, records produced: {f['records_produced']}, lost: {f['records_lost']}, "
        f"duplicated: {f['records_duplicated']}, restarts: {f['restarts']}, inputs tried: {f['inputs_tried']}, "
        f"leaks found: {f['leaks_found']} (in {f['leak_scans']} scans)"
    )


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    results = os.environ.get("SECURE_MIRROR_RELIABILITY_RESULTS")
    if not STATS and not DETAILS and not results:
        return
    if STATS["inputs"]:
        _hostile_summary(terminalreporter)
    terminalreporter.write_sep("-", "reliability summary")
    for line in DETAILS:
        terminalreporter.write_line(line)
    terminalreporter.write_line(summary_line(figures()))
    if results:
        written = write_results(Path(results), terminalreporter, exitstatus)
        terminalreporter.write_line(f"results written to {written[0]} and {written[1]}")


def write_results(path: Path, terminalreporter, exitstatus) -> tuple[Path, Path]:
    """PATH.json and PATH.md: the figures, the setting, the date, the build and the machine, the command, the
    outcome."""
    stats = terminalreporter.stats
    build = _BUILD or provenance.build()
    record: dict = {
        "setting": "long" if LONG else "quick",
        "date": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "build": build,
        "machine": {"host": socket.gethostname(), **build["machine"]},
        "command": os.environ.get("SECURE_MIRROR_RELIABILITY_COMMAND") or " ".join(sys.argv),
        "duration_seconds": round(time.monotonic() - _STARTED),
        "pytest_exit_status": int(exitstatus),
        "tests": {k: len(stats.get(k, [])) for k in ("passed", "failed", "error", "skipped")},
        "figures": figures(),
        "cases": list(DETAILS),
        **({"case_figures": list(FIGURES)} if FIGURES else {}),
        "hostile_input": {
            k: STATS[k]
            for k in ("tracebacks", "leaks", "hangs", "exit3", "left_behind", "jaas_parsed", "jaas_injections")
        },
    }
    json_path = path.with_suffix(".json")
    json_path.parent.mkdir(parents=True, exist_ok=True)
    json_path.write_text(json.dumps(record, indent=2) + "\n")
    md_path = path.with_suffix(".md")
    f = record["figures"]
    rows = "\n".join(f"| {name.replace('_', ' ')} | {value} |" for name, value in f.items())
    cases = "\n".join(f"- {line}" for line in DETAILS) or "- (no mirror case ran)"
    md_path.write_text(
        f"# Reliability suite, {record['setting']} setting\n\n"
        f"{record['date']} {provenance.at(build)}, on {record['machine']['host']} "
        f"({provenance.described(record['machine'])}), made by:\n\n```sh\n{record['command']}\n```\n\n"
        f"Tests: {record['tests']['passed']} passed, {record['tests']['failed']} failed, "
        f"{record['tests']['error']} errors, {record['tests']['skipped']} skipped (pytest exit status "
        f"{record['pytest_exit_status']}) in {record['duration_seconds']} s.\n\n| figure | value |\n| --- | --- |\n{rows}\n\n"
        f"## Mirror cases\n\n{cases}\n{_figures_table()}"
    )
    return json_path, md_path


def _figures_table() -> str:
    """:data:`FIGURES` as a Markdown table (empty when no case recorded a row)."""
    if not FIGURES:
        return ""
    columns = list(FIGURES[0])
    head = f"| {' | '.join(c.replace('_', ' ') for c in columns)} |\n| {' | '.join('---' for _ in columns)} |\n"
    rows = "".join(f"| {' | '.join(str(row.get(c, '')) for c in columns)} |\n" for row in FIGURES)
    return f"\n## Figures per case\n\n{head}{rows}"


def _hostile_summary(terminalreporter) -> None:
    line = (
        f"hostile inputs tried: {STATS['inputs']}, tracebacks: {STATS['tracebacks']}, "
        f"leaks: {STATS['leaks']}, hangs: {STATS['hangs']}, exit 3: {STATS['exit3']}, "
        f"left-behind renders: {STATS['left_behind']}"
    )
    detail = (
        f"(setting {PROFILE}; cli runs: {STATS['cli_runs']} in-process + {STATS['subprocess_runs']} as a "
        f"process; exit 0: {STATS['exit0']}, exit 2: {STATS['exit2']}; JAAS entries parsed by Kafka/JDK: "
        f"{STATS['jaas_parsed']}, injections that changed an option: {STATS['jaas_injections']}; "
        f"unrepresentable values refused: {STATS['jaas_refused']})"
    )
    terminalreporter.write_sep("-", "hostile input summary")
    terminalreporter.write_line(line)
    terminalreporter.write_line(detail)
