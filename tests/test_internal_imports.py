"""Code inside the repo imports moved code from where it lives now, not through the old paths.

After the reorganisation the old module paths stay as thin re-export modules for users outside
the repo (each one's docstring starts with "Moved to"), and a few real modules keep names that
moved out of them importable. An import of those from inside the repo would hide where the
code lives and keep the old paths load-bearing; this test names each one as ``file:line``.

The thin modules are found by their docstring, so a new one is covered without editing this
file. Names kept importable in a real module cannot be told apart from the module's own names
by reading it, so they are listed in `MOVED_NAMES`; a test checks the list is not stale.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from webshop_gym.agents import pages

ROOT = Path(__file__).resolve().parents[1]
PACKAGE_SOURCES = sorted(ROOT.glob("packages/*/src"))
CHECKED = [*(ROOT / "packages").glob("*/src"), *(ROOT / "packages").glob("*/tests"), ROOT / "benchmarks"]
CHECKED += [ROOT / "scripts", ROOT / "noxfile.py"]

# Tests whose purpose is to check that the old paths still work.
# (test_config_sections.py checks old paths through importlib, which this test does not read.)
OLD_PATH_TESTS = {"packages/webshop-gym/tests/test_moved_modules.py"}

# Names that moved out of a real module but stay importable from it: module -> {name: new home}.
MOVED_NAMES = {
    "webshop_gym.wrappers": dict.fromkeys(
        pages.__all__,  # the page readers moved out of wrappers whole
        "webshop_gym.agents.pages",
    ),
    "apo_agent.pipeline": {
        "build_reference": "apo_agent.warm_start.reference",
        "evaluate_reference": "apo_agent.evaluation",
    },
    "apo_agent.rollout": {
        "EnvSpec": "apo_agent.rollout.envs",
        "make_envs": "apo_agent.rollout.envs",
        "Episode": "apo_agent.rollout.episodes",
        "action_from_answer": "apo_agent.rollout.episodes",
        "collect_episodes": "apo_agent.rollout.episodes",
    },
    "apo_agent.trainer": {
        "env_spec": "apo_agent.rollout.envs",
        "split_goals": "apo_agent.rollout.envs",
        "prompt_encoder": "apo_agent.rollout.tokens",
    },
    "apo_agent.config": {"PRESETS": "apo_agent.presets"},
}


def module_name(path: Path) -> str | None:
    """The dotted name of a module file under a package's src/ or the repo root, else None."""
    for base in [*PACKAGE_SOURCES, ROOT]:
        if path.is_relative_to(base):
            parts = path.relative_to(base).with_suffix("").parts
            return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
    return None


def thin_modules() -> dict[str, str]:
    """Every thin re-export module of the repo, with the first line of its docstring."""
    found = {}
    for path in [
        *(p for src in PACKAGE_SOURCES for p in src.rglob("*.py")),
        *ROOT.glob("benchmarks/**/*.py"),
    ]:
        docstring = ast.get_docstring(ast.parse(path.read_text(), str(path))) or ""
        if docstring.startswith("Moved to"):
            found[module_name(path)] = docstring.splitlines()[0]
    return found


def checked_files() -> list[Path]:
    files = [path for place in CHECKED for path in ([place] if place.is_file() else place.rglob("*.py"))]
    return sorted(path for path in files if path.relative_to(ROOT).as_posix() not in OLD_PATH_TESTS)


def embedded_code(tree: ast.AST) -> list[tuple[int, ast.AST]]:
    """Python source held in string constants (scripts run in a subprocess), parsed, with the
    line its string starts on; strings that are not Python with an import are skipped."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and "import " in node.value:
            try:
                found.append((node.lineno - 1, ast.parse(node.value)))
            except SyntaxError:
                continue
    return found


def old_path_imports(path: Path, thin: dict[str, str]) -> list[str]:
    """``file:line: what`` for each import in ``path`` of a thin module or a moved name."""
    tree = ast.parse(path.read_text(), str(path))
    return [
        problem
        for offset, code in [(0, tree), *embedded_code(tree)]
        for problem in imports_of_old_paths(path, code, offset, thin)
    ]


def imports_of_old_paths(path: Path, tree: ast.AST, offset: int, thin: dict[str, str]) -> list[str]:
    module = module_name(path) or ""
    is_package = path.name == "__init__.py"
    file = path.relative_to(ROOT).as_posix()
    problems = []
    for node in ast.walk(tree):
        where = f"{file}:{node.lineno + offset}" if hasattr(node, "lineno") else ""
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name in thin:
                    problems.append(f"{where}: import {alias.name} ({thin[alias.name]})")
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = module.split(".")
                anchor = parts[: len(parts) - node.level + is_package]
                base = ".".join([*anchor, base] if base else anchor)
            if base in thin:
                problems.append(f"{where}: from {base} import ... ({thin[base]})")
                continue
            for alias in node.names:
                submodule = f"{base}.{alias.name}"
                if submodule in thin:
                    problems.append(f"{where}: from {base} import {alias.name} ({thin[submodule]})")
                elif alias.name in MOVED_NAMES.get(base, {}):
                    new = MOVED_NAMES[base][alias.name]
                    problems.append(f"{where}: from {base} import {alias.name} (moved to {new})")
    return problems


def test_thin_modules_are_found():
    thin = thin_modules()
    # A few known ones, so a change of the docstring convention cannot empty the check silently.
    for name in ["webshop_gym.scripted", "webshop_gym.vector", "benchmarks.harness.agents.base"]:
        assert name in thin, f"{name} no longer looks like a thin module: {sorted(thin)}"


@pytest.mark.parametrize("module", sorted(MOVED_NAMES))
def test_moved_names_are_still_in_their_old_module(module):
    """A stale entry (the name gone from the old module) would check nothing."""
    package, _, rest = module.partition(".")
    source = next(src / package for src in PACKAGE_SOURCES if (src / package).is_dir())
    path = source.joinpath(*rest.split("."))
    path = path / "__init__.py" if path.is_dir() else path.with_suffix(".py")
    tree = ast.parse(path.read_text(), str(path))
    names = {
        alias.asname or alias.name
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom)
        for alias in node.names
    }
    names |= {node.name for node in tree.body if isinstance(node, (ast.FunctionDef, ast.ClassDef))}
    assert set(MOVED_NAMES[module]) <= names, set(MOVED_NAMES[module]) - names


def test_the_exceptions_still_exist():
    for test in OLD_PATH_TESTS:
        assert (ROOT / test).is_file(), f"{test} is gone: drop it from OLD_PATH_TESTS"


def test_an_old_path_is_named_with_its_line():
    """The check itself: a thin module, a moved name and a subprocess script are each caught."""
    source = ROOT / "scripts" / "example_of_old_imports.py"  # never written: the text is parsed only
    text = (
        "from webshop_gym.agents.scripted import RulePolicy\n"
        "from webshop_gym import scripted\n"
        "from apo_agent.trainer import env_spec, train\n"
        'SCRIPT = """\nimport webshop_gym.vector\n"""\n'
    )
    found = []
    tree = ast.parse(text)
    for offset, code in [(0, tree), *embedded_code(tree)]:
        found += imports_of_old_paths(source, code, offset, thin_modules())
    lines = sorted(problem.split(": ")[0] for problem in found)
    assert lines == [f"scripts/example_of_old_imports.py:{line}" for line in (2, 3, 5)], found


def test_no_internal_imports_of_old_paths():
    thin = thin_modules()
    problems = [problem for path in checked_files() for problem in old_path_imports(path, thin)]
    # The thin modules themselves are where the old paths live; they import only the new places.
    assert not problems, "imports of old paths (import from the new place):\n" + "\n".join(problems)
