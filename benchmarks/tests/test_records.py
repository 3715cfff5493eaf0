"""benchmarks/records.py, benchmarks/README.md and the scripts agree: every script is named with
its command, every record's command runs a module that exists, every record's result is there."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from benchmarks.records import RECORDS

ROOT = Path(__file__).resolve().parents[2]
BENCHMARKS = ROOT / "benchmarks"
README = (BENCHMARKS / "README.md").read_text(encoding="utf-8")
GROUPS = ("harness", "env", "fidelity", "training")
# Records whose comparison is still running (`nox -s bench -- NAME` resumes it).
IN_PROGRESS: set[str] = set()


def scripts() -> list[Path]:
    """Every module of the four groups (agents are listed as one folder)."""
    found = [p for group in GROUPS for p in sorted((BENCHMARKS / group).glob("*.py"))]
    return [p for p in found if p.name != "__init__.py"]


@pytest.mark.parametrize("path", scripts(), ids=lambda p: f"{p.parent.name}/{p.name}")
def test_every_script_is_named_in_the_readme(path):
    assert f"`{path.parent.name}/{path.name}`" in README or f"`{path.parent.name}/{path.name}`," in README


def test_every_record_is_listed_and_reproducible_by_name():
    for name in RECORDS:
        assert f"| `{name}` |" in README, name
    for name, record in RECORDS.items():
        if name not in IN_PROGRESS:
            assert (ROOT / record.result).exists(), (name, record.result)


def test_record_commands_run_modules_that_exist():
    noxfile = (ROOT / "noxfile.py").read_text(encoding="utf-8")
    for name, record in RECORDS.items():
        for command in record.commands:
            if command[:2] == ("python", "-m"):
                assert importlib.util.find_spec(command[2]) is not None, (name, command)
            else:
                assert command[0] == "bash" and (ROOT / command[1]).is_file(), (name, command)
        assert record.needs in {
            *("benchmarks", "webshop-gym", "web", "lucene", "openenv", "spacy", "original", "vllm", "gpu"),
        }, name
        assert record.needs == "gpu" or f'"{record.needs}"' in noxfile, name  # install_for knows it


def test_every_runnable_script_is_reachable_from_a_record_or_the_readme():
    commands = " ".join(" ".join(c) for record in RECORDS.values() for c in record.commands)
    # and what the shell scripts of records run
    commands += " ".join(
        (ROOT / c[1]).read_text(encoding="utf-8")
        for r in RECORDS.values()
        for c in r.commands
        if c[0] == "bash"
    )
    for path in scripts():
        module = f"benchmarks.{path.parent.name}.{path.stem}"
        if "__main__" not in path.read_text(encoding="utf-8"):
            continue  # a library of the others
        assert module in commands or f"python -m {module}" in README, module


def test_no_script_edits_sys_path_to_find_benchmarks():
    for path in scripts():
        text = path.read_text(encoding="utf-8")
        assert "sys.path.insert(0, str(ROOT))" not in text and "parent.parent))" not in text, path


AGENT_EPISODES = sorted((BENCHMARKS / "results" / "agents").glob("*/episodes/*"))


def _catalogue(path: Path) -> str:
    from webshop_gym.trajectories import read_trajectories

    return str(read_trajectories(path).episodes[0].header["run"]["catalogue"])


def _replays(paths: list[Path], catalog: Path | None) -> None:
    from webshop_gym.trajectories import read_trajectories, replay

    for path in paths:
        assert path.name.endswith(".jsonl.xz"), path
        for episode in read_trajectories(path).episodes:
            result = replay(episode, catalog=catalog)
            assert result.matches, (path.name, episode.header["episode"], result.mismatches[:2])


def test_the_committed_agent_runs_on_the_mini_catalogue_are_trajectories_that_replay():
    mini = [p for p in AGENT_EPISODES if _catalogue(p) == "mini"]
    assert len(mini) >= 15  # the mini-test folders' runs
    _replays(mini, None)


def test_the_committed_agent_runs_on_webshop_1k_are_trajectories_that_replay(webshop_1k):
    # Their episode lines name the catalogue as the runner was given it (../shared/webshop-1k).
    large = [p for p in AGENT_EPISODES if _catalogue(p) == "webshop-1k"]
    assert len(large) >= 10  # 1k-test and smollm2-vllm-serve-1k-test
    _replays(large, webshop_1k)
