"""Does what RL learnt carry over to new goals? Training goals against test goals.

    python -m benchmarks.training.apo_generalisation runs/apo-binary/apo-seed0 --stride 3 --out gap.md

For each finished training run (a folder with ``config.json`` and ``final-model/``, as
``python -m apo_agent`` and ``benchmarks.training.apo_compare`` write them), evaluates its pi_ref and
its trained policy with the run's own prompts and decoding (``eval_temperature``) on every
``stride``-th goal of the train split and on the test split, and prints a Markdown table. A
gain on the training goals that the test goals do not share is learnt per goal, not as a
skill.

Most goals name options (a size, a colour), and most failures are purchases without them,
so the table also says, over the goals that name options, how often the policy chose any
option and how often it bought every named one (matched as the reward matches them).
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import gymnasium as gym

from apo_agent.config import TrainConfig
from apo_agent.evaluation import evaluate
from apo_agent.rollout.envs import env_spec
from apo_agent.rollout.episodes import Episode
from apo_agent.warm_start.reference import reference_folder
from benchmarks.harness.agents.apo import run_folder
from benchmarks.markdown import table
from webshop_gym.reward import option_matches

SPLITS = ("train", "test")


def measure(run: Path, stride: int) -> dict[str, dict[str, Any]]:
    """{policy: {split: summary}} for pi_ref and the trained policy of one run."""
    try:
        model_dir, config_dir = run_folder(run)  # the apo benchmark agent's own run lookup
    except FileNotFoundError as error:
        raise SystemExit(f"{run} is not a finished training run: {error}") from error
    config = TrainConfig(**json.loads((config_dir / "config.json").read_text()))
    policies = {"pi_ref": str(reference_folder(config)), config.algorithm: str(model_dir)}
    goals = {split: _goals(config, split) for split in SPLITS}
    results: dict[str, dict[str, Any]] = {}
    for name, path in policies.items():
        results[name] = {}
        for split in SPLITS:
            # Every stride-th training goal; on test, the run's first test_goals.
            every = None if split == "test" else range(0, len(goals[split]), stride)
            evaluation = evaluate(path, config, split=split, goals=every, description=f"{name} on {split}")
            options = option_behaviour(evaluation.episodes, goals[split])
            results[name][split] = {**evaluation.summary(), **options}
    return results


def option_behaviour(episodes: Sequence[Episode], goals: Sequence[Any]) -> dict[str, Any]:
    """Over the episodes whose goal names options: how many there are, and the % that
    bought some option and that bought every named option. ``goals[i]`` is goal index i."""
    named = [(e, goals[e.goal_index].goal_options) for e in episodes if goals[e.goal_index].goal_options]
    bought = [(e.info.get("purchased_options") or {}, wanted) for e, wanted in named]
    chose = sum(bool(options) for options, _ in bought)
    right = sum(option_matches(wanted, options.values()) == len(wanted) for options, wanted in bought)
    total = len(named) or 1  # (no such goal: both shares are 0)
    return {
        "option_goals": len(named),
        "chose_options": 100.0 * chose / total,
        "all_options_right": 100.0 * right / total,
    }


def _goals(config: TrainConfig, split: str) -> list[Any]:
    world: Any = gym.make(env_spec(config), split=split).unwrapped
    return [world.goal_at(index) for index in range(len(world.goal_indices))]


def markdown(results: dict[str, dict[str, dict[str, Any]]], stride: int) -> str:
    """`measure`'s results of each run as the Markdown table."""

    def split_cells(s: dict[str, Any]) -> list[str]:
        return [
            str(s["goals"]),
            f"{s['success']:.1f} / {s['score']:.1f}",
            f"({s['option_goals']}) {s['chose_options']:.1f} / {s['all_options_right']:.1f}",
        ]

    header = ["run", "policy", "train goals", "train success / score", "train options"]
    header += ["test goals", "test success / score", "test options"]
    rows = [
        [run, name, *split_cells(splits["train"]), *split_cells(splits["test"])]
        for run, policies in results.items()
        for name, splits in policies.items()
    ]
    lines = [
        f"Success / score in %: train goals whose index is a multiple of {stride}, and the test split.",
        "",
        "Options: of the goals that name options (their number in brackets), % where the",
        "policy chose some option / bought every named option.",
        "",
        *table(header, rows),
    ]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> dict[str, dict[str, dict[str, Any]]]:
    """Measures each run, prints (and with ``--out`` writes) the table; returns the results."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("runs", type=Path, nargs="+", help="training run folders")
    parser.add_argument("--stride", type=int, default=3, help="evaluate every n-th train goal")
    parser.add_argument("--out", type=Path, help="also write the table here")
    arguments = parser.parse_args(argv)
    if arguments.stride < 1:
        parser.error("--stride must be at least 1")
    results = {str(run): measure(run, arguments.stride) for run in arguments.runs}
    text = markdown(results, arguments.stride)
    if arguments.out is not None:
        arguments.out.write_text(text)
    print(text)
    return results


if __name__ == "__main__":
    main()
