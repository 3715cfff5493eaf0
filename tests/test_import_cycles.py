"""No import cycles in the packages, lazy imports included.

Every ``import`` statement counts, wherever it stands (module level, inside a function, under
``if TYPE_CHECKING:``), so a cycle cannot hide behind a deferred import. An import of
``a.b.c`` is an edge to module ``a.b.c`` only, not to the packages ``a`` and ``a.b`` that
Python initialises on the way: those would make every root-level re-export a "cycle".
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SOURCES = {
    "webshop_gym": ROOT / "packages/webshop-gym/src/webshop_gym",
    "shared_prompts": ROOT / "packages/shared-prompts/src/shared_prompts",
    "apo_agent": ROOT / "packages/apo-agent/src/apo_agent",
}


def module_files() -> dict[str, Path]:
    modules = {}
    for package, folder in SOURCES.items():
        for path in folder.rglob("*.py"):
            parts = path.relative_to(folder).with_suffix("").parts
            if parts[-1] == "__init__":
                parts = parts[:-1]
            modules[".".join((package, *parts))] = path
    return modules


def imported_modules(module: str, path: Path, known: set[str]) -> set[str]:
    """The project modules that ``module`` imports anywhere in its source."""
    is_package = path.name == "__init__.py"
    found = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = module.split(".")[: len(module.split(".")) - node.level + is_package]
                base = ".".join([*anchor, base] if base else anchor)
            # `from a import b` imports module a.b when there is one, else a name of a.
            names = [
                f"{base}.{alias.name}" if f"{base}.{alias.name}" in known else base for alias in node.names
            ]
        else:
            continue
        found.update(name for name in names if name in known and name != module)
    return found


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One cycle of the directed graph as a list of modules (first == last), or None."""
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        path.append(node)
        for target in sorted(graph[node]):
            if state.get(target) == 1:
                return [*path[path.index(target) :], target]
            if target not in state and (cycle := visit(target)):
                return cycle
        path.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state and (cycle := visit(node)):
            return cycle
    return None


def import_graph() -> dict[str, set[str]]:
    modules = module_files()
    return {name: imported_modules(name, path, set(modules)) for name, path in modules.items()}


def test_no_import_cycles() -> None:
    graph = import_graph()
    assert len(graph) > 50, "the walk found too few modules: are the source folders right?"
    cycle = find_cycle(graph)
    assert cycle is None, "import cycle: " + " -> ".join(cycle or [])


def test_find_cycle_reports_a_lazy_cycle(tmp_path: Path) -> None:
    # The checker itself: a cycle held apart by a function-level import is still found.
    (tmp_path / "a.py").write_text("import b\n")
    (tmp_path / "b.py").write_text("def f():\n    from a import x\n")
    known = {"a", "b"}
    graph = {name: imported_modules(name, tmp_path / f"{name}.py", known) for name in known}
    assert find_cycle(graph) == ["a", "b", "a"]
    assert find_cycle({"a": {"b"}, "b": set()}) is None


@pytest.mark.parametrize("package", sorted(SOURCES))
def test_every_package_has_modules(package: str) -> None:
    assert any(name.startswith(package + ".") for name in import_graph())
