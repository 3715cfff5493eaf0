"""Test success along training, against CPU time and against every episode sampled.

The comparison the A*PO paper makes (Brantley et al. 2025, Fig. 1): how fast each method
reaches a level of test success, counting everything it spent, so A*PO's Stage 1 (its
reference episodes, offline but not free) is on its clock and in its episode count. For each
run of `benchmarks.training.apo_compare` the points are pi_ref (at zero), pi_ref again once Stage 1
is done (A*PO only), then every Stage 2 checkpoint, each evaluated greedily on the test
split. Times are compared at levels every run reaches (`every_run_targets`), so each mean
is over all seeds; intervals come from `benchmarks.intervals`.

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

from apo_agent.config import TrainConfig
from apo_agent.runtime.checkpoints import checkpoint_dir
from apo_agent.runtime.metrics import read_metrics
from benchmarks.intervals import BCA_MIN_SEEDS, METHODS, interval, interval_cell, ratio_interval
from benchmarks.markdown import table

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


Curves = Mapping[str, Mapping[int, Sequence[CurvePoint]]]
"""Per policy, per seed, a run's test-success curve."""
Stage1 = Mapping[str, Mapping[int, float]]
"""Per policy, per seed, the CPU seconds of the run's Stage 1 (0 for GRPO)."""


def success_curve(config: TrainConfig, run: Mapping[str, Any]) -> list[CurvePoint]:
    """pi_ref, (after Stage 1,) then every checkpoint of a finished run, on the test split.

    Evaluations are kept in ``<output_dir>/test-curve.json`` and reused while the run and the
    evaluation settings stay the same; the last checkpoint is the final model, whose test
    result the pipeline already has."""
    from apo_agent.evaluation import evaluate

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
    rows = [row for row in read_metrics(output_dir / "metrics.csv") if int(row["step"])]
    # The final model is the last step run: config.steps, or fewer where a CPU budget ran out.
    final_step = int(rows[-1]["step"]) if rows else config.steps
    for row in rows:
        step = int(row["step"])
        if not (step % config.checkpoint_every == 0 or step == final_step):
            continue
        if step == final_step:
            success = float(run["test"]["trained"]["success"])
        elif str(step) in successes:
            success = successes[str(step)]
        else:
            result = evaluate(
                run["reference_model"],
                config,
                checkpoint=checkpoint_dir(output_dir, step),
                description=f"test evaluation: {config.algorithm} step {step}",
            )
            success = successes[str(step)] = result.success
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


# The costs a target is reached at: A*PO's Stage 1 (its reference episodes) counts on both
# "Stage 1 included" clocks; "Stage 2 only" is the same clock less the run's Stage 1.
AXES = {
    "cpu_seconds": "CPU s, Stage 1 included",
    "stage2_cpu_seconds": "CPU s, Stage 2 only",
    "episodes": "episodes, Stage 1 included",
}


def costs_to_reach(points: Sequence[CurvePoint], target: float, stage1_cpu: float) -> dict[str, float] | None:
    """The `AXES` costs at which a curve first reaches ``target``; None if it never does."""
    cpu = time_to_reach(points, target, "cpu_seconds")
    if cpu is None:
        return None
    episodes = time_to_reach(points, target, "episodes")
    # Cost is linear in between evaluations, and Stage 2 starts after Stage 1's last point.
    return {"cpu_seconds": cpu, "stage2_cpu_seconds": max(0.0, cpu - stage1_cpu), "episodes": episodes}


@dataclass(frozen=True)
class Target:
    """A level of test success that every run reaches, and how it was chosen."""

    success: float
    chosen_as: str


def every_run_targets(curves: Curves) -> list[Target]:
    """The largest test success every run of every method reaches on its curve, and the
    level halfway to it from the best pi_ref of any seed (so no seed starts at or above it and
    every cost to it is counted): levels at which times compare over all seeds, not a subset."""
    runs = [points for seeds in curves.values() for points in seeds.values()]
    top = min(max(p.success for p in points) for points in runs)
    best_reference = max(points[0].success for points in runs)
    targets = []
    if top > best_reference:
        targets.append(
            Target(
                (best_reference + top) / 2, f"halfway from the best pi_ref ({best_reference:.1f}) to the top"
            )
        )
    return [*targets, Target(top, "top: the largest success every run reaches")]


def target_costs(curves: Curves, target: float, stage1_cpu: Stage1) -> dict[str, dict[str, list[float]]]:
    """Per method, each `AXES` cost per seed (in the curves' seed order) to reach ``target``,
    which every run must reach (see `every_run_targets`)."""
    costs: dict[str, dict[str, list[float]]] = {}
    for policy, seeds in curves.items():
        for seed, points in seeds.items():
            reached = costs_to_reach(points, target, stage1_cpu[policy][seed])
            if reached is None:
                raise ValueError(f"{policy} seed {seed} never reaches {target}; choose every run's targets")
            for axis, value in reached.items():
                costs.setdefault(policy, {}).setdefault(axis, []).append(value)
    return costs


def cost_ratios(numerator: Sequence[float], denominator: Sequence[float]) -> list[float | None]:
    """Per seed, one method's cost over the other's; None where either is zero (the seed's
    pi_ref, which both start from, is already at the target), so the ratio says nothing."""
    return [a / b if a > 0 and b > 0 else None for a, b in zip(numerator, denominator, strict=True)]


def usable(method: str, count: int) -> str:
    """``method``, or the t interval where BCa has too few values (a subset of the seeds)."""
    return "t" if method == "bca" and count < BCA_MIN_SEEDS else method


@dataclass(frozen=True)
class Estimate:
    """A mean over seeds and its 95% interval: the figures behind a "mean [low, high]" cell.

    Example:
        >>> Estimate.of([1.0, 2.0, 3.0], "t").mean
        2.0
        >>> estimate_cell(Estimate.of([1.0, 2.0, 3.0], "t"))
        '2.0 [-0.5, 4.5]'
    """

    values: tuple[float, ...]
    """The per-seed values, in seed order."""
    mean: float
    """Their mean (the geometric mean for `Estimate.of_ratios`)."""
    low: float
    """The interval's bounds (`benchmarks.intervals.interval`); nan where BCa's jackknife degenerates."""
    high: float
    method: str
    """The interval's method, a key of `benchmarks.intervals.METHODS`."""

    @classmethod
    def of(cls, values: Sequence[float], method: str = "t") -> Estimate:
        low, high = interval(values, method)
        return cls(tuple(values), statistics.fmean(values), low, high, method)

    @classmethod
    def of_ratios(cls, ratios: Sequence[float], method: str = "t") -> Estimate:
        """Positive ratios: their geometric mean and the interval of the mean log, exponentiated."""
        mean, low, high = ratio_interval(ratios, method)
        return cls(tuple(ratios), mean, low, high, method)


def cost_estimates(
    costs: Mapping[str, Mapping[str, Sequence[float]]], method: str
) -> dict[str, dict[str, Estimate]]:
    """Per method, per `AXES` cost, its mean over seeds and interval."""
    return {policy: {axis: Estimate.of(costs[policy][axis], method) for axis in AXES} for policy in costs}


def ratio_estimate(ratios: Sequence[float | None], method: str) -> Estimate | None:
    """The geometric mean [interval] of the defined ratios (t where BCa has too few); None if none is."""
    defined = [r for r in ratios if r is not None]
    return Estimate.of_ratios(defined, usable(method, len(defined))) if defined else None


def reaching_final(curves: Curves, of: str = "grpo", by: str = "apo") -> list[dict[str, Any]]:
    """Per seed, the CPU time (Stage 1 included) ``by`` needs to reach the final test success
    of ``of``'s run of the same seed, and ``of``'s own time to first reach it; the time is None
    where ``by`` never reaches it, the ratio None where either is missing or ``of`` needs none."""
    rows = []
    for seed, points in curves[of].items():
        final = points[-1].success
        own = time_to_reach(points, final, "cpu_seconds")
        other = time_to_reach(curves[by][seed], final, "cpu_seconds")
        ratio = other / own if other and own else None  # (0: pi_ref is already there)
        rows.append({"seed": seed, "target": final, of: own, by: other, "ratio": ratio})
    return rows


@dataclass(frozen=True)
class TargetCosts:
    """What each method spent to reach one of `every_run_targets`, and its cost over GRPO's."""

    target: Target
    costs: dict[str, dict[str, list[float]]]
    """Per method, per `AXES` cost, one value per seed (`target_costs`)."""
    estimates: dict[str, dict[str, Estimate]]
    """The same costs' mean over seeds and interval."""
    ratios: dict[str, list[float | None]] | None
    """Per method other than GRPO, per seed, its CPU time (Stage 1 included) over GRPO's
    (`cost_ratios`); None where the curves hold no GRPO and another method."""
    ratio_estimates: dict[str, Estimate | None] | None
    """The ratios' geometric mean [interval] over the seeds that have one (`ratio_estimate`)."""


@dataclass(frozen=True)
class TimeToTargets:
    """The costs to every run's targets, and each seed's time to GRPO's final test success."""

    seeds: int
    method: str
    """The intervals' method over seeds (a key of `benchmarks.intervals.METHODS`)."""
    targets: list[TargetCosts]
    reaching_grpo_final: list[dict[str, Any]] | None
    """`reaching_final` of GRPO by A*PO; None without both."""
    reaching_estimate: Estimate | None
    """The geometric mean [interval] of A*PO / GRPO over the seeds with a ratio; None if none has."""

    def record(self) -> dict[str, Any]:
        """Every figure, as results.json keeps it."""
        targets = []
        for entry in self.targets:
            target = {**dataclasses.asdict(entry.target), "costs": entry.costs}
            if entry.ratios is not None:
                target["ratios"] = entry.ratios
            targets.append(target)
        return {"targets": targets, "reaching_grpo_final": self.reaching_grpo_final}


def time_to_targets(curves: Curves, stage1_cpu: Stage1, method: str = "t") -> TimeToTargets:
    """The costs to each of `every_run_targets` per method, mean [interval] over seeds, and per
    target the per-seed ratio of each method's CPU time (Stage 1 included) to GRPO's; then the
    time to reach GRPO's final success (`reaching_final`)."""
    compared = "grpo" in curves and len(curves) >= 2
    targets = []
    for target in every_run_targets(curves):
        costs = target_costs(curves, target.success, stage1_cpu)
        ratios = (
            {
                policy: cost_ratios(costs[policy]["cpu_seconds"], costs["grpo"]["cpu_seconds"])
                for policy in curves
                if policy != "grpo"
            }
            if compared
            else None
        )
        targets.append(
            TargetCosts(
                target,
                costs,
                cost_estimates(costs, method),
                ratios,
                None if ratios is None else {p: ratio_estimate(r, method) for p, r in ratios.items()},
            )
        )
    rows = reaching_final(curves) if compared and "apo" in curves else None
    estimate = None if rows is None else ratio_estimate([r["ratio"] for r in rows], method)
    return TimeToTargets(len(next(iter(curves.values()))), method, targets, rows, estimate)


# Rendering: the data above as the Markdown of a results page.


def estimate_cell(estimate: Estimate, digits: int = 1) -> str:
    """``"42.0 [40.0, 44.0]"`` (`benchmarks.intervals.interval_cell`): just the value for one seed."""
    return interval_cell(estimate.mean, estimate.low, estimate.high, len(estimate.values), digits)


def ratio_cell(estimate: Estimate) -> str:
    """``"2.10 [1.80, 2.45]"``: geometric mean and interval (just the value for one ratio)."""
    if len(estimate.values) == 1:
        return f"{estimate.mean:.2f}"
    return f"{estimate.mean:.2f} [{estimate.low:.2f}, {estimate.high:.2f}]"


def time_to_targets_lines(result: TimeToTargets, labels: Mapping[str, str]) -> list[str]:
    """The Markdown of `time_to_targets`: the costs table, the ratios to GRPO's, then the time
    to reach GRPO's final success seed by seed."""
    lines = table(
        ["target success %", "chosen as", "method", *AXES.values()],
        [
            [f"{entry.target.success:.1f}", entry.target.chosen_as, labels[policy]]
            + [estimate_cell(by_axis[axis], 0) for axis in AXES]
            for entry in result.targets
            for policy, by_axis in entry.estimates.items()
        ],
    )
    if any(entry.ratios is None for entry in result.targets):
        return lines
    lines += [
        "",
        f"Per seed, each method's CPU time to the target (Stage 1 included) over GRPO's: geometric "
        f"mean over seeds [95% {METHODS[result.method]} of the mean log ratio, exponentiated].",
        "",
    ]
    rows = []
    for entry in result.targets:
        for policy, ratios in (entry.ratios or {}).items():
            estimate = (entry.ratio_estimates or {})[policy]
            summary = "undefined" if estimate is None else ratio_cell(estimate)
            defined = 0 if estimate is None else len(estimate.values)
            if defined < len(ratios):
                summary += f" (over {defined} of {len(ratios)} seeds: pi_ref is already there in the rest)"
            per_seed = ", ".join("-" if r is None else f"{r:.2f}" for r in ratios)
            rows.append([f"{entry.target.success:.1f}", f"{labels[policy]} / GRPO", summary, per_seed])
    lines += table(["target success %", "ratio", "geometric mean [95%]", "per seed"], rows)
    if result.reaching_grpo_final is None:
        return lines
    reaching = result.reaching_grpo_final
    lines += [
        "",
        "### Reaching GRPO's final test success, seed by seed",
        "",
        "Per seed, the target is that seed's GRPO final test success; GRPO's time is its CPU time "
        "to first reach it on its own test curve, A*PO's its CPU time to reach it, Stage 1 included.",
        "",
        *table(
            ["seed", "GRPO final success %", "GRPO CPU s", "A*PO CPU s", "A*PO / GRPO"],
            [
                [
                    row["seed"],
                    f"{row['target']:.1f}",
                    f"{row['grpo']:.0f}",
                    "never" if row["apo"] is None else f"{row['apo']:.0f}",
                    "-" if row["ratio"] is None else f"{row['ratio']:.2f}",
                ]
                for row in reaching
            ],
        ),
    ]
    reached = sum(row["apo"] is not None for row in reaching)
    estimate = result.reaching_estimate
    with_ratio = 0 if estimate is None else len(estimate.values)
    summary = f"A*PO reaches GRPO's final success in {reached} of {result.seeds} seeds"
    if reached - with_ratio:
        summary += f" ({reached - with_ratio} of them at pi_ref, which is already there: no ratio)"
    if estimate is not None:
        summary += (
            f". Geometric mean of A*PO / GRPO over the {with_ratio} seeds with a ratio: "
            f"{ratio_cell(estimate)}"
        )
        if with_ratio > 1:
            summary += f" (95% {METHODS[estimate.method]} of the mean log ratio, exponentiated)"
    lines += [
        "",
        summary + ". Seeds where A*PO never gets there are left out of the ratio, not counted as any time.",
    ]
    return lines


def plot_curves(curves: Curves, labels: Mapping[str, str], path: Path) -> Path:
    """Test success against CPU time and against episodes sampled, Stage 1 included (one panel
    each): one faint line per seed, and the mean over seeds of each evaluation point."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, axes = plt.subplots(1, 2, figsize=(11, 4.2), sharey=True)
    panels = {
        "cpu_seconds": "training CPU time (s), Stage 1 included",
        "episodes": "episodes sampled, Stage 1 included",
    }
    for axis, (field, name) in zip(axes, panels.items(), strict=True):
        for policy, seeds in curves.items():
            colour = COLOURS[policy.partition("-")[0]]
            for points in seeds.values():
                axis.plot(
                    [getattr(p, field) for p in points],
                    [p.success for p in points],
                    color=colour,
                    alpha=0.2,
                    linewidth=0.8,
                )
            length = min(len(points) for points in seeds.values())
            mean_x = [statistics.fmean(getattr(c[i], field) for c in seeds.values()) for i in range(length)]
            mean_y = [statistics.fmean(c[i].success for c in seeds.values()) for i in range(length)]
            axis.plot(
                mean_x,
                mean_y,
                color=colour,
                marker="o",
                markersize=4,
                linewidth=2,
                label=f"{labels[policy]}, mean",
            )
        axis.set_xlabel(name, fontsize=11)
        axis.tick_params(labelsize=10)
        axis.grid(alpha=0.3)
    axes[0].set_ylabel("test success % (greedy)", fontsize=11)
    axes[0].legend(fontsize=10)
    figure.suptitle(
        f"Test success along training: one faint line per seed, mean over "
        f"{len(next(iter(curves.values())))} seeds",
        fontsize=12,
    )
    figure.tight_layout()
    figure.savefig(path, dpi=120)
    plt.close(figure)
    return path


def curves_json(curves: Curves) -> dict[str, Any]:
    return {
        p: {str(s): [dataclasses.asdict(x) for x in c] for s, c in seeds.items()}
        for p, seeds in curves.items()
    }


def curve_from_json(points: Sequence[Mapping[str, Any]]) -> list[CurvePoint]:
    """A curve as `curves_json` (or a run's kept record) writes it."""
    return [CurvePoint(**point) for point in points]
