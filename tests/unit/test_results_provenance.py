"""Evidence names its build (issue 58, point 5): a figure quoted from a results file is quoted at a commit.

The pages that quote figures (``QUOTING``: the README, docs/shown-live.md, benchmarks/NOTES.md) name results files
(``benchmarks/results/``, ``tests/reliability/results/``) in backticks: ``scale-cpu-1000``, ``cutover.md``,
``tests/reliability/results/three-brokers-long.md``, ``first-index-read-ahead-{128,8192}.md``, ``scale-5000*.md``.
For every results file a page quotes, one statement of that page (a paragraph, a list item or a table row) that
names the file must also name its commit:

- a file that records its build (``build.commit``, benchmarks/harness/provenance.py: every file written from now on):
  ``at <commit>`` (7 digits or more of it);
- an older file, which records none: ``committed at <commit>``, the commit that last wrote the file
  (``git log -1 -- <file>``, its ``.json``), which is when it was committed, not what it measured. Such a file
  changed since that commit cannot be quoted at all.

Old files are not given a ``build`` recovered from git: rewriting a results file would make the rewrite its last
commit, and a ``build`` not measured would read as measured. The page says what git knows, in those words.
"""

from __future__ import annotations

import fnmatch
import json
import re
import subprocess
from pathlib import Path
from types import SimpleNamespace

import pytest

from benchmarks.harness import cli, provenance, results

ROOT = Path(__file__).resolve().parents[2]
QUOTING = ["README.md", "docs/shown-live.md", "benchmarks/NOTES.md"]
RESULTS = ["benchmarks/results", "tests/reliability/results"]
SUFFIX = re.compile(r"\.(?:json|md|png|\*)$")
HASHES = r"\s+([0-9a-f]{7,40}(?:(?:,\s*|\s+and\s+)[0-9a-f]{7,40})*)\b"  # "at a1b2c3d", "at a1b2c3d and e4f5a6b"


# ---- reading the pages: pure --------------------------------------------------------------------------------------
def statements(text: str) -> list[str]:
    """The page's statements: paragraphs, list items (with their continuation lines) and table rows, fenced code
    left out."""
    text = re.sub(r"^```.*?^```[^\n]*$", "", text, flags=re.M | re.S)
    out: list[str] = []
    current: list[str] = []
    for line in text.splitlines():
        alone = line.lstrip().startswith(("|", "#"))
        if current and (not line.strip() or alone or re.match(r"\s*(?:[-*+]|\d+\.)\s", line)):
            out.append("\n".join(current))
            current = []
        if alone:
            out.append(line)
        elif line.strip():
            current.append(line)
    return out + (["\n".join(current)] if current else [])


def _expanded(token: str) -> list[str]:
    """``a-{1,2}.md`` -> ``a-1.md``, ``a-2.md``."""
    found = re.search(r"\{([^{}]*)\}", token)
    if not found:
        return [token]
    return [
        x for alt in found.group(1).split(",") for x in _expanded(token[: found.start()] + alt + token[found.end() :])
    ]


def named(statement: str, files: list[str]) -> set[str]:
    """The results files that ``statement`` names in backticks, each as its path without suffix
    (``benchmarks/results/cutover``), out of ``files`` (their paths, the folders in the order of :data:`RESULTS`).
    With a suffix (``.json``, ``.md``, ``.png``, ``.*``) or a ``results/`` folder any file; bare, only a name with a
    hyphen (``scale-cpu-1000``; ``cutover`` alone is a command's name); ``x*.md`` the files it matches. A name
    without its folder is the first folder's that has it: the benchmarks' (these pages name the reliability suite's
    files with their folder)."""
    homes = list(dict.fromkeys(f.rpartition("/")[0] for f in files))
    found: set[str] = set()
    for span in re.findall(r"`([^`\n]+)`", statement):
        for word in (w for token in _expanded(span) for w in re.findall(r"[\w./*-]+", token)):
            folder, _, base = word.rpartition("/")
            stem = SUFFIX.sub("", base)
            glob = "*" in stem and re.match(r"[a-z]", base)
            if (folder and not folder.endswith("results")) or not (glob or folder or stem != base or "-" in stem):
                continue
            for home in (h for h in homes if h.endswith(folder)):
                names = [f.rpartition("/")[2] for f in files if f.rpartition("/")[0] == home]
                hits = {
                    f"{home}/{n.split('.')[0]}"
                    for n in names
                    if (fnmatch.fnmatch(n, base) if glob else n.split(".")[0] == stem)
                }
                if hits:
                    found |= hits
                    break
    return found


# ---- the judgement: pure ------------------------------------------------------------------------------------------
def recorded_commit(result: dict | None) -> str | None:
    """The commit a results file records (``build.commit``), or None."""
    return ((result or {}).get("build") or {}).get("commit") or None


def run_commits(result: dict | None) -> list[str]:
    """The commits of a file whose runs each record their build (``runs[].build.commit``: several invocations, each
    at its own commit, tests/reliability/contender_results.py), in their order; [] when one does not."""
    runs = (result or {}).get("runs")
    commits = [((run or {}).get("build") or {}).get("commit") for run in runs] if isinstance(runs, list) else []
    return commits if commits and all(commits) else []


def _names(statement: str, commit: str, words: str) -> bool:
    """Whether ``statement`` names ``commit`` (7 digits or more) right after ``words`` (``at``, ``committed at``)."""
    listed = re.findall(r"\b" + r"\s+".join(words.split()) + HASHES, statement)
    return any(commit.startswith(h) for hashes in listed for h in re.findall(r"[0-9a-f]+", hashes))


def refusal(page: str, name: str, said: list[str], result: dict | None, committed: str | None, changed: bool) -> str:
    """Why ``page`` may not quote results file ``name`` as it does (``said``: its statements naming the file), or
    ``""``. ``result``: the file's JSON; ``committed``: the commit that last wrote it (git); ``changed``: whether it
    differs from that commit now."""
    commit = recorded_commit(result)
    if commit:
        if any(_names(s, commit, "at") for s in said):
            return ""
        return f"{page} quotes {name}, made at {commit[:12]}, and never says 'at {commit[:12]}' beside it"
    if runs := run_commits(result):  # a statement names the commit of a run it quotes
        if any(_names(s, run, "at") for s in said for run in runs):
            return ""
        made = " and ".join(dict.fromkeys(run[:12] for run in runs))
        return f"{page} quotes {name}, made by runs at {made}, and never says 'at' one of them beside it"
    if changed or not committed:
        why = "never committed" if not committed else "changed since its last commit"
        return f"{page} quotes {name}, which records no commit (no 'build') and is {why}: run it again to quote it"
    if any(_names(s, committed, "committed at") for s in said):
        return ""
    return (
        f"{page} quotes {name}, which records no commit (no 'build'), and never says 'committed at "
        f"{committed[:7]}' beside it (the commit that last wrote it: git log -1 -- its file)"
    )


# ---- the repository -----------------------------------------------------------------------------------------------
def _git(*args: str) -> str:
    return subprocess.run(["git", "-C", str(ROOT), *args], capture_output=True, text=True, check=True).stdout.strip()


def _record(name: str) -> Path:
    """The file git is asked about for results file ``name`` (a path without suffix): its ``.json`` (the record; the
    ``.md`` is its report)."""
    return next((p for p in (ROOT / f"{name}.json", ROOT / f"{name}.md") if p.exists()), ROOT / name)


def _quoted(files: list[str]) -> dict[str, dict[str, list[str]]]:
    """page -> results file (its path without suffix) -> the page's statements that name it."""
    quoted: dict[str, dict[str, list[str]]] = {}
    for page in QUOTING:
        for statement in statements((ROOT / page).read_text(encoding="utf-8")):
            for name in named(statement, files):
                quoted.setdefault(page, {}).setdefault(name, []).append(statement)
    return quoted


def test_every_quoted_results_file_names_its_commit():
    try:
        shallow = _git("rev-parse", "--is-shallow-repository") == "true"
    except (OSError, subprocess.CalledProcessError):
        pytest.skip("not a git checkout: the commits of the results files cannot be read")
    if shallow:
        pytest.skip("a shallow clone: git log cannot name the commit that last wrote each results file")
    files = [f"{folder}/{p.name}" for folder in RESULTS for p in sorted((ROOT / folder).iterdir()) if p.is_file()]
    changed = {line[3:].strip() for line in _git("status", "--porcelain", "--", *RESULTS).splitlines()}
    refused = []
    for page, said in _quoted(files).items():
        for name, where in sorted(said.items()):
            record = _record(name)
            path = str(record.relative_to(ROOT))
            result = json.loads(record.read_text()) if record.suffix == ".json" else None
            committed = _git("log", "-1", "--format=%H", "--", path) or None
            refused.append(refusal(page, name, where, result, committed, path in changed))
    assert [r for r in refused if r] == []


# ---- the judgement, case by case ----------------------------------------------------------------------------------
COMMIT = "6a8313079b34097b30c6456453b5703e460508e0"
OLD = "f6155a0aaaabbbbccccddddeeeeffff000011112"


def test_a_results_file_without_a_commit_is_refused():
    result = {"setting": "quick", "figures": {"records_lost": 0}}  # as every file before issue 58
    said = ["0 lost, 0 duplicated (`tests/reliability/results/quick.md`)"]
    assert refusal("README.md", "quick", said, result, OLD, changed=False) == (
        "README.md quotes quick, which records no commit (no 'build'), and never says 'committed at f6155a0' beside "
        "it (the commit that last wrote it: git log -1 -- its file)"
    )
    assert recorded_commit(result) is None and recorded_commit({"build": {"commit": None}}) is None


def test_an_old_file_is_quoted_with_the_commit_that_last_wrote_it():
    said = ["0 lost (`tests/reliability/results/quick.md`, results file committed at f6155a0)"]
    assert refusal("README.md", "quick", said, {}, OLD, changed=False) == ""
    two = ["`scale-x` and `quick.md` (results files committed at b59535f and\n  f6155a0): ..."]
    assert refusal("README.md", "quick", two, {}, OLD, changed=False) == ""
    assert refusal("README.md", "quick", ["(`quick.md`, committed at 1234567)"], {}, OLD, False).startswith(
        "README.md quotes quick, which records no commit"
    )
    # 'at' alone would claim it was measured there
    assert refusal("README.md", "quick", ["(`quick.md`, at f6155a0)"], {}, OLD, False) != ""


def test_an_old_file_changed_since_its_commit_or_never_committed_is_refused():
    said = ["(`quick.md`, results file committed at f6155a0)"]
    assert refusal("NOTES", "quick", said, {}, OLD, changed=True) == (
        "NOTES quotes quick, which records no commit (no 'build') and is changed since its last commit: run it again "
        "to quote it"
    )
    assert "never committed" in refusal("NOTES", "quick", said, {}, None, changed=False)


def test_a_file_that_records_its_build_is_quoted_at_that_commit():
    result = {"build": {"commit": COMMIT, "clean": False, "dirty_paths": 2}, "figures": {}}
    assert refusal("README.md", "cutover", ["`cutover.md` at 6a8313079b34 (tree not clean)"], result, OLD, True) == ""
    assert refusal("README.md", "cutover", ["`cutover.md`, committed at f6155a0"], result, OLD, False) == (
        "README.md quotes cutover, made at 6a8313079b34, and never says 'at 6a8313079b34' beside it"
    )


def test_a_file_of_runs_at_several_commits_is_quoted_at_one_of_them():
    runs = {"runs": [{"build": {"commit": "631ee892b0c6aa"}}, {"build": {"commit": "c9021ba941a3bb"}}]}
    assert refusal("docs/shown-live.md", "contenders", ["quick, at 631ee89"], runs, OLD, True) == ""
    assert refusal("docs/shown-live.md", "contenders", ["long, at c9021ba941a3"], runs, OLD, True) == ""
    assert refusal("docs/shown-live.md", "contenders", ["the quick run of 631ee89"], runs, OLD, False) == (
        "docs/shown-live.md quotes contenders, made by runs at 631ee892b0c6 and c9021ba941a3, and never says 'at' one "
        "of them beside it"
    )
    unmeasured = {"runs": [{"build": {"commit": "631ee892b0c6aa"}}, {}]}
    assert refusal("docs/shown-live.md", "contenders", ["at 631ee89"], unmeasured, OLD, True).startswith(
        "docs/shown-live.md quotes contenders, which records no commit"
    )


def test_statements_are_paragraphs_list_items_and_table_rows():
    text = "A para\ngoes on.\n\n- item one\n  continued\n- item two\n| a | b |\n| c | d |\n```sh\nx `y.md`\n```\nend\n"
    assert statements(text) == [
        "A para\ngoes on.",
        "- item one\n  continued",
        "- item two",
        "| a | b |",
        "| c | d |",
        "end",
    ]


def test_the_names_of_results_files_in_backticks():
    b, r = "benchmarks/results", "tests/reliability/results"
    names = ["cutover.json", "cutover.md", "scale-5000.md", "scale-5000-repeat.md", "scale-cpu-1000.json", "quick.md",
             "first-index-read-ahead-128.md", "first-index-read-ahead-8192.md", "profile.json"]  # fmt: skip
    files = [f"{b}/{n}" for n in names] + [f"{r}/quick.md", f"{r}/three-brokers-long.md"]
    assert named("`scale-cpu-1000` and `scale-5000*.md`", files) == {
        f"{b}/scale-cpu-1000",
        f"{b}/scale-5000",
        f"{b}/scale-5000-repeat",
    }
    assert named("`first-index-read-ahead-{128,8192}.md`", files) == {
        f"{b}/first-index-read-ahead-128",
        f"{b}/first-index-read-ahead-8192",
    }
    assert named("`tests/reliability/results/quick.md`, `benchmarks/results/cutover.{json,md}`", files) == {
        f"{r}/quick",
        f"{b}/cutover",
    }
    # without its folder: the benchmarks' first, else the folder that has it
    assert named("`quick.md` and `three-brokers-long.md`", files) == {f"{b}/quick", f"{r}/three-brokers-long"}
    # a command's name, another folder's file, a placeholder: not results files
    assert named("`secure-mirror cutover`, `DIR/cutover.json`, `schema/profile.schema.json`", files) == set()
    assert named("`tests/reliability/results/<quick|long>.{json,md}`, `--first-index`, `*`", files) == set()


# ---- the writers record it ----------------------------------------------------------------------------------------
def _commit_all(repo: Path) -> None:
    env = ["-c", "user.name=t", "-c", "user.email=t@example.test"]
    subprocess.run(["git", "-C", str(repo), *env, "add", "-A"], check=True)
    subprocess.run(["git", "-C", str(repo), *env, "commit", "-qm", "one"], check=True, capture_output=True)


def test_the_build_is_the_commit_and_whether_the_tree_was_clean(tmp_path):
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    (tmp_path / "a.txt").write_text("a\n")
    _commit_all(tmp_path)
    clean = provenance.build(tmp_path)
    assert (
        clean["commit"]
        == subprocess.run(
            ["git", "-C", str(tmp_path), "rev-parse", "HEAD"], capture_output=True, text=True
        ).stdout.strip()
    )
    assert (clean["clean"], clean["dirty_paths"]) == (True, 0)
    assert set(clean["machine"]) == {"cpus", "memory_gib", "platform", "python"}
    (tmp_path / "a.txt").write_text("b\n")
    (tmp_path / "new.txt").write_text("new\n")
    dirty = provenance.build(tmp_path)
    assert (dirty["commit"], dirty["clean"], dirty["dirty_paths"]) == (clean["commit"], False, 2)
    assert provenance.at(dirty) == f"at {clean['commit'][:12]} (tree not clean: 2 paths)"
    assert provenance.at(clean) == f"at {clean['commit'][:12]}"
    outside = provenance.build(tmp_path / "no-such-folder")
    assert (outside["commit"], outside["clean"], outside["dirty_paths"]) == (None, None, None)
    assert provenance.at(outside) == "at no known commit (git could not say)"


def test_a_report_says_its_build_under_its_title():
    build = {
        "commit": COMMIT,
        "clean": False,
        "dirty_paths": 1,
        "date": "2026-12-01T10:00:00+00:00",
        "machine": {"cpus": 2, "memory_gib": 23.5, "platform": "Linux-6.1", "python": "3.11.7"},
    }
    assert provenance.stamped("# Cut-over\n\nCommand: `x`\n", build) == (
        "# Cut-over\n\n2026-12-01T10:00:00+00:00 at 6a8313079b34 (tree not clean: 1 path), on 2 CPUs, 23.5 GiB, "
        "Linux-6.1, Python 3.11.7.\n\nCommand: `x`\n"
    )


def test_a_benchmark_writes_its_build_into_both_files(tmp_path, monkeypatch):
    monkeypatch.setattr(cli, "stop_on_sigterm", lambda: None)
    ran = {}

    def run(args, command):
        ran["build"] = provenance.build()  # the run starts after the build was read
        return {"command": command, "figures": {"re_read": 0}}

    results.results_main(["--seed", "7", "--out", str(tmp_path)], "d", "--failover", "failover", run, lambda r: "# T\n")
    result = json.loads((tmp_path / "failover.json").read_text())
    assert list(result["build"]) == ["commit", "clean", "dirty_paths", "date", "machine"]
    assert result["build"]["commit"] == ran["build"]["commit"] and result["build"]["date"] <= ran["build"]["date"]
    report = (tmp_path / "failover.md").read_text()
    assert report == f"# T\n\n{provenance.header(result['build'])}\n\n"


def test_the_reliability_suite_writes_its_build_into_both_files(tmp_path):
    from tests.reliability import conftest

    reporter = SimpleNamespace(stats={"passed": [1, 2]})
    json_path, md_path = conftest.write_results(tmp_path / "quick.json", reporter, 0)
    record = json.loads(json_path.read_text())
    assert list(record["build"]) == ["commit", "clean", "dirty_paths", "date", "machine"]
    assert record["machine"] == {"host": record["machine"]["host"], **record["build"]["machine"]}
    assert f" {provenance.at(record['build'])}, on {record['machine']['host']} (" in md_path.read_text().splitlines()[2]
