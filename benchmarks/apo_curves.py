"""Test success along training, against wall-clock and against every episode sampled.

The comparison the A*PO paper makes (Brantley et al. 2025, Fig. 1): how fast each method
reaches a level of test success, counting everything it spent, so A*PO's Stage 1 (its
reference episodes, offline but not free) is on its clock and in its episode count. For each
run of `benchmarks.apo_compare` the points are pi_ref (at zero), pi_ref again once Stage 1
is done (A*PO only), then every Stage 2 checkpoint, each evaluated greedily on the test
split. Intervals over seeds are 95% bootstraps of the mean (`benchmarks.intervals`).

Example:
    >>> points = [CurvePoint(0, 0, 20.0), CurvePoint(100, 64, 30.0), CurvePoint(200, 128, 40.0)]
    >>> time_to_reach(points, 35.0)  # half-way between the 2nd and 3rd checkpoints
    150.0
    >>> time_to_reach(points, 41.0) is None
    True
"""

from __future__ import annotations

import dataclasses
import itertools
import json
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from apo_agent.checkpoint import checkpoint_dir
from apo_agent.config import TrainConfig
from apo_agent.metrics import read_metrics
from benchmarks.intervals import mean_interval

COLOURS = {"apo": "tab:blue", "grpo": "tab:orange"}


@dataclass(frozen=True)
class CurvePoint:
    """One policy along a run: what it cost to reach it, and its test success."""

    seconds: float
    """Training wall-clock so far: Stage 1's sampling (A*PO) plus Stage 2 up to this policy."""
    episodes: int
    """Episodes sampled so far, Stage 1's included."""
    success: float
    """Test success % (greedy)."""
    cpu_seconds: float = 0.0
    """The CPU time of the same training (all the process's threads): the clock to compare
    when other work shared the machine."""


def success_curve(config: TrainConfig, run: Mapping[str, Any]) -> list[CurvePoint]:
    """pi_ref, (after Stage 1,) then every checkpoint of a finished run, on the test split.

    Evaluations are kept in ``<output_dir>/test-curve.json`` and reused while the run and the
    evaluation settings stay the same; the last checkpoint is the final model, whose test
    result the pipeline already has."""
    from apo_agent.pipeline import evaluate_checkpoint

    output_dir = Path(config.output_dir)
    cache_path = output_dir / "test-curve.json"
    key = {"final_model_success": run["test"]["trained"]["success"], "test_goals": config.test_goals}
    cached = json.loads(cache_path.read_text()) if cache_path.is_file() else {}
    successes: dict[str, float] = cached.get("successes", {}) if cached.get("key") == key else {}
    stage1_s = float(run["wall_time_s"].get("stage1", 0.0))
    stage1_cpu_s = float(run.get("cpu_time_s", {}).get("stage1", 0.0))
    stage1_episodes = int(run["stage1_episodes"])
    reference = float(run["test"]["reference"]["success"])
    points = [CurvePoint(0.0, 0, reference)]
    if stage1_episodes:
        points.append(CurvePoint(stage1_s, stage1_episodes, reference, stage1_cpu_s))
    for row in read_metrics(output_dir / "metrics.csv"):
        step = int(row["step"])
        if not step or not (step % config.checkpoint_every == 0 or step == config.steps):
            continue
        if step == config.steps:
            success = float(run["test"]["trained"]["success"])
        elif str(step) in successes:
            success = successes[str(step)]
        else:
            result = evaluate_checkpoint(
                config,
                run["reference_model"],
                checkpoint_dir(output_dir, step),
                f"test evaluation: {config.algorithm} step {step}",
            )
            success = successes[str(step)] = float(result["success"])
            cache_path.write_text(json.dumps({"key": key, "successes": successes}, indent=1))
        points.append(
            CurvePoint(
                stage1_s + float(row["wall_time_s"]),
                stage1_episodes + int(row["episodes"]),
                success,
                stage1_cpu_s + float(row.get("cpu_time_s", 0.0)),
            )
        )
    return points


def time_to_reach(points: Sequence[CurvePoint], target: float, axis: str = "seconds") -> float | None:
    """The cost (``"seconds"``, ``"cpu_seconds"`` or ``"episodes"``) at which the curve first
    reaches ``target`` success, interpolated between the evaluations around it; None if never."""
    for before, after in itertools.pairwise(points):
        if after.success >= target:
            x0, x1 = getattr(before, axis), getattr(after, axis)
            if before.success >= target:
                return float(x0)
            return float(x0 + (target - before.success) / (after.success - before.success) * (x1 - x0))
    return None


AXES = {"seconds": "wall-clock s", "cpu_seconds": "CPU s", "episodes": "episodes"}


def time_to_target_rows(
    curves: Mapping[str, Mapping[int, Sequence[CurvePoint]]], labels: Mapping[str, str]
) -> list[str]:
    """Markdown rows: for each method's final test success (mean over seeds) as the target,
    the wall-clock, CPU time and episodes every method needed to reach it."""
    finals = {p: statistics.fmean(c[-1].success for c in seeds.values()) for p, seeds in curves.items()}
    lines = [
        "| target: final success of | target % | method | reached in seeds | "
        + " | ".join(AXES.values())
        + " |",
        "|---|---|---|---|" + "---|" * len(AXES),
    ]
    for target_policy, target in finals.items():
        for policy, seeds in curves.items():
            costs = {axis: [time_to_reach(c, target, axis) for c in seeds.values()] for axis in AXES}
            reached = {axis: [x for x in values if x is not None] for axis, values in costs.items()}
            cells = [mean_interval(reached[axis], 0) if reached[axis] else "never" for axis in AXES]
            lines.append(
                f"| {labels[target_policy]} | {target:.1f} | {labels[policy]} | "
                f"{len(reached['seconds'])} of {len(seeds)} | " + " | ".join(cells) + " |"
            )
    return lines


def plot_curves(
    curves: Mapping[str, Mapping[int, Sequence[CurvePoint]]], labels: Mapping[str, str], path: Path
) -> Path:
    """Test success against wall-clock, CPU time and episodes sampled (one panel each): one
    faint line per seed, and the mean over seeds of each evaluation point."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, axes = plt.subplots(1, 3, figsize=(14, 3.8), sharey=True)
    names = ("training wall-clock (s)", "training CPU time (s)", "episodes sampled")
    for axis, field, name in zip(axes, AXES, names, strict=True):
        for policy, seeds in curves.items():
            colour = COLOURS[policy.partition("-")[0]]
            for points in seeds.values():
                axis.plot(
                    [getattr(p, field) for p in points], [p.success for p in points], color=colour, alpha=0.2
                )
            length = min(len(points) for points in seeds.values())
            mean_x = [statistics.fmean(getattr(c[i], field) for c in seeds.values()) for i in range(length)]
            mean_y = [statistics.fmean(c[i].success for c in seeds.values()) for i in range(length)]
            axis.plot(mean_x, mean_y, color=colour, marker="o", markersize=3, label=labels[policy])
        axis.set_xlabel(name + ", Stage 1 included")
        axis.grid(alpha=0.3)
    axes[0].set_ylabel("test success % (greedy)")
    axes[0].legend()
    figure.suptitle(
        f"Test success along training: mean over {len(next(iter(curves.values())))} seeds", fontsize=10
    )
    figure.tight_layout()
    figure.savefig(path, dpi=110)
    plt.close(figure)
    return path


def curves_json(curves: Mapping[str, Mapping[int, Sequence[CurvePoint]]]) -> dict[str, Any]:
    return {
        p: {str(s): [dataclasses.asdict(x) for x in c] for s, c in seeds.items()}
        for p, seeds in curves.items()
    }
