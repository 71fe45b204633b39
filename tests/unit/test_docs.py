"""The front door and the pages behind it: the README stays short and names every page in ``docs/`` and the two
commands as the scripts run them; the benchmark notes index every results file and number their sections in order;
``docs/architecture.md`` names every layer folder, single module and pre-flight check module of the package."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
MAX_README_LINES = 160


def _text(path: Path) -> str:
    return path.read_text(encoding="utf-8")


def test_the_readme_is_a_front_door():
    """Short, no line over 120 characters, and the documentation's index fourth: after what it is, the two commands
    and install (issue 60, point 5)."""
    lines = _text(README).splitlines()
    assert len(lines) <= MAX_README_LINES
    assert [n for n, line in enumerate(lines, 1) if len(line) > 120] == []
    assert [line for line in lines if line.startswith("## ")][:3] == [
        "## Two commands",
        "## Install",
        "## Documentation",
    ]


def test_the_readme_links_every_page_in_docs():
    linked = set(re.findall(r"\]\((docs/[^)#]+)\)", _text(README)))
    assert sorted(f"docs/{p.name}" for p in (ROOT / "docs").iterdir() if p.is_file()) == sorted(linked)


def test_every_relative_link_of_the_readme_exists():
    targets = re.findall(r"\]\(([^)#:]+)(?:#[^)]*)?\)", _text(README))
    assert [t for t in targets if not (ROOT / t).exists()] == []


def test_the_two_commands_are_the_scripts():
    text = _text(README)
    for script in ("scripts/demo", "scripts/test"):
        assert re.search(rf"^{script} +# set up, then run ", text, re.M), script
        assert (ROOT / script).stat().st_mode & 0o111, script
        assert "scripts/setup" in _text(ROOT / script)
    assert re.search(r'exec .*secure-mirror" demo', _text(ROOT / "scripts/demo"))


def test_the_benchmark_notes_index_every_results_file_and_number_their_sections():
    notes = _text(ROOT / "benchmarks" / "NOTES.md")
    results = sorted(p.name for p in (ROOT / "benchmarks" / "results").iterdir() if p.is_file())
    assert [name for name in results if f"`{name}`" not in notes] == []
    numbers = [int(n) for n in re.findall(r"^## (\d+)\. ", notes, re.M)]
    assert numbers == list(range(1, len(numbers) + 1))


def test_the_architecture_names_every_layer_and_check_module():
    text = _text(ROOT / "docs" / "architecture.md")
    package = ROOT / "secure_mirror"
    folders = {p.name for p in package.iterdir() if p.is_dir() and any(p.glob("*.py"))}
    modules = {p.stem for p in package.glob("*.py")} - {"__init__"}
    checks = {p.stem for p in (package / "preflight" / "checks").glob("*.py")} - {"__init__"}
    assert sorted(name for name in folders | modules | checks if f"`{name}`" not in text) == []
