"""The runner: every light agent plays episodes through vector envs; the CLI writes the report."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from benchmarks.harness.agents import AGENTS, make_factory
from benchmarks.harness.report import read_episode_file
from benchmarks.harness.run import env_spec, main, run_agent, spec_label
from webshop_gym.data.catalog import load_catalog
from webshop_gym.data.splits import MINI_MANIFESTS, load_manifests, split_manifest

MINI = env_spec("WebShop-Mini-Text-v0", "test")
# The shipped manifest of the mini catalogue's human goals: what every mini run must name.
MINI_HUMAN = load_manifests(MINI_MANIFESTS)[0]


@pytest.mark.parametrize("name", ["random", "rule", "heuristic"])
def test_agent_plays_two_episodes_through_the_runner(name):
    records = run_agent(name, make_factory(name), MINI, episodes=2, n_envs=2, progress=False)
    assert [r["episode"] for r in records] == [0, 1]
    assert [r["goal_index"] for r in records] == [0, 1]
    for record in records:
        assert (record["catalogue"], record["goal_source"], record["split"]) == ("mini", "human", "test")
        assert record["split_manifest"] == MINI_HUMAN.sha256
        steps = record["trajectory"][1:]
        assert record["steps"] == len(steps) >= 1
        assert steps[-1]["page"] == "done" or record["steps"] == 15
        assert record["purchased"] == (record["reward_breakdown"] is not None)
        assert 0.0 <= record["score"] <= 1.0
        if name != "random":  # rule and heuristic only ever choose listed actions
            assert record["invalid_actions"] == 0
        json.dumps(record)  # plain data


def test_results_do_not_depend_on_the_number_of_envs():
    """Episode i plays goal i with seed i whichever slot runs it, so the vector width changes nothing."""
    one = run_agent("random", make_factory("random"), MINI, episodes=5, n_envs=1, progress=False)
    three = run_agent("random", make_factory("random"), MINI, episodes=5, n_envs=3, progress=False)
    strip = [{k: v for k, v in r.items() if k != "seconds"} for r in one]
    assert strip == [{k: v for k, v in r.items() if k != "seconds"} for r in three]


def test_heuristic_beats_rule_on_a_few_goals():
    rule = run_agent("rule", make_factory("rule"), MINI, episodes=10, progress=False)
    heuristic = run_agent("heuristic", make_factory("heuristic"), MINI, episodes=10, progress=False)
    assert sum(r["score"] for r in heuristic) > sum(r["score"] for r in rule)
    assert all(r["steps"] <= 15 for r in heuristic)


def test_real_1k_data_with_synthetic_goals(webshop_1k):
    spec = env_spec("WebShop-Text-v0", "test", {"catalog": str(webshop_1k), "goals": "synthetic"})
    records = run_agent("heuristic", make_factory("heuristic"), spec, episodes=2, n_envs=2, progress=False)
    assert spec_label(spec) == "WebShop-Text-v0 (webshop-1k, synthetic goals)"
    assert all(r["purchased"] for r in records)
    manifest = split_manifest(load_catalog(webshop_1k), "synthetic")
    for record in records:
        assert (record["catalogue"], record["goal_source"], record["split"]) == (
            "webshop-1k",
            "synthetic",
            "test",
        )
        assert record["split_manifest"] == manifest.sha256 != MINI_HUMAN.sha256


def test_unknown_agents_and_options_get_clear_errors():
    with pytest.raises(ValueError, match="choose from"):
        make_factory("nope")
    with pytest.raises(ValueError, match="has no option 'depth'"):
        make_factory("heuristic", {"depth": "3"})
    with pytest.raises(ValueError, match="expected a number"):
        make_factory("heuristic", {"max_visits": "many"})
    assert set(AGENTS) >= {"random", "rule", "heuristic", "llm", "sb3"}


def test_cli_writes_episodes_table_plots_and_failures(tmp_path):
    out = tmp_path / "results"
    main(["--agents", "rule", "random", "--episodes", "3", "--out", str(out), "--no-progress",
          "--label", "random=random (seeded)"])  # fmt: skip
    runs = json.loads((out / "runs.json").read_text())
    assert runs[0]["command"].startswith("python -m benchmarks.harness.run --agents rule random")
    assert "cores" in runs[0]["machine"]
    for run in runs[0]["runs"]:  # every result names the goals it played
        assert {k: run[k] for k in ("catalogue", "goal_source", "split", "split_manifest")} == {
            "catalogue": "mini",
            "goal_source": "human",
            "split": "test",
            "split_manifest": MINI_HUMAN.sha256,
        }
    table = (out / "results.md").read_text()
    named = f"WebShop-Mini-Text-v0 | mini | human | test | {MINI_HUMAN.sha256[:12]}"
    assert f"| rule | {named} | 3 |" in table
    assert f"| random (seeded) | {named} | 3 |" in table
    summary = json.loads((out / "summary.json").read_text())
    assert [row["split_manifest"] for row in summary] == [MINI_HUMAN.sha256] * 2
    assert (out / "plots" / "scores.png").stat().st_size > 1000
    assert (out / "plots" / "categories.png").stat().st_size > 1000
    failures = (out / "failures.md").read_text()
    assert "## rule on WebShop-Mini-Text-v0, test split" in failures
    episode_file = out / runs[0]["runs"][0]["file"]
    assert episode_file.name.endswith(".jsonl.xz") and episode_file.read_bytes()[:6] == b"\xfd7zXZ\x00"  # xz
    assert [r["episode"] for r in read_episode_file(episode_file)] == [0, 1, 2]

    # The episode files are trajectories: `webshop-gym replay` plays them back step by step.
    replayed = subprocess.run(
        [sys.executable, "-m", "webshop_gym.cli", "replay", str(out / "episodes")],
        capture_output=True,
        text=True,
        check=False,
    )
    assert replayed.returncode == 0, replayed.stdout + replayed.stderr
    assert replayed.stdout.count(": reproduced") == 6
    assert "6 episodes replayed, 0 failed" in replayed.stdout

    # A second command that redoes one agent replaces its runs and keeps the others.
    main(["--agents", "rule", "--episodes", "2", "--out", str(out), "--no-progress"])
    runs = json.loads((out / "runs.json").read_text())
    assert [[r["agent"] for r in c["runs"]] for c in runs] == [["random (seeded)"], ["rule"]]
    assert f"| rule | {named} | 2 |" in (out / "results.md").read_text()


# Mean scores x 1000 on the whole mini test and dev splits (100 goals each; seeds 5, 6, ...; 3
# envs), as the runner gave them before it played through `webshop_gym.agents.episodes` and
# recorded trajectories: the same episodes must come out.
SCORES = {
    ("random", "test"): 155.75,
    ("random", "dev"): 125.75,
    ("rule", "test"): 718.0,
    ("rule", "dev"): 728.8333333333333,
    ("heuristic", "test"): 933.1666666666666,
    ("heuristic", "dev"): 961.9999999999999,
}


@pytest.mark.parametrize(("name", "split"), list(SCORES))
def test_whole_mini_splits_score_as_before(name, split):
    records = run_agent(
        name, make_factory(name), env_spec("WebShop-Mini-Text-v0", split), n_envs=3, seed=5, progress=False
    )
    assert len(records) == 100
    assert 1000 * sum(r["score"] for r in records) / len(records) == pytest.approx(
        SCORES[(name, split)], abs=1e-9
    )
