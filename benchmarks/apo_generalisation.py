"""Does what RL learnt carry over to new goals? Training goals against test goals.

    python -m benchmarks.apo_generalisation runs/apo-binary/apo-seed0 --stride 3 --out gap.md

For each finished training run (a folder with ``config.json`` and ``final-model/``, as
``python -m apo_agent`` and ``benchmarks.apo_compare`` write them), evaluates its pi_ref and
its trained policy with the run's own prompts and decoding (``eval_temperature``) on every
``stride``-th goal of the train split and on the test split, and prints a Markdown table. A
gain on the training goals that the test goals do not share is learnt per goal, not as a
skill.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from apo_agent.config import TrainConfig
from apo_agent.pipeline import evaluate_saved, reference_folder
from benchmarks.agents.apo import run_folder

SPLITS = ("train", "test")


def measure(run: Path, stride: int) -> dict[str, dict[str, Any]]:
    """{policy: {split: summary}} for pi_ref and the trained policy of one run."""
    try:
        model_dir, config_dir = run_folder(run)  # the apo benchmark agent's own run lookup
    except FileNotFoundError as error:
        raise SystemExit(f"{run} is not a finished training run: {error}") from error
    config = TrainConfig(**json.loads((config_dir / "config.json").read_text()))
    policies = {"pi_ref": str(reference_folder(config)), config.algorithm: str(model_dir)}
    return {
        name: {split: evaluate_saved(config, path, f"{name} on {split}", split, stride) for split in SPLITS}
        for name, path in policies.items()
    }


def markdown(results: dict[str, dict[str, dict[str, Any]]], stride: int) -> str:
    lines = [
        f"Success / score in %: train goals whose index is a multiple of {stride}, and the test split.",
        "",
        "| run | policy | train goals | train success / score | test goals | test success / score |",
        "|---|---|---|---|---|---|",
    ]
    for run, policies in results.items():
        for name, splits in policies.items():
            train, test = splits["train"], splits["test"]
            lines.append(
                f"| {run} | {name} | {train['goals']} | {train['success']:.1f} / {train['score']:.1f} | "
                f"{test['goals']} | {test['success']:.1f} / {test['score']:.1f} |"
            )
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("runs", type=Path, nargs="+", help="training run folders")
    parser.add_argument("--stride", type=int, default=3, help="evaluate every n-th train goal")
    parser.add_argument("--out", type=Path, help="also write the table here")
    arguments = parser.parse_args(argv)
    if arguments.stride < 1:
        parser.error("--stride must be at least 1")
    results = {str(run): measure(run, arguments.stride) for run in arguments.runs}
    table = markdown(results, arguments.stride)
    if arguments.out is not None:
        arguments.out.write_text(table)
    print(table)


if __name__ == "__main__":
    main()
