"""Chooses A*PO's beta2 and GRPO's KL weight on the DEV split, never the test split.

    python -m benchmarks.training.apo_tuning --out benchmarks/results/apo-tuning.md \\
        --grid apo:beta2=0.001,0.01,0.03 --grid grpo:grpo_kl_coef=0.01,0.04

Each grid value is one run of the `cpu-demo` preset with the ``--set`` overrides (seed 0 by
default) through `benchmarks.training.apo_compare.runs.run_all`, in ``--work/<algorithm>-<field>-<value>``;
pi_ref and Stage 1's returns are shared (``--shared``), so the grid costs one warm start and
one Stage 1. The preset evaluates the whole dev split greedily before the first step and
after the last (``eval_every = steps``); the value with the best dev success after training
is chosen (ties: the starting value, since a change must win on dev; then the smaller value).
Grids run in the order given, and each runs at the values the earlier grids of its algorithm
chose (coordinate-wise tuning). Finished runs with the same settings are reused, so the
command can be stopped and run again.
"""

from __future__ import annotations

import argparse
import dataclasses
import shlex
import shutil
import statistics
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from apo_agent.__main__ import parse_config_value
from apo_agent.config import ALGORITHMS, TrainConfig
from apo_agent.runtime.metrics import read_metrics
from benchmarks.machine import describe_machine
from benchmarks.markdown import table
from benchmarks.training.apo_compare.cli import parse_overrides
from benchmarks.training.apo_compare.report import LABELS
from benchmarks.training.apo_compare.runs import kept_run, needed_entries, run_all, run_config, run_name


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


LAST_STEPS = 10  # the policy's KL to pi_ref and entropy are read over the last steps


def late_means(metrics_csv: Path) -> tuple[float, float]:
    """Mean log pi / pi_ref per episode (``losses/kl``, NaN where the run has no reference
    term) and per-token entropy over the run's last ``LAST_STEPS`` steps."""
    rows = [r for r in read_metrics(metrics_csv) if r.get("losses/loss") not in (None, "")][-LAST_STEPS:]

    def mean(column: str) -> float:
        values = [float(r[column]) for r in rows if r.get(column) not in (None, "")]
        return statistics.fmean(values) if values else float("nan")

    return mean("losses/kl"), mean("charts/token_entropy")


def reuse_identical_run(record: Path, name: str, config: TrainConfig) -> None:
    """Copies into ``record/name`` a kept run of another grid made with the same settings
    (a later grid's starting value is an earlier grid's chosen one): it trains once."""
    run = run_name(config.algorithm, config.seed)
    target = record / name / "runs" / run
    if (target / "results.json").is_file():
        return
    for other in sorted(record.glob(f"*/runs/{run}/results.json")):
        if kept_run(other, config, needed_entries(config, config.algorithm)) is not None:
            print(f"== {name}: the same settings as {other.parent.parent.parent.name}, reused", flush=True)
            shutil.copytree(other.parent, target)
            return


@dataclass(frozen=True)
class GridRun:
    """One value of a grid: dev success before and after training, and what training did."""

    value: Any
    dev_before: float
    """Dev success % of pi_ref, before the first step."""
    dev_after: float
    """Dev success % after the last step."""
    log_ratio: float
    """Mean log pi / pi_ref per episode over the last `LAST_STEPS` steps (`late_means`)."""
    entropy: float
    """Mean per-token entropy (nats) over the same steps."""
    stage1_cpu_s: float
    training_cpu_s: float
    """Stage 1 and Stage 2 together."""

    @property
    def gain(self) -> float:
        return self.dev_after - self.dev_before


@dataclass(frozen=True)
class Grid:
    """One grid's runs and the value chosen on dev."""

    algorithm: str
    field: str
    runs: list[GridRun]
    chosen: Any
    at: dict[str, Any] = dataclasses.field(default_factory=dict)
    """The values earlier grids of the same algorithm chose, which this grid ran at."""


def tune(
    algorithm: str,
    field: str,
    values: list[Any],
    seed: int,
    work: Path,
    shared: Path,
    settings: dict[str, Any] | None = None,
    record: Path | None = None,
) -> Grid:
    """Runs (or reuses) one run per value on top of ``settings``; returns their figures and
    the chosen value. Each run's record (metrics, results, no weights) is kept under
    ``record`` (default ``work``), where a later tuning finds it without ``work``."""
    record = record or work
    settings = settings or {}
    preset_value = getattr(TrainConfig.from_preset("cpu-demo"), field)
    start_value = settings.get(f"{algorithm}:{field}", settings.get(field, preset_value))
    # The grid's value wins over a --set of the same field (with or without the method's prefix).
    settings = {k: v for k, v in settings.items() if k.rpartition(":")[2] != field}
    runs, results = [], []
    for value in values:
        name = f"{algorithm}-{field}-{value}"
        overrides = {"torch_threads": 1, "progress": False, **settings, field: value}
        reuse_identical_run(
            record, name, run_config("cpu-demo", overrides, seed, algorithm, work / name, shared)
        )
        run = run_all(record / name, work / name, [seed], overrides, [algorithm], shared=shared)[
            run_name(algorithm, seed)
        ]
        kept = record / name / "runs" / run_name(algorithm, seed)
        before, after = dev_success(kept)
        log_ratio, entropy = late_means(kept / "metrics.csv")
        cpu = run["cpu_time_s"]
        results.append((after, value == start_value, -float(value), value))
        runs.append(
            GridRun(value, before, after, log_ratio, entropy, cpu["stage1"], cpu["stage1"] + cpu["stage2"])
        )
    return Grid(algorithm, field, runs, chosen=max(results)[-1])


def tune_all(
    grids: list[tuple[str, str, list[Any]]],
    seed: int,
    work: Path,
    shared: Path,
    common: dict[str, Any],
    record: Path,
) -> list[Grid]:
    """The grids in order, each at the values the earlier grids of its algorithm chose."""
    chosen_by_algorithm: dict[str, dict[str, Any]] = {a: {} for a in ALGORITHMS}
    tuned = []
    for algorithm, field, values in grids:
        earlier = chosen_by_algorithm[algorithm]
        grid = tune(algorithm, field, values, seed, work, shared, {**common, **earlier}, record)
        tuned.append(dataclasses.replace(grid, at=dict(earlier)))
        earlier[field] = grid.chosen
    return tuned


# Rendering: the grids as the tuning's Markdown page.


def grid_lines(grid: Grid) -> list[str]:
    """A grid's table and the value it chose."""
    header = [
        f"{LABELS[grid.algorithm]} {grid.field}",
        "dev success of pi_ref %",
        "dev success after training %",
        "gain",
        f"log pi/pi_ref per episode (last {LAST_STEPS} steps)",
        "entropy per token (nats)",
        "Stage 1 CPU s",
        "training CPU s",
        "chosen",
    ]
    rows = [
        [
            run.value,
            f"{run.dev_before:.1f}",
            f"{run.dev_after:.1f}",
            f"{run.gain:+.1f}",
            f"{run.log_ratio:.2f}",
            f"{run.entropy:.3f}",
            f"{run.stage1_cpu_s:.0f}",
            f"{run.training_cpu_s:.0f}",
            "**yes**" if run.value == grid.chosen else "",
        ]
        for run in grid.runs
    ]
    at = ", ".join(f"{k}={v}" for k, v in grid.at.items())
    return [
        *table(header, rows),
        "",
        f"Chosen: `{grid.field}={grid.chosen}`" + (f" (at {at})." if at else "."),
    ]


def markdown(grids: list[Grid], command: str, machine: str, seed: int) -> str:
    """The page ``--out`` records: the setting, then each grid's table and choice."""
    lines = [
        "# Tuning on the dev split (cpu-demo preset)",
        "",
        f"Command: `{command}`  ",
        f"Machine: {machine}  ",
        f"Seed {seed}; the 100 dev goals, greedy, before the first Stage 2 step and after "
        "the last. The test split is not read to choose.",
    ]
    for grid in grids:
        lines += ["", *grid_lines(grid)]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> list[Grid]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=Path("benchmarks/results/apo-tuning.md"))
    parser.add_argument("--work", type=Path, default=Path("runs/tune"))
    parser.add_argument(
        "--shared", type=Path, default=Path("runs/shared"), help="pi_ref and Stage 1 per seed"
    )
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--grid", action="append", required=True, metavar="ALGORITHM:FIELD=V1,V2,...")
    parser.add_argument("--set", action="append", default=[], metavar="FIELD=VALUE", help="config override")
    arguments = parser.parse_args(argv)
    try:
        grids = [parse_grid(g) for g in arguments.grid]
    except ValueError as error:
        parser.error(str(error))
    try:
        common = parse_overrides(arguments.set)
    except ValueError as error:
        parser.error(str(error))
    record = arguments.out.with_suffix("")  # the runs' records beside the table: tuning.md, tuning/
    command = "python -m benchmarks.training.apo_tuning " + shlex.join(
        argv if argv is not None else sys.argv[1:]
    )
    tuned = tune_all(grids, arguments.seed, arguments.work, arguments.shared, common, record)
    text = markdown(tuned, command, describe_machine(), arguments.seed)
    arguments.out.parent.mkdir(parents=True, exist_ok=True)
    arguments.out.write_text(text)
    print(text, end="")
    return tuned


if __name__ == "__main__":
    main()
