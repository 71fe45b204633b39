"""Sizes a reader can hold: no module of the package or of the benchmarks over 400 lines, no function or method over
60, from its ``def`` line to its last (signature, docstring and nested functions included; decorators not)."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "secure_mirror"
MEASURED = [PACKAGE, PACKAGE.parent / "benchmarks"]
MAX_FILE_LINES = 400
MAX_FUNCTION_LINES = 60


def _modules() -> list[Path]:
    return sorted(path for root in MEASURED for path in root.rglob("*.py"))


def long_functions(path: Path, root: Path = PACKAGE.parent, limit: int = MAX_FUNCTION_LINES) -> list[str]:
    """``file:line name (N lines)`` (the file relative to ``root``) for each function of ``path`` over ``limit``."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            length = (node.end_lineno or node.lineno) - node.lineno + 1
            if length > limit:
                found.append(f"{path.relative_to(root)}:{node.lineno} {node.name} ({length} lines)")
    return found


def test_no_module_is_over_400_lines():
    long = [
        f"{path.relative_to(PACKAGE.parent)} ({lines} lines)"
        for path in _modules()
        if (lines := len(path.read_text(encoding="utf-8").splitlines())) > MAX_FILE_LINES
    ]
    assert not long, f"over {MAX_FILE_LINES} lines; split by concern:\n" + "\n".join(long)


def test_no_function_is_over_60_lines():
    long = [entry for path in _modules() for entry in long_functions(path)]
    assert not long, f"over {MAX_FUNCTION_LINES} lines; split into named steps:\n" + "\n".join(long)


def test_a_function_is_measured_from_its_def_to_its_last_line(tmp_path):
    module = tmp_path / "secure_mirror" / "m.py"
    module.parent.mkdir()
    body = "".join(f"    x{i} = {i}\n" for i in range(58))
    # fits: 60 lines from its def (61 with its decorator); longer: 61
    module.write_text(
        f'@decorated\ndef fits():\n    """Doc."""\n{body}\n\nasync def longer():\n    """Doc."""\n{body}    return 1\n'
    )
    assert long_functions(module, tmp_path) == ["secure_mirror/m.py:64 longer (61 lines)"]
