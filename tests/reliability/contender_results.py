"""The three-broker faults' comparison of mirrors in one results file, made over several invocations
(tests/reliability/test_three_broker_faults.py; no tests here).

``SECURE_MIRROR_THREE_BROKER_CONTENDERS_RESULTS=PATH.json`` has the module write its rows into PATH.json and rewrite
PATH.md from it. A long run of one contender takes an hour on this project's two-CPU machines, so each invocation runs
some contenders (``SECURE_MIRROR_THREE_BROKER_CONTENDERS``) and :func:`merge` replaces, in the file, the rows of the
contenders it ran in its setting (quick or long), keeping every other contender's rows with the run that made them:
its commit and whether the tree was clean, date and machine (benchmarks/harness/provenance.py), command and seed. The
file's own ``build`` (what tests/unit/test_results_provenance.py reads of a quoted file) is there only when every
run measured one commit (:func:`common_build`).

PATH.md (:func:`markdown`): per setting, the runs, then per fault (in the order run, with its round) one table per
guarantee: our exactly_once beside MirrorMaker 2 with exactly-once, our at_least_once beside MirrorMaker 2; the
whole-run rows last. Each row is the contender's own run of that fault (runs of different invocations are separate
runs of the same schedule of faults: their faults' timings differ).
"""

from __future__ import annotations

import json
import os
import shlex
import sys
from pathlib import Path

from benchmarks.harness import provenance

ENV = "SECURE_MIRROR_THREE_BROKER_CONTENDERS_RESULTS"
# the environment that chooses what a run does, written before its command (command())
CHOOSING = (
    "SECURE_MIRROR_TEST_THREE_BROKERS",
    "SECURE_MIRROR_RELIABILITY",
    "SECURE_MIRROR_THREE_BROKER_CONTENDERS",
    "SECURE_MIRROR_THREE_BROKER_FAULTS",
    "SECURE_MIRROR_SEED",
    ENV,
)
ORDER = ("exactly_once", "at_least_once", "mm2", "mm2-eos")  # ours first in each table
COLUMNS = (  # (row key, column title)
    ("mirror", "mirror"),
    ("fault_seconds", "fault s"),
    ("caught_up_seconds", "caught up s"),
    ("first_new_record_seconds", "first new record s"),
    ("highest_lag", "highest lag"),
    ("produced", "produced"),
    ("lost", "lost"),
    ("duplicated", "duplicated"),
    ("aborted_on_target", "aborted on target"),
    ("restarts", "restarts / failed tasks"),
    ("task_retries", "task retries"),
)


def command() -> str:
    """The invocation as it can be typed again: the choosing environment, then pytest and its arguments."""
    said = os.environ.get("SECURE_MIRROR_RELIABILITY_COMMAND")
    if said:
        return said
    env = " ".join(f"{k}={shlex.quote(os.environ[k])}" for k in CHOOSING if k in os.environ)
    return f"{env} .venv/bin/python -m pytest {shlex.join(sys.argv[1:])}".strip()


def merge(existing: dict | None, run: dict) -> dict:
    """``existing`` (the file's record, or None) with ``run``'s rows in place of the rows of the same setting and
    contenders; runs left without rows are dropped."""
    runs = []
    for old in (existing or {}).get("runs", []):
        if old["setting"] == run["setting"]:
            kept = [c for c in old["contenders"] if c not in run["contenders"]]
            old = {**old, "contenders": kept, "rows": [r for r in old["rows"] if _contender(r["key"]) in kept]}
        if old["rows"]:
            runs.append(old)
    runs.append(run)
    merged = {"what": "three-broker faults, each contender's figures per fault", "runs": runs}
    return {**merged, **({"build": build} if (build := common_build(runs)) else {})}


def common_build(runs: list[dict]) -> dict | None:
    """The file's ``build`` (benchmarks/harness/provenance.py) when every run measured the same commit: that commit, clean
    only if every run's tree was, the latest run's date and machine; None when the runs measured different commits
    (each run says its own)."""
    commits = {(run.get("build") or {}).get("commit") for run in runs}
    if len(commits) != 1 or None in commits:
        return None
    latest = runs[-1]["build"]
    cleans = [run["build"].get("clean") for run in runs]
    dirty = [run["build"].get("dirty_paths") for run in runs]
    return {
        **latest,
        "clean": None if None in cleans else all(cleans),
        "dirty_paths": None if None in dirty else max(dirty),
    }


def _contender(key: str) -> str:
    return "ours" if key in ("exactly_once", "at_least_once") else key


def write(path: Path, run: dict) -> tuple[Path, Path]:
    """Merge ``run`` into PATH.json (:func:`merge`) and write PATH.md (:func:`markdown`)."""
    json_path, md_path = path.with_suffix(".json"), path.with_suffix(".md")
    existing = json.loads(json_path.read_text()) if json_path.exists() else None
    record = merge(existing, run)
    json_path.parent.mkdir(parents=True, exist_ok=True)
    json_path.write_text(json.dumps(record, indent=2, default=str) + "\n")
    md_path.write_text(markdown(record))
    return json_path, md_path


def markdown(record: dict) -> str:
    out = [
        "# Three brokers a side: each mirror through the same faults",
        "",
        "Made by tests/reliability/test_three_broker_faults.py (its docstring defines every column and the command "
        "that makes this file). lost and duplicated: the independent read_committed count; restarts: our job's (no "
        "--supervise: must be 0), MirrorMaker 2's failed tasks; task retries: as the job's run --json said (empty: "
        "not said); caught up: from the fault's start (empty: not within 600 s, a MirrorMaker 2 task failed); "
        "first new record: from the fault's end; highest lag: the independent readers', from the fault's start to its "
        "catch-up. Empty: not measured or not reported. Rows of different runs come from different invocations, on a "
        "machine other test sessions load as well: compare their seconds and lags with that in mind (each run says "
        "its load average); lost, duplicated and restarts compare across runs.",
    ]
    for setting in ("quick", "long"):
        runs = [r for r in record["runs"] if r["setting"] == setting]
        if runs:
            out += _setting(setting, runs)
    return "\n".join(out) + "\n"


def _setting(setting: str, runs: list[dict]) -> list[str]:
    out = ["", f"## {setting.capitalize()} setting", "", "Runs:", ""]
    for run in runs:
        build = run["build"]
        out.append(
            f"- {', '.join(run['contenders'])}: {provenance.header(build)} Seed {run['seed']}"
            + (f", faults selected {run['faults_selected']!r}" if run.get("faults_selected") else "")
            + _load_text(run.get("load_average"))
            + f"; made by `{run['command']}`"
        )
    rows = [row for run in runs for row in run["rows"]]
    cases = list(dict.fromkeys((row["case"], row.get("round", 1)) for row in rows if row.get("round")))
    for case, round_ in cases:
        title = case if round_ == 1 else f"{case} (round {round_})"
        out += _tables(title, [row for row in rows if (row["case"], row.get("round")) == (case, round_)])
    out += _tables("Whole run", [row for row in rows if row["case"].startswith("whole run")])
    return out


def _load_text(load) -> str:
    """The machine's 1-minute load average over the run (a list: at its start, each fault's start, its end)."""
    if isinstance(load, dict):  # the first runs' form: {at_start: [x], at_end: y}
        load = [*(load.get("at_start") or []), load.get("at_end")]
    load = [x for x in load or [] if x is not None]
    return (
        f", load average {min(load)} to {max(load)} (1 minute, at its start, each fault's and its end)" if load else ""
    )


def _tables(title: str, rows: list[dict]) -> list[str]:
    out = ["", f"### {title}"]
    for guarantee in ("exactly_once", "at_least_once"):
        mine = sorted((row for row in rows if row["guarantee"] == guarantee), key=lambda row: ORDER.index(row["key"]))
        if not mine:
            continue
        out += ["", f"{guarantee}:", ""]
        out.append("| " + " | ".join(title for _key, title in COLUMNS) + " |")
        out.append("| " + " | ".join("---" for _ in COLUMNS) + " |")
        out += ["| " + " | ".join(_cell(row.get(key)) for key, _title in COLUMNS) + " |" for row in mine]
    return out


def _cell(value) -> str:
    return "" if value is None else str(value)
