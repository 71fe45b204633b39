"""No import circle among the package's modules, nor among the benchmarks', whether its imports sit at the top of a
module or in a function.

A function-level import keeps a heavy library out of start-up (pyspark, cryptography, the job's zip in a YARN
container); it never hides a circle. So every ``secure_mirror`` import counts here, wherever it is written, except
one under ``if TYPE_CHECKING:`` (never executed). Importing ``a.b.c`` also runs ``a/b/__init__.py``; that implicit
edge is not counted (a package's ``__init__`` may import its own modules).
"""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "secure_mirror"
BENCHMARKS = PACKAGE.parent / "benchmarks"


def _module_name(path: Path, root: Path) -> str:
    parts = list(path.relative_to(root.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _type_checking_only(tree: ast.Module) -> set[int]:
    """The ids of the nodes under ``if TYPE_CHECKING:`` (or ``typing.TYPE_CHECKING``)."""
    hidden: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and ast.unparse(node.test) in ("TYPE_CHECKING", "typing.TYPE_CHECKING"):
            hidden |= {id(inner) for statement in node.body for inner in ast.walk(statement)}
    return hidden


def import_graph(root: Path) -> dict[str, dict[str, int | None]]:
    """module -> {imported module: the line of the import when it sits in a function, else None}."""
    modules = {_module_name(path, root): path for path in sorted(root.rglob("*.py"))}
    top = root.name
    graph: dict[str, dict[str, int | None]] = {}
    for name, path in modules.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        skipped = _type_checking_only(tree)
        in_function = {
            id(inner)
            for node in ast.walk(tree)
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
            for inner in ast.walk(node)
        }
        edges = graph.setdefault(name, {})
        for node in ast.walk(tree):
            if id(node) in skipped:
                continue
            targets: list[str] = []
            if isinstance(node, ast.ImportFrom) and node.level == 0 and (node.module or "").split(".")[0] == top:
                module = node.module or top
                targets = [f"{module}.{a.name}" if f"{module}.{a.name}" in modules else module for a in node.names]
            elif isinstance(node, ast.Import):
                targets = [a.name for a in node.names if a.name.split(".")[0] == top]
            for target in targets:
                if target != name:
                    line = node.lineno if id(node) in in_function else None
                    edges[target] = line if edges.get(target, line) is not None else None
    return graph


def cycles(graph: dict[str, dict[str, int | None]]) -> list[list[str]]:
    """One circle (its modules in import order, the first again at the end) per group of modules that import each
    other, each import in a function shown as ``module (line N, in a function)``."""
    found: list[list[str]] = []
    done: set[str] = set()

    def walk(module: str, path: list[str]) -> None:
        if module in path:
            circle = path[path.index(module) :] + [module]
            if not any(set(circle) <= set(known) for known in found):
                found.append(circle)
            return
        if module in done:
            return
        for target in sorted(graph.get(module, {})):
            walk(target, [*path, module])
        done.add(module)

    for module in sorted(graph):
        walk(module, [])
    return [_spelled(graph, circle) for circle in found]


def _spelled(graph: dict[str, dict[str, int | None]], circle: list[str]) -> list[str]:
    shown = [circle[0]]
    for importer, imported in zip(circle, circle[1:]):
        line = graph[importer][imported]
        shown.append(imported if line is None else f"{imported} (imported at {importer}:{line}, in a function)")
    return shown


def test_no_import_circle():
    assert cycles(import_graph(PACKAGE)) == []


def test_no_import_circle_among_the_benchmarks():
    assert cycles(import_graph(BENCHMARKS)) == []


def test_the_check_sees_a_circle_hidden_in_a_function(tmp_path):
    package = tmp_path / "secure_mirror"
    (package / "sub").mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "sub" / "__init__.py").write_text("from secure_mirror.sub.a import f\n")
    (package / "sub" / "a.py").write_text("from secure_mirror.sub import b\n\ndef f():\n    return b\n")
    (package / "sub" / "b.py").write_text("def g():\n    from secure_mirror.sub.a import f\n\n    return f\n")
    (package / "sub" / "c.py").write_text(
        "from typing import TYPE_CHECKING\n\nif TYPE_CHECKING:\n    from secure_mirror.sub import a\n"
    )
    (package / "d.py").write_text("from secure_mirror.sub import c\n\ndef h():\n    import secure_mirror.d\n")
    assert cycles(import_graph(package)) == [
        [
            "secure_mirror.sub.a",
            "secure_mirror.sub.b",
            "secure_mirror.sub.a (imported at secure_mirror.sub.b:2, in a function)",
        ]
    ]
