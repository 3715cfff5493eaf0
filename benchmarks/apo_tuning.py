"""Chooses A*PO's beta2 and GRPO's KL weight on the DEV split, never the test split.

    python -m benchmarks.apo_tuning --out benchmarks/results/apo-tuning.md \\
        --grid apo:beta2=0.001,0.01,0.03 --grid grpo:grpo_kl_coef=0.01,0.04

Each grid value is one run of the `cpu-demo` preset (seed 0 by default) through
`benchmarks.apo_compare.run_all`, in ``--work/<algorithm>-<field>-<value>``; pi_ref and Stage
1's returns are shared (``--shared``), so the grid costs one warm start and one Stage 1.
The preset evaluates the whole dev split greedily before the first step and after the last
(``eval_every = steps``); the value with the best dev success after training is chosen
(ties: the preset's own value, since a change must win on dev; then the smaller value). Finished runs with the
same settings are reused, so the command can be stopped and run again.
"""

from __future__ import annotations

import argparse
import shlex
import sys
from pathlib import Path
from typing import Any

from apo_agent.__main__ import parse_config_value
from apo_agent.config import ALGORITHMS, TrainConfig
from apo_agent.metrics import read_metrics
from benchmarks.apo_compare import LABELS, run_all, run_name
from benchmarks.machine import describe_machine


def parse_grid(text: str) -> tuple[str, str, list[Any]]:
    """``"apo:beta2=0.001,0.01"`` -> ("apo", "beta2", [0.001, 0.01])."""
    algorithm, _, setting = text.partition(":")
    field, _, values = setting.partition("=")
    if algorithm not in ALGORITHMS or not field or not values:
        raise ValueError(
            f"--grid {text!r}: write ALGORITHM:FIELD=V1,V2,... with ALGORITHM one of {ALGORITHMS}"
        )
    return algorithm, field, [parse_config_value(field, v) for v in values.split(",")]


def dev_success(run_dir: Path) -> tuple[float, float]:
    """Dev success % before the first step (pi_ref) and after the last, from metrics.csv."""
    evaluated = [r for r in read_metrics(run_dir / "metrics.csv") if r.get("eval/success") not in (None, "")]
    if len(evaluated) < 2:
        raise ValueError(
            f"{run_dir} has no dev evaluation before and after training; run the preset's eval_every"
        )
    return 100 * float(evaluated[0]["eval/success"]), 100 * float(evaluated[-1]["eval/success"])


def tune(
    algorithm: str, field: str, values: list[Any], seed: int, work: Path, shared: Path
) -> tuple[list[str], Any]:
    """Runs (or reuses) one run per value; returns the table rows and the chosen value."""
    preset_value = getattr(TrainConfig.from_preset("cpu-demo"), field)
    rows, results = [], []
    for value in values:
        folder = work / f"{algorithm}-{field}-{value}"
        overrides = {field: value, "torch_threads": 1, "progress": False}
        run_all(folder, folder, [seed], overrides, [algorithm], shared=shared)
        before, after = dev_success(folder / run_name(algorithm, seed))
        results.append((after, value == preset_value, -float(value), value))
        rows.append((value, before, after))
    chosen = max(results)[-1]
    table = [
        f"| {LABELS[algorithm]} {field} | dev success of pi_ref % | dev success after training % "
        "| gain | chosen |",
        "|---|---|---|---|---|",
    ]
    for value, before, after in rows:
        mark = "**yes**" if value == chosen else ""
        table.append(f"| {value} | {before:.1f} | {after:.1f} | {after - before:+.1f} | {mark} |")
    return table, chosen


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=Path("benchmarks/results/apo-tuning.md"))
    parser.add_argument("--work", type=Path, default=Path("runs/tune"))
    parser.add_argument(
        "--shared", type=Path, default=Path("runs/shared"), help="pi_ref and Stage 1 per seed"
    )
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--grid", action="append", required=True, metavar="ALGORITHM:FIELD=V1,V2,...")
    arguments = parser.parse_args(argv)
    try:
        grids = [parse_grid(g) for g in arguments.grid]
    except ValueError as error:
        parser.error(str(error))
    command = "python -m benchmarks.apo_tuning " + shlex.join(argv if argv is not None else sys.argv[1:])
    lines = [
        "# Tuning on the dev split (cpu-demo preset)",
        "",
        f"Command: `{command}`  ",
        f"Machine: {describe_machine()}  ",
        f"Seed {arguments.seed}; the 100 dev goals, greedy, before the first Stage 2 step and after "
        "the last. The test split is not read to choose.",
    ]
    for algorithm, field, values in grids:
        table, chosen = tune(algorithm, field, values, arguments.seed, arguments.work, arguments.shared)
        lines += ["", *table, "", f"Chosen: `{field}={chosen}`."]
    arguments.out.parent.mkdir(parents=True, exist_ok=True)
    arguments.out.write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
