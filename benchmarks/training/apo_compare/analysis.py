"""The figures of a comparison from its runs' records (`benchmarks.training.apo_compare.runs`):
per-seed summaries, paired differences from GRPO, test curves and the costs to targets, as a
`Comparison`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from apo_agent.config import ALGORITHMS
from benchmarks.intervals import BCA_MIN_SEEDS, METHODS
from benchmarks.machine import describe_machine
from benchmarks.training.apo_compare.runs import SAMPLED, earlier_rounds, policies_of, round_of, run_name
from benchmarks.training.apo_curves import CurvePoint, Estimate, TimeToTargets, curves_json, time_to_targets


def policies_run(runs: dict[str, Any], seeds: list[int]) -> list[str]:
    """The policies that were trained, in report order (every seed trains the same ones)."""
    rounds = 1
    while run_name(f"apo-round{rounds + 1}", seeds[0]) in runs:
        rounds += 1
    return [p for p in policies_of(ALGORITHMS, rounds) if run_name(p, seeds[0]) in runs]


def first_run(runs: dict[str, Any], policies: list[str], seed: int) -> dict[str, Any]:
    """A run that started from the seed's first pi_ref (the warm start): every gain is against it."""
    return runs[run_name(policies[0], seed)]


def training_seconds(run: dict[str, Any]) -> float:
    """Stage 1's sampling (also when read from a cache another run filled) plus Stage 2."""
    times = run["wall_time_s"]
    if "stage2" in times:
        return float(times.get("stage1", 0.0) + times["stage2"])
    return float(times["training"])  # runs recorded before the stages were timed apart


def summarise(runs: dict[str, Any], seeds: list[int]) -> dict[str, Any]:
    """Per policy, one entry per seed: success, score, gain over the first pi_ref, episodes,
    wall-clock and CPU time (Stage 1 included, Stage 2 only, Stage 1's share in %)."""
    policies = policies_run(runs, seeds)
    rows: dict[str, dict[str, list[float]]] = {}
    for seed in seeds:
        first = first_run(runs, policies, seed)
        reference = first["test"]["reference"]
        rows.setdefault("pi_ref", {}).setdefault("success", []).append(reference["success"])
        rows["pi_ref"].setdefault("score", []).append(reference["score"])
        if "test_sampled" in first:
            rows["pi_ref"].setdefault("sampled_success", []).append(
                first["test_sampled"]["reference"]["success"]
            )
            rows["pi_ref"].setdefault("sampled_score", []).append(first["test_sampled"]["reference"]["score"])
        for policy in policies:
            run = runs[run_name(policy, seed)]
            so_far = [runs[run_name(p, seed)] for p in earlier_rounds(policy)]
            row = rows.setdefault(policy, {})
            row.setdefault("success", []).append(run["test"]["trained"]["success"])
            row.setdefault("score", []).append(run["test"]["trained"]["score"])
            row.setdefault("improvement", []).append(run["test"]["trained"]["success"] - reference["success"])
            row.setdefault("training_s", []).append(sum(training_seconds(r) for r in so_far))
            if all("cpu_time_s" in r for r in so_far):  # runs recorded before CPU time was kept have none
                stage1 = sum(r["cpu_time_s"]["stage1"] for r in so_far)
                stage2 = sum(r["cpu_time_s"]["stage2"] for r in so_far)
                row.setdefault("training_cpu_s", []).append(stage1 + stage2)
                row.setdefault("stage2_cpu_s", []).append(stage2)
                if stage1:
                    row.setdefault("stage1_cpu_share", []).append(100 * stage1 / (stage1 + stage2))
            row.setdefault("stage1_episodes", []).append(sum(r["stage1_episodes"] for r in so_far))
            row.setdefault("stage2_episodes", []).append(sum(r["stage2_episodes"] for r in so_far))
            if "test_sampled" in run:
                sampled = run["test_sampled"]["trained"]
                row.setdefault("sampled_success", []).append(sampled["success"])
                row.setdefault("sampled_score", []).append(sampled["score"])
                row.setdefault("sampled_improvement", []).append(
                    sampled["success"] - first["test_sampled"]["reference"]["success"]
                )
    return rows


def paired_differences(runs: dict[str, Any], seeds: list[int]) -> dict[str, dict[str, list[float]]]:
    """Per trained policy other than GRPO, per seed, its final test success and score minus
    GRPO's of the same seed (greedy; sampled too where every run has it). Both start from the
    seed's pi_ref, so the difference leaves out what the seeds' pi_refs do to both."""
    policies = policies_run(runs, seeds)
    if "grpo" not in policies:
        return {}
    differences: dict[str, dict[str, list[float]]] = {}
    for policy in policies:
        if policy == "grpo":
            continue
        pairs = [(runs[run_name(policy, s)], runs[run_name("grpo", s)]) for s in seeds]
        evaluations = ["test"]
        if all("test_sampled" in run for pair in pairs for run in pair):
            evaluations.append("test_sampled")
        differences[policy] = {
            f"{'sampled_' if evaluation == 'test_sampled' else ''}{measure}": [
                a[evaluation]["trained"][measure] - b[evaluation]["trained"][measure] for a, b in pairs
            ]
            for evaluation in evaluations
            for measure in ("success", "score")
        }
    return differences


def signs(differences: Sequence[float]) -> tuple[int, int, int]:
    """Seeds above, equal to and below zero; differences of recorded percentages that agree to
    1e-6 are equal (28.999999999999996 - 29.0 is a tie)."""
    rounded = [round(d, 6) for d in differences]
    return sum(d > 0 for d in rounded), sum(d == 0 for d in rounded), sum(d < 0 for d in rounded)


@dataclass(frozen=True)
class PairedDifference:
    """One measure's per-seed differences of a policy from GRPO, and what summarises them."""

    values: list[float]
    """Per seed, the policy's final test figure minus GRPO's (`paired_differences`)."""
    estimates: dict[str, Estimate]
    """Their mean and paired 95% interval by method: Student-t, and BCa from `BCA_MIN_SEEDS` seeds."""
    signs: tuple[int, int, int]
    """Seeds above, equal to and below zero (`signs`)."""


def paired_summaries(
    differences: dict[str, dict[str, list[float]]], seeds: Sequence[int]
) -> dict[str, dict[str, PairedDifference]]:
    """Per policy, per measure of `paired_differences`, its `PairedDifference`."""
    methods = ["t"] + (["bca"] if len(seeds) >= BCA_MIN_SEEDS else [])
    return {
        policy: {
            measure: PairedDifference(values, {m: Estimate.of(values, m) for m in methods}, signs(values))
            for measure, values in columns.items()
        }
        for policy, columns in differences.items()
    }


@dataclass(frozen=True)
class Comparison:
    """Every figure of a comparison's report, as `compare` makes it from the runs' records."""

    preset: str
    machine: str
    seeds: list[int]
    policies: list[str]
    """The trained policies, in report order (`policies_run`)."""
    test_goals: int
    eval_temperature: float
    """The test evaluations' temperature (0: greedy)."""
    environment: str
    method: str
    """The intervals' method over seeds, a key of `benchmarks.intervals.METHODS`."""
    summary: dict[str, dict[str, list[float]]]
    """`summarise`: per policy (and "pi_ref"), per figure, one value per seed."""
    estimates: dict[str, dict[str, Estimate]]
    """The same figures' mean over seeds and 95% interval by ``method``."""
    paired: dict[str, dict[str, PairedDifference]]
    """Per trained policy other than GRPO, its paired differences from GRPO (empty without GRPO)."""
    curves: dict[str, dict[int, list[CurvePoint]]]
    """`test_curves`: each first-round policy's test success along training, per seed."""
    time_to_targets: TimeToTargets | None
    """The costs to test success levels every run reaches (None without test curves)."""

    def record(self, command: str) -> dict[str, Any]:
        """results.json: every figure."""
        return {
            "command": command,
            "machine": self.machine,
            "preset": self.preset,
            "interval": METHODS[self.method],
            "summary": self.summary,
            "paired_differences": {
                policy: {measure: d.values for measure, d in columns.items()}
                for policy, columns in self.paired.items()
            },
            "test_curves": curves_json(self.curves),
            "time_to_targets": None if self.time_to_targets is None else self.time_to_targets.record(),
        }


def compare(
    runs: dict[str, Any], seeds: list[int], preset: str = "cpu-demo", method: str = "t"
) -> Comparison:
    """The report's figures (see the package's docstring) from the runs' records; intervals
    over seeds by ``method``."""
    policies = policies_run(runs, seeds)
    some = first_run(runs, policies, seeds[0])
    config = some.get("config", {})
    summary = summarise(runs, seeds)
    curves = test_curves(runs, seeds)
    return Comparison(
        preset=preset,
        machine=describe_machine(),
        seeds=list(seeds),
        policies=policies,
        test_goals=some["test"]["reference"]["goals"],
        eval_temperature=config.get("eval_temperature", SAMPLED),
        environment=config.get("env_id", "WebShop"),
        method=method,
        summary=summary,
        estimates={
            policy: {figure: Estimate.of(values, method) for figure, values in row.items()}
            for policy, row in summary.items()
        },
        paired=paired_summaries(paired_differences(runs, seeds), seeds),
        curves=curves,
        time_to_targets=time_to_targets(curves, stage1_cpu(runs, curves), method) if curves else None,
    )


def stage1_cpu(
    runs: dict[str, Any], curves: dict[str, dict[int, list[CurvePoint]]]
) -> dict[str, dict[int, float]]:
    """Per curve, its run's Stage 1 CPU seconds (0 where none, or none recorded)."""
    return {
        policy: {s: float(runs[run_name(policy, s)].get("cpu_time_s", {}).get("stage1", 0.0)) for s in seeds}
        for policy, seeds in curves.items()
    }


def test_curves(runs: dict[str, Any], seeds: list[int]) -> dict[str, dict[int, list[CurvePoint]]]:
    """Each first-round policy's test-success curve per seed (runs evaluated along training)."""
    curves: dict[str, dict[int, list[CurvePoint]]] = {}
    for policy in policies_run(runs, seeds):
        if round_of(policy) == 1 and all("test_curve" in runs[run_name(policy, s)] for s in seeds):
            curves[policy] = {s: runs[run_name(policy, s)]["test_curve"] for s in seeds}
    return curves
