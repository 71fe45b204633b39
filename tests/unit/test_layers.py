"""Imports only go downward: a module may import its own layer and the layers listed before it, never one after.

The order, written once here: the flow (profile -> render -> preflight -> run -> verify) with the thin Kafka
wrappers under render, an identity's process and folder (``identities``) under pre-flight, the cut-over (which uses
the whole flow) after it, the sandbox above the flow it tests, then the demo, the commands and the entry points.
"""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "secure_mirror"
LAYERS = [
    {"__init__", "errors", "paths", "folders", "java_tools"},
    {"profile"},
    {"kafka"},
    {"render"},
    {"identities"},
    {"preflight"},
    {"run"},
    {"verify"},
    {"cutover"},
    {"sandbox"},
    {"demo"},
    {"commands"},
    {"cli", "__main__"},
]
RANK = {name: index for index, names in enumerate(LAYERS) for name in names}


def _layer_of(path: Path, root: Path = PACKAGE) -> str:
    """The layer of ``path`` below ``root``: its first folder, or its own name."""
    relative = path.relative_to(root)
    return relative.parts[0] if len(relative.parts) > 1 else relative.stem


def _imported_layers(path: Path, package: str = "secure_mirror") -> set[str]:
    """The layers below ``package`` (``secure_mirror``, ``secure_mirror.preflight``) that ``path`` imports."""
    prefix, depth, found = package.split("."), len(package.split(".")), set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            parts = node.module.split(".")
            if parts[:depth] == prefix:
                found |= {parts[depth]} if len(parts) > depth else {alias.name for alias in node.names}
        elif isinstance(node, ast.Import):
            found |= {a.name.split(".")[depth] for a in node.names if a.name.startswith(f"{package}.")}
    return found


def test_every_module_belongs_to_a_layer():
    assert {_layer_of(path) for path in PACKAGE.rglob("*.py")} <= set(RANK)


def test_no_module_imports_from_a_higher_layer():
    upward = sorted(
        f"{path.relative_to(PACKAGE.parent)} imports secure_mirror.{name}"
        for path in PACKAGE.rglob("*.py")
        for name in _imported_layers(path)
        if name in RANK and RANK[name] > RANK[_layer_of(path)]
    )
    assert upward == []


# The benchmarks stand on their harness (benchmarks/harness: the session, options, results, contenders, clocks),
# which imports no scenario; and nothing of benchmarks/ imports the tests (the tests may import the benchmarks).
BENCHMARKS = PACKAGE.parent / "benchmarks"


def test_the_benchmarks_harness_imports_no_scenario():
    upward = sorted(
        f"{path.relative_to(PACKAGE.parent)} imports benchmarks.{name}"
        for path in (BENCHMARKS / "harness").rglob("*.py")
        for name in _imported_layers(path, "benchmarks")
        if name != "harness"
    )
    assert upward == []


def test_the_benchmarks_import_nothing_from_the_tests():
    found = sorted(
        str(path.relative_to(PACKAGE.parent)) for path in BENCHMARKS.rglob("*.py") if _imported_layers(path, "tests")
    )
    assert found == []


# Inside pre-flight: the probes ask and answer with plain data (never a Check: they do not see the model), the
# checks ask through them and judge, and the runner runs the checks.
PREFLIGHT = PACKAGE / "preflight"
PREFLIGHT_LAYERS = [
    {"probes"},
    {"model", "authorizer"},
    {"checks"},
    {"runner", "table", "admin_identity", "__init__"},
]
PREFLIGHT_RANK = {name: index for index, names in enumerate(PREFLIGHT_LAYERS) for name in names}


def test_every_preflight_module_belongs_to_a_sublayer():
    assert {_layer_of(path, PREFLIGHT) for path in PREFLIGHT.rglob("*.py")} <= set(PREFLIGHT_RANK)


def test_probes_sit_below_checks_and_checks_below_the_runner():
    upward = sorted(
        f"{path.relative_to(PACKAGE.parent)} imports secure_mirror.preflight.{name}"
        for path in PREFLIGHT.rglob("*.py")
        for name in _imported_layers(path, "secure_mirror.preflight")
        if PREFLIGHT_RANK.get(name, -1) > PREFLIGHT_RANK[_layer_of(path, PREFLIGHT)]
    )
    assert upward == []


def test_the_preflight_check_sees_a_probe_importing_the_model(tmp_path):
    module = tmp_path / "m.py"
    module.write_text("from secure_mirror.preflight.model import Check\nimport secure_mirror.preflight.checks.base\n")
    assert _imported_layers(module, "secure_mirror.preflight") == {"model", "checks"}


def test_the_check_sees_an_import_from_the_tests(tmp_path):
    module = tmp_path / "m.py"
    module.write_text("def f():\n    from tests.support import provenance\n\n    return provenance\n")
    assert _imported_layers(module, "tests") == {"support"}


def test_the_check_sees_an_upward_import(tmp_path):
    module = tmp_path / "m.py"
    module.write_text("from secure_mirror.run.launcher import run_mirror\nimport secure_mirror.verify.scan\n")
    assert _imported_layers(module) == {"run", "verify"}
