"""The A*PO vs GRPO report on synthetic run records (no training): intervals over seeds,
paired per-seed differences, both CPU clocks, times to levels every run reaches, and runs
reused from their kept records."""

from __future__ import annotations

import dataclasses
import json
import math
import shutil
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest
import torch
from scipy import stats

import benchmarks.training.apo_compare.cli as apo_cli
import benchmarks.training.apo_compare.runs as apo_runs
from apo_agent.config import TrainConfig
from benchmarks.intervals import interval, mean_interval, ratio_interval
from benchmarks.training.apo_compare.analysis import compare, paired_differences, signs, summarise
from benchmarks.training.apo_compare.report import markdown, plot, signed, training_curve
from benchmarks.training.apo_compare.runs import finished_run, keep_policy, kept_run
from benchmarks.training.apo_curves import (
    CurvePoint,
    every_run_targets,
    target_costs,
    time_to_targets,
    time_to_targets_lines,
)

COMMAND = "python -m benchmarks.training.apo_compare"


def fake_run(reference_success, trained_success, stage1, training_s, cpu=None, score=60.0):
    run = {
        "test": {
            "reference": {"success": reference_success, "score": 50.0, "goals": 100},
            "trained": {"success": trained_success, "score": score, "goals": 100},
        },
        "improvement": {"success": trained_success - reference_success, "score": 10.0},
        "stage1_episodes": stage1,
        "stage2_episodes": 512,
        "wall_time_s": {"training": training_s},
    }
    if cpu is not None:
        run["cpu_time_s"] = {"stage1": cpu[0], "stage2": cpu[1]}
    return run


def t_cell(values, digits=1):
    """The mean and its 95% Student-t interval, computed here straight from scipy."""
    mean, low, high = t_estimate(values)
    return f"{mean:.{digits}f} [{low:.{digits}f}, {high:.{digits}f}]"


def t_estimate(values):
    """(mean, low, high): the mean and its 95% Student-t interval, straight from scipy."""
    mean = sum(values) / len(values)
    if len(set(values)) == 1:
        return mean, mean, mean
    low, high = stats.t.interval(0.95, len(values) - 1, loc=mean, scale=stats.sem(values))
    return mean, low, high


def assert_t(estimate, values):
    """``estimate`` is the mean [95% Student-t interval] of ``values``."""
    assert estimate.method == "t" and estimate.values == pytest.approx(values)
    assert (estimate.mean, estimate.low, estimate.high) == pytest.approx(t_estimate(values))


def test_intervals_over_seeds_are_student_t_by_default_and_bca_from_ten():
    # 2 +- t(0.975, 2) * s / sqrt(3) with s = 1: t(0.975, 2) = 4.3027.
    low, high = interval([1.0, 2.0, 3.0], "t")
    assert low == pytest.approx(2 - 4.302653 / math.sqrt(3)) and high == pytest.approx(
        2 + 4.302653 / math.sqrt(3)
    )
    assert mean_interval([10.0, 20.0, 40.0, 30.0, 50.0], method="t") == t_cell([10.0, 20.0, 40.0, 30.0, 50.0])
    # The t interval of five seeds is wider than the percentile bootstrap's, which undercovers.
    bootstrap_low, bootstrap_high = interval([10.0, 20.0, 40.0, 30.0, 50.0])
    t_low, t_high = interval([10.0, 20.0, 40.0, 30.0, 50.0], "t")
    assert t_low < bootstrap_low and t_high > bootstrap_high
    assert interval([3.0, 3.0], "t") == (3.0, 3.0) and interval([7.0], "bca") == (7.0, 7.0)
    ten = [float(v) for v in (3, 8, 1, 9, 4, 6, 2, 7, 5, 12)]
    expected = stats.bootstrap((ten,), np.mean, n_resamples=10_000, method="BCa", random_state=0)
    assert interval(ten, "bca") == (expected.confidence_interval.low, expected.confidence_interval.high)
    # Skewed values: BCa corrects the percentile interval (and is not the t interval).
    assert interval(ten, "bca") != interval(ten, "percentile") and interval(ten, "bca") != interval(ten, "t")
    with pytest.raises(ValueError, match="BCa needs at least 10"):
        interval(ten[:9], "bca")
    with pytest.raises(ValueError, match="method"):
        interval(ten, "normal")


def test_a_ratio_is_summarised_by_its_geometric_mean_and_the_t_interval_of_its_logs():
    # logs ln 2 and ln 8: mean ln 4, standard error ln 8 - ln 4 = ln 2, t(0.975, 1) = 12.7062.
    mean, low, high = ratio_interval([2.0, 8.0])
    assert mean == pytest.approx(4.0)
    assert low == pytest.approx(4.0 / 2**12.706205) and high == pytest.approx(4.0 * 2**12.706205)
    assert ratio_interval([3.0, 3.0, 3.0]) == pytest.approx((3.0, 3.0, 3.0))


def test_summary_and_table():
    runs = {
        "apo-seed0": fake_run(20.0, 40.0, 512, 300.0, cpu=(400.0, 600.0)),
        "grpo-seed0": fake_run(20.0, 30.0, 0, 250.0, cpu=(0.0, 900.0)),
        "apo-seed1": fake_run(22.0, 44.0, 512, 320.0, cpu=(600.0, 600.0)),
        "grpo-seed1": fake_run(22.0, 28.0, 0, 260.0, cpu=(0.0, 1000.0)),
    }
    rows = summarise(runs, [0, 1])
    assert rows["pi_ref"]["success"] == [20.0, 22.0]
    assert rows["apo"]["improvement"] == [20.0, 22.0]
    # Two clocks: Stage 1 included, Stage 2 only; and Stage 1's share of A*PO's CPU.
    assert rows["apo"]["training_cpu_s"] == [1000.0, 1200.0] and rows["apo"]["stage2_cpu_s"] == [600.0, 600.0]
    assert rows["apo"]["stage1_cpu_share"] == [40.0, 50.0] and "stage1_cpu_share" not in rows["grpo"]
    comparison = compare(runs, [0, 1])
    assert comparison.method == "t" and comparison.seeds == [0, 1] and comparison.summary == rows
    estimates = comparison.estimates
    assert_t(estimates["pi_ref"]["success"], [20.0, 22.0])
    apo = estimates["apo"]
    assert_t(apo["success"], [40.0, 44.0])
    assert_t(apo["score"], [60.0, 60.0])
    assert_t(apo["improvement"], [20.0, 22.0])
    assert apo["stage1_episodes"].values == apo["stage2_episodes"].values == (512, 512)
    assert_t(apo["training_cpu_s"], [1000.0, 1200.0])
    assert_t(apo["stage2_cpu_s"], [600.0, 600.0])
    assert_t(apo["training_s"], [300.0, 320.0])
    assert_t(estimates["grpo"]["success"], [30.0, 28.0])
    assert_t(apo["stage1_cpu_share"], [40.0, 50.0])
    assert "stage1_cpu_share" not in estimates["grpo"]
    # Per seed: successes, then each method's CPU with Stage 1 and Stage 2 only.
    summary = comparison.summary
    assert (summary["pi_ref"]["success"][1], summary["pi_ref"]["score"][1]) == (22.0, 50.0)
    assert (summary["apo"]["success"][1], summary["apo"]["score"][1]) == (44.0, 60.0)
    assert (summary["grpo"]["success"][1], summary["grpo"]["score"][1]) == (28.0, 60.0)
    assert (summary["grpo"]["training_cpu_s"][1], summary["grpo"]["stage2_cpu_s"][1]) == (1000.0, 1000.0)


def test_the_title_names_the_preset_and_the_environment():
    runs = {f"{a}-seed0": fake_run(20.0, 30.0, 0, 1.0) for a in ("apo", "grpo")}
    for run in runs.values():
        run["config"] = {"env_id": "WebShop-Text-v0", "eval_temperature": 1.0}
    comparison = compare(runs, [0], preset="smollm2")
    assert (comparison.preset, comparison.environment) == ("smollm2", "WebShop-Text-v0")
    assert comparison.policies == ["apo", "grpo"]


def sampled_runs(per_seed):
    """Runs of A*PO and GRPO per seed: (A*PO, GRPO) greedy success and score, sampled success."""
    runs = {}
    for seed, (apo, grpo) in enumerate(per_seed):
        for algorithm, (success, score, sampled) in (("apo", apo), ("grpo", grpo)):
            run = fake_run(20.0, success, 512 if algorithm == "apo" else 0, 300.0, score=score)
            run["config"] = {"eval_temperature": 0.0}
            run["test_sampled"] = {
                "reference": {"success": 18.0, "score": 40.0, "goals": 100},
                "trained": {"success": sampled, "score": 45.0, "goals": 100},
            }
            runs[f"{algorithm}-seed{seed}"] = run
    return runs


def test_per_seed_differences_are_paired_with_their_t_interval_and_sign_count():
    runs = sampled_runs(
        [
            ((30.0, 70.0, 25.0), (33.0, 71.5, 28.0)),
            ((34.0, 74.0, 31.0), (30.0, 72.0, 26.0)),
            # A recorded 29% is 28.999999999999996: still a tie with GRPO's 29.
            ((28.999999999999996, 70.0, 30.0), (29.0, 69.0, 27.0)),
        ]
    )
    differences = paired_differences(runs, [0, 1, 2])
    assert list(differences) == ["apo"]
    assert differences["apo"]["success"] == pytest.approx([-3.0, 4.0, 0.0])
    assert differences["apo"]["score"] == [-1.5, 2.0, 1.0]
    assert differences["apo"]["sampled_success"] == [-3.0, 5.0, 3.0]
    assert signs(differences["apo"]["success"]) == (1, 1, 1)
    assert signs(differences["apo"]["sampled_success"]) == (2, 0, 1)
    paired = compare(runs, [0, 1, 2]).paired
    assert list(paired) == ["apo"]
    assert list(paired["apo"]) == ["success", "score", "sampled_success", "sampled_score"]
    assert [d.values[0] for d in paired["apo"].values()] == pytest.approx([-3.0, -1.5, -3.0, 0.0])
    assert [d.values[2] for d in paired["apo"].values()] == pytest.approx([0.0, 1.0, 3.0, 0.0])
    assert signed(paired["apo"]["success"].values[2]) == "0.0"  # not "-0.0"
    # Success: mean 1/3, s = sqrt(37/3), t(0.975, 2) = 4.3027 -> 0.3 [-8.4, 9.1]; score: mean
    # 0.5, s = sqrt(3.25) -> 0.5 [-4.0, 5.0].
    success, score = paired["apo"]["success"].estimates["t"], paired["apo"]["score"].estimates["t"]
    half = 4.302653 * math.sqrt(37 / 3) / math.sqrt(3)
    assert (success.mean, success.low, success.high) == pytest.approx((1 / 3, 1 / 3 - half, 1 / 3 + half))
    half = 4.302653 * math.sqrt(3.25) / math.sqrt(3)
    assert (score.mean, score.low, score.high) == pytest.approx((0.5, 0.5 - half, 0.5 + half))
    assert all(list(d.estimates) == ["t"] for d in paired["apo"].values())  # no BCa: fewer than 10 seeds
    assert [d.signs for d in paired["apo"].values()] == [(1, 1, 1), (2, 0, 1), (2, 0, 1), (0, 3, 0)]


def test_ten_seeds_add_the_bca_interval_of_the_differences():
    per_seed = [((30.0 + d, 70.0, 30.0), (30.0, 70.0, 30.0)) for d in (1, -2, 3, 0, 5, 2, -1, 4, 6, 2)]
    runs = sampled_runs(per_seed)
    success = compare(runs, list(range(10))).paired["apo"]["success"]
    assert list(success.estimates) == ["t", "bca"]
    bca = success.estimates["bca"]
    differences = [1.0, -2.0, 3.0, 0.0, 5.0, 2.0, -1.0, 4.0, 6.0, 2.0]
    assert bca.method == "bca" and bca.mean == pytest.approx(2.0)
    assert (bca.low, bca.high) == interval(differences, "bca") != interval(differences, "t")
    assert mean_interval(differences, method="bca") != mean_interval(differences, method="t")


def test_a_greedy_report_also_gives_the_sampled_policies():
    runs = {}
    for seed, (reference, apo, grpo) in enumerate([(10.0, 30.0, 20.0), (14.0, 36.0, 18.0)]):
        for algorithm, trained in (("apo", apo), ("grpo", grpo)):
            run = fake_run(reference + 10, trained + 20, 512 if algorithm == "apo" else 0, 300.0)
            run["config"] = {"eval_temperature": 0.0}
            run["test_sampled"] = {
                "reference": {"success": reference, "score": 40.0, "goals": 100},
                "trained": {"success": trained, "score": 45.0, "goals": 100},
            }
            runs[f"{algorithm}-seed{seed}"] = run
    rows = summarise(runs, [0, 1])
    assert rows["pi_ref"]["sampled_success"] == [10.0, 14.0]
    assert rows["apo"]["sampled_improvement"] == [20.0, 22.0]
    comparison = compare(runs, [0, 1])
    assert comparison.eval_temperature == 0.0  # greedy
    estimates = comparison.estimates
    assert_t(estimates["pi_ref"]["sampled_success"], [10.0, 14.0])
    assert_t(estimates["pi_ref"]["sampled_score"], [40.0, 40.0])
    for policy, success, improvement in (
        ("apo", [30.0, 36.0], [20.0, 22.0]),
        ("grpo", [20.0, 18.0], [10.0, 4.0]),
    ):
        assert_t(estimates[policy]["sampled_success"], success)
        assert_t(estimates[policy]["sampled_score"], [45.0, 45.0])
        assert_t(estimates[policy]["sampled_improvement"], improvement)


def test_a_sampled_report_has_one_table():
    runs = {f"{a}-seed0": fake_run(20.0, 30.0, 0, 1.0) for a in ("apo", "grpo")}
    comparison = compare(runs, [0])
    assert comparison.eval_temperature == 1.0  # one sampled episode each
    assert all("sampled_success" not in row for row in comparison.estimates.values())


def curve(cpu, episodes, successes):
    return [CurvePoint(0.0, e, y, c) for c, e, y in zip(cpu, episodes, successes, strict=True)]


# A*PO: pi_ref, pi_ref after Stage 1 (400 CPU s, 1000 episodes), then checkpoints; GRPO: pi_ref, checkpoints.
CURVES = {
    "apo": {
        0: curve([0, 400, 500, 600], [0, 1000, 1100, 1200], [20, 20, 30, 40]),
        1: curve([0, 400, 600, 800], [0, 1000, 1200, 1400], [18, 18, 30, 36]),
    },
    "grpo": {
        0: curve([0, 200, 400], [0, 800, 1600], [20, 24, 32]),
        1: curve([0, 100, 300, 500], [0, 400, 1200, 2000], [18, 30, 38, 34]),
    },
}
STAGE1 = {"apo": {0: 400.0, 1: 400.0}, "grpo": {0: 0.0, 1: 0.0}}


def test_targets_are_levels_every_run_of_every_method_reaches():
    targets = every_run_targets(CURVES)
    # Top: the smallest of the runs' best successes (GRPO seed 0's 32); the lower level is
    # halfway to it from the best pi_ref (20).
    assert [t.success for t in targets] == [26.0, 32.0]
    assert "halfway from the best pi_ref (20.0)" in targets[0].chosen_as
    costs = target_costs(CURVES, 32.0, STAGE1)
    # A*PO seed 0: 32 is 1/5 of the way from 30 (500 s) to 40 (600 s); seed 1: 1/3 from 30 to 36.
    assert costs["apo"]["cpu_seconds"] == pytest.approx([520.0, 600.0 + 200.0 / 3])
    assert costs["apo"]["stage2_cpu_seconds"] == pytest.approx([120.0, 200.0 + 200.0 / 3])
    assert costs["apo"]["episodes"] == pytest.approx([1120.0, 1200.0 + 200.0 / 3])
    # GRPO seed 0 only gets there at its last checkpoint; seed 1 a quarter of the way from 30 to 38.
    assert costs["grpo"]["cpu_seconds"] == pytest.approx([400.0, 150.0])
    assert costs["grpo"]["stage2_cpu_seconds"] == costs["grpo"]["cpu_seconds"]
    assert costs["grpo"]["episodes"] == pytest.approx([1600.0, 600.0])
    low = target_costs(CURVES, 26.0, STAGE1)
    assert low["apo"]["cpu_seconds"] == pytest.approx([460.0, 400.0 + 200.0 * 8 / 12])
    assert low["grpo"]["cpu_seconds"] == pytest.approx([200.0 + 200.0 * 2 / 8, 100.0 * 8 / 12])


def test_time_to_targets_report_means_over_every_seed_and_log_ratio_intervals():
    result = time_to_targets(CURVES, STAGE1)
    record = result.record()
    top = result.targets[1]
    assert (top.target.success, top.target.chosen_as) == (32.0, "top: the largest success every run reaches")
    assert_t(top.estimates["apo"]["cpu_seconds"], [520.0, 600.0 + 200 / 3])
    ratios = [520.0 / 400.0, (600.0 + 200.0 / 3) / 150.0]
    assert record["targets"][1]["ratios"]["apo"] == pytest.approx(ratios) == top.ratios["apo"]
    assert ratios == pytest.approx([1.30, 4.44], abs=0.005)
    mean, low, high = ratio_interval(ratios)
    assert mean == pytest.approx(math.sqrt(ratios[0] * ratios[1]))
    log_low, log_high = stats.t.interval(
        0.95, 1, loc=sum(map(math.log, ratios)) / 2, scale=stats.sem([math.log(r) for r in ratios])
    )
    assert (low, high) == pytest.approx((math.exp(log_low), math.exp(log_high)))
    estimate = top.ratio_estimates["apo"]
    assert estimate.method == "t" and (estimate.mean, estimate.low, estimate.high) == pytest.approx(
        (mean, low, high)
    )
    # GRPO's final success per seed: 32 (seed 0, at 400 s) and 34 (seed 1, first reached at
    # 100 + 200 * 4 / 8 = 200 s); A*PO gets to 32 at 520 s in seed 0 and to 34 in seed 1 at
    # 600 + 200 * 4 / 6 s.
    rows = record["reaching_grpo_final"]
    assert [(r["target"], r["grpo"]) for r in rows] == [(32.0, 400.0), (34.0, 200.0)]
    assert rows[0]["apo"] == pytest.approx(520.0) and rows[1]["apo"] == pytest.approx(600.0 + 800.0 / 6)
    assert result.seeds == 2 and all(r["apo"] is not None for r in rows)  # A*PO reaches it in 2 of 2
    assert result.reaching_estimate.values == pytest.approx([520.0 / 400.0, (600.0 + 800.0 / 6) / 200.0])


def test_a_seed_where_apo_never_reaches_grpo_final_success_is_counted_not_dropped():
    curves = {
        "apo": {
            0: CURVES["apo"][0],
            1: CURVES["apo"][1],
            2: curve([0, 400, 500], [0, 1000, 1100], [18, 18, 30]),
        },
        "grpo": {**CURVES["grpo"], 2: curve([0, 100, 300], [0, 400, 1200], [18, 30, 34])},
    }
    stage1 = {"apo": {0: 400.0, 1: 400.0, 2: 400.0}, "grpo": {0: 0.0, 1: 0.0, 2: 0.0}}
    result = time_to_targets(curves, stage1)
    assert result.reaching_grpo_final[2] == {
        "seed": 2,
        "target": 34.0,
        "grpo": 300.0,
        "apo": None,
        "ratio": None,
    }
    assert result.record()["reaching_grpo_final"][2]["ratio"] is None
    ratios = [520.0 / 400.0, (600.0 + 800.0 / 6) / 200.0]
    mean, low, high = ratio_interval(ratios)
    estimate = result.reaching_estimate
    assert estimate.values == pytest.approx(ratios) and result.seeds == 3
    assert (estimate.mean, estimate.low, estimate.high) == pytest.approx((mean, low, high))
    # The rendering of these figures: the seed A*PO never gets there, and the summary under the table.
    text = "\n".join(time_to_targets_lines(result, {"apo": "A*PO", "grpo": "GRPO"}))
    assert "| 2 | 34.0 | 300 | never | - |" in text
    assert (
        "A*PO reaches GRPO's final success in 2 of 3 seeds. Geometric mean of A*PO / GRPO over the "
        f"2 seeds with a ratio: {mean:.2f} [{low:.2f}, {high:.2f}]" in text
    )


def test_the_report_times_the_test_curves_to_every_run_targets():
    runs = {}
    for seed in (0, 1):
        for algorithm in ("apo", "grpo"):
            points = CURVES[algorithm][seed]
            stage1 = STAGE1[algorithm][seed]
            run = fake_run(points[0].success, points[-1].success, 1000 if stage1 else 0, 1.0, (stage1, 100.0))
            run["test_curve"] = points
            runs[f"{algorithm}-seed{seed}"] = run
    result = compare(runs, [0, 1]).time_to_targets
    assert result is not None
    halfway = result.targets[0]
    assert halfway.target == every_run_targets(CURVES)[0]
    assert (halfway.target.success, halfway.target.chosen_as) == (
        26.0,
        "halfway from the best pi_ref (20.0) to the top",
    )
    assert list(halfway.estimates) == ["apo", "grpo"]
    # no row averages a subset of seeds
    assert all(
        len(e.values) == 2 for t in result.targets for axes in t.estimates.values() for e in axes.values()
    )


def test_a_run_that_finished_with_the_same_settings_is_reused(tmp_path):
    config = TrainConfig.from_preset(
        "cpu-demo", seed=1, torch_threads=1, output_dir=str(tmp_path / "apo-seed1")
    )
    assert finished_run(config) is None  # never ran
    (tmp_path / "apo-seed1" / "final-model").mkdir(parents=True)
    results = {
        "config": dataclasses.asdict(config),
        "final_model": str(tmp_path / "apo-seed1" / "final-model"),
        "test": {"trained": {"success": 31.0}},
    }
    path = tmp_path / "apo-seed1" / "results.json"
    path.write_text(json.dumps(results, default=str))
    assert finished_run(config)["test"]["trained"]["success"] == 31.0
    # The thread count only sets the speed: a run made on one thread is reused on two.
    threads = dataclasses.replace(config, torch_threads=2)
    assert finished_run(threads)["test"]["trained"]["success"] == 31.0
    # GRPO's settings do not touch an A*PO run.
    assert finished_run(dataclasses.replace(config, grpo_kl_coef=0.5))["test"]["trained"]["success"] == 31.0
    # Other settings, a results file cut short, or a missing model: run it again.
    assert finished_run(dataclasses.replace(config, steps=config.steps + 1)) is None
    assert finished_run(dataclasses.replace(config, beta2=0.5)) is None
    path.write_text(json.dumps(results, default=str)[:40])
    assert finished_run(config) is None
    path.write_text(json.dumps(results, default=str))
    (tmp_path / "apo-seed1" / "final-model").rmdir()
    assert finished_run(config) is None


def test_runs_recorded_with_episodes_per_step_are_read_as_their_goals_per_step(tmp_path):
    for algorithm, goals, reused in (("apo", 32, True), ("grpo", 32, False), ("grpo", 4, True)):
        config = TrainConfig.from_preset(
            "cpu-demo",
            algorithm=algorithm,
            goals_per_step=goals,
            group_size=8,
            output_dir=str(tmp_path / algorithm),
        )
        old = dataclasses.asdict(config)
        del old["goals_per_step"]
        old["episodes_per_step"] = 32  # GRPO's 32 episodes were 4 groups of 8
        path = tmp_path / f"{algorithm}-{goals}.json"
        path.write_text(json.dumps({"config": old, "test": {}}, default=str))
        assert (kept_run(path, config, ["test"]) is not None) == reused


def test_a_report_of_one_algorithm_has_only_its_rows():
    runs = {f"apo-seed{seed}": fake_run(20.0 + seed, 35.0 + seed, 512, 300.0) for seed in (0, 1)}
    rows = summarise(runs, [0, 1])
    assert set(rows) == {"pi_ref", "apo"}
    comparison = compare(runs, [0, 1])
    assert comparison.policies == ["apo"] and comparison.preset == "cpu-demo"
    apo = comparison.estimates["apo"]
    assert_t(apo["success"], [35.0, 36.0])
    assert_t(apo["score"], [60.0, 60.0])
    assert_t(apo["improvement"], [15.0, 15.0])
    assert apo["stage1_episodes"].values == apo["stage2_episodes"].values == (512, 512)
    assert "training_cpu_s" not in apo and "stage2_cpu_s" not in apo  # recorded without CPU time
    assert_t(apo["training_s"], [300.0, 300.0])
    assert set(comparison.estimates) == {"pi_ref", "apo"} and comparison.paired == {}
    summary = comparison.summary
    assert (summary["pi_ref"]["success"][1], summary["pi_ref"]["score"][1]) == (21.0, 50.0)
    assert (summary["apo"]["success"][1], summary["apo"]["score"][1]) == (36.0, 60.0)


def test_later_rounds_are_reported_against_the_first_pi_ref_with_their_costs_added_up():
    runs = {
        "apo-seed0": fake_run(20.0, 30.0, 512, 300.0, cpu=(100.0, 200.0)),
        "apo-seed0-round2": fake_run(30.0, 36.0, 256, 200.0, cpu=(50.0, 150.0)),  # pi_ref: round 1's policy
        "grpo-seed0": fake_run(20.0, 33.0, 0, 250.0, cpu=(0.0, 400.0)),
    }
    for run in runs.values():
        run["config"] = {"env_id": "WebShop-Text-v0", "eval_temperature": 1.0}
    rows = summarise(runs, [0])
    assert rows["pi_ref"]["success"] == [20.0]
    assert rows["apo-round2"]["improvement"] == [16.0]
    comparison = dataclasses.replace(compare(runs, [0], preset="smollm2"), machine="a machine")
    figures = ("success", "score", "improvement", "stage1_episodes", "stage2_episodes")
    figures += ("training_cpu_s", "stage2_cpu_s", "training_s")
    # One seed: each figure is that seed's, and the rounds' episodes and times add up.
    assert {p: [comparison.estimates[p][f].mean for f in figures] for p in comparison.policies} == {
        "apo": [30.0, 60.0, 10.0, 512, 512, 300.0, 200.0, 300.0],
        "apo-round2": [36.0, 60.0, 16.0, 768, 1024, 500.0, 350.0, 500.0],
        "grpo": [33.0, 60.0, 13.0, 0, 512, 400.0, 400.0, 250.0],
    }
    assert [rows[p]["training_cpu_s"] + rows[p]["stage2_cpu_s"] for p in comparison.policies] == [
        [300.0, 200.0],
        [500.0, 350.0],
        [400.0, 400.0],
    ]
    # Every A*PO policy is set against GRPO.
    assert list(comparison.paired) == ["apo", "apo-round2"]
    assert comparison.paired["apo-round2"]["success"].values == [3.0]
    # The report of these figures, as results.md records it.
    assert (
        markdown(comparison, "python -m benchmarks.training.apo_compare --rounds 2")
        == "\n".join(
            [
                "# A*PO vs GRPO, apo-agent preset `smollm2` (WebShop-Text-v0, test split)",
                "",
                "Command: `python -m benchmarks.training.apo_compare --rounds 2`  ",
                "Machine: a machine  ",
                "Seeds: 0; 100 test goals, one sampled episode each (temperature 1). Success and score in %, "
                "mean [95% Student-t interval] over the 1 seeds.",
                "",
            ]
        )
        + REPORT_OF_ROUNDS
    )


REPORT_OF_ROUNDS = """
| policy | success % | score | gain in success (points) | Stage 1 episodes | Stage 2 episodes | training CPU s, Stage 1 included | training CPU s, Stage 2 only | training wall-clock s |
|---|---|---|---|---|---|---|---|---|
| pi_ref (warm start) | 20.0 | 50.0 | | | | | | |
| after A*PO | 30.0 | 60.0 | 10.0 | 512 | 512 | 300 | 200 | 300 |
| after A*PO, 2 rounds | 36.0 | 60.0 | 16.0 | 768 | 1024 | 500 | 350 | 500 |
| after GRPO | 33.0 | 60.0 | 13.0 | 0 | 512 | 400 | 400 | 250 |

Training time covers Stage 1 (A*PO only) and Stage 2 (of every round so far), not the warm start or the test evaluations. CPU time (all the process's threads) is the clock to compare when other work shares the machine; wall-clock is given for completeness.
Stage 1's share of A*PO's training CPU time: 33.3 %.
Stage 1's share of A*PO, 2 rounds's training CPU time: 30.0 %.

Each A*PO round after the first takes the last round's policy as its pi_ref (its own Stage 1, and the KL anchor moves with it); gains are against the warm start, and the episodes and times add up the rounds so far.

Per seed (CPU s: Stage 1 included, then Stage 2 only):

| seed | pi_ref success / score | A*PO success / score | A*PO, 2 rounds success / score | GRPO success / score | A*PO CPU s, Stage 1 incl. | A*PO CPU s, Stage 2 | A*PO, 2 rounds CPU s, Stage 1 incl. | A*PO, 2 rounds CPU s, Stage 2 | GRPO CPU s, Stage 1 incl. | GRPO CPU s, Stage 2 |
|---|---|---|---|---|---|---|---|---|---|---|
| 0 | 20.0 / 50.0 | 30.0 / 60.0 | 36.0 / 60.0 | 33.0 / 60.0 | 300 | 200 | 500 | 350 | 400 | 400 |

## Paired differences, seed by seed

Both methods train from the same pi_ref in each seed; the difference of their final test success and score per seed, its mean over seeds with a paired 95% interval (Student-t; BCa too from 10 seeds), and how many seeds it is above, equal to and below zero.

### A*PO - GRPO

| seed | success (points) | score |
|---|---|---|
| 0 | -3.0 | 0.0 |
| mean [95% Student-t interval] | -3.0 | 0.0 |
| seeds A*PO above / equal / below | 0 / 0 / 1 | 0 / 1 / 0 |

### A*PO, 2 rounds - GRPO

| seed | success (points) | score |
|---|---|---|
| 0 | +3.0 | 0.0 |
| mean [95% Student-t interval] | 3.0 | 0.0 |
| seeds A*PO, 2 rounds above / equal / below | 1 / 0 / 0 | 0 / 1 / 0 |
"""  # noqa: E501


def test_each_round_starts_from_the_policy_of_the_round_before(tmp_path, monkeypatch):
    started = []

    def fake_pipeline(config):
        started.append(config)
        (Path(config.output_dir) / "final-model").mkdir(parents=True)  # the next round's pi_ref
        return {**fake_run(20.0, 30.0, 512, 1.0), "config": {"eval_temperature": 1.0}}

    monkeypatch.setattr(apo_runs, "run_pipeline", fake_pipeline)
    work = tmp_path / "work"
    overrides = {"steps": 2, "eval_temperature": 1.0}  # (greedy runs are also evaluated sampled)
    runs = apo_runs.run_all(tmp_path / "out", work, [0], overrides, ["apo", "grpo"], rounds=3)
    assert list(runs) == ["apo-seed0", "apo-seed0-round2", "apo-seed0-round3", "grpo-seed0"]
    first, second, third, grpo = started
    assert first.model == "tiny" and first.reference_dir == str(work / "reference-seed0")
    assert second.model == str(work / "apo-seed0" / "final-model")
    assert third.model == str(work / "apo-seed0-round2" / "final-model")
    for later in (second, third):
        assert later.sft_epochs == 0 and later.reference_dir is None and later.algorithm == "apo"
    assert third.output_dir == str(work / "apo-seed0-round3") and third.steps == 2
    assert grpo.algorithm == "grpo" and grpo.model == "tiny"


def test_a_kept_record_is_reused_when_the_work_folder_is_gone(tmp_path, monkeypatch, capsys):
    """Another machine: ``--out`` (committed) is there, ``--work`` is not."""
    curve_points = [CurvePoint(0.0, 0, 20.0, 0.0), CurvePoint(5.0, 64, 30.0, 4.0)]

    def fake_pipeline(config):
        folder = Path(config.output_dir)
        (folder / "final-model").mkdir(parents=True)
        (folder / "config.json").write_text("{}")
        (folder / "metrics.csv").write_text("step,episodes\n1,32\n")
        run = fake_run(20.0, 30.0, 512, 1.0, cpu=(10.0, 20.0))
        return {**run, "config": json.loads(json.dumps(dataclasses.asdict(config), default=str))}

    monkeypatch.setattr(apo_runs, "run_pipeline", fake_pipeline)
    monkeypatch.setattr(apo_runs, "evaluate_sampled", lambda config, run: {"trained": {"success": 25.0}})
    monkeypatch.setattr(apo_runs, "success_curve", lambda config, run: curve_points)
    out, work = tmp_path / "out", tmp_path / "work"
    overrides = {"steps": 2, "checkpoint_every": 1, "eval_temperature": 0.0}
    first = apo_runs.run_all(out, work, [0], overrides, ["apo"], rounds=2)
    kept = json.loads((out / "runs" / "apo-seed0" / "results.json").read_text())
    assert kept["test_sampled"] == {"trained": {"success": 25.0}}
    assert kept["test_curve"][1] == {"seconds": 5.0, "episodes": 64, "success": 30.0, "cpu_seconds": 4.0}
    assert kept["cpu_time_s"] == {"stage1": 10.0, "stage2": 20.0} and kept["stage1_episodes"] == 512
    assert (out / "runs" / "apo-seed0" / "metrics.csv").is_file()
    keep_policy(out, work, 0)
    assert (out / "policy" / "final-model").is_dir()

    shutil.rmtree(work)

    def must_not_run(*args):
        raise AssertionError("a kept run was trained or evaluated again")

    for name in ("run_pipeline", "evaluate_sampled", "success_curve"):
        monkeypatch.setattr(apo_runs, name, must_not_run)
    again = apo_runs.run_all(out, work, [0], {**overrides, "torch_threads": 1}, ["apo"], rounds=2)
    assert again["apo-seed0-round2"]["test"] == first["apo-seed0-round2"]["test"]
    assert again["apo-seed0"]["test_curve"] == curve_points == first["apo-seed0"]["test_curve"]
    assert again["apo-seed0"]["test"] == first["apo-seed0"]["test"]
    assert not work.exists()
    # The policy kept before stays, with a note, since its run folder is gone.
    keep_policy(out, work, 0)
    assert (
        out / "policy" / "final-model"
    ).is_dir() and "the policy kept before stays" in capsys.readouterr().out
    # Other training settings: trained again.
    with pytest.raises(AssertionError, match="trained or evaluated again"):
        apo_runs.run_all(out, work, [0], {**overrides, "steps": 3}, ["apo"])
    # A later round not kept, whose pi_ref (the round before) is gone with the work folder,
    # says so instead of failing inside the trainer.
    (out / "runs" / "apo-seed0-round2" / "results.json").unlink()
    with pytest.raises(FileNotFoundError, match="apo-seed0/final-model, which is gone"):
        apo_runs.run_all(out, work, [0], overrides, ["apo"], rounds=2)


def test_a_kept_record_without_an_evaluation_the_report_needs_is_not_reused(tmp_path):
    config = TrainConfig.from_preset("cpu-demo", output_dir=str(tmp_path / "work" / "apo-seed0"))
    path = tmp_path / "results.json"
    path.write_text(json.dumps({"config": dataclasses.asdict(config), "test": {}}, default=str))
    assert kept_run(path, config, ["test"]) is not None
    assert kept_run(path, config, ["test", "test_curve"]) is None


def test_a_run_started_by_hand_and_moved_is_reused(tmp_path):
    """Where a run was written and the command that started it do not change what it trained."""
    by_hand = TrainConfig.from_preset(
        "cpu-demo",
        model="runs/apo-seed0/final-model",
        sft_epochs=0,
        output_dir="runs/elsewhere",
        resume=True,
        extra={"command": "python -m apo_agent --model runs/apo-seed0/final-model"},
    )
    moved = tmp_path / "apo-seed0-round2"
    (moved / "final-model").mkdir(parents=True)
    results = {"config": dataclasses.asdict(by_hand), "final_model": "runs/elsewhere/final-model"}
    (moved / "results.json").write_text(json.dumps(results, default=str))
    config = dataclasses.replace(by_hand, output_dir=str(moved), resume=False, extra={}, torch_threads=2)
    assert finished_run(config)["final_model"] == str(moved / "final-model")
    assert finished_run(dataclasses.replace(config, model="runs/apo-seed1/final-model")) is None


def write_metrics(folder, successes, episodes_per_step=32):
    folder.mkdir(parents=True)
    lines = ["step,episodes,charts/success"]
    lines += [f"{step},{step * episodes_per_step},{success}" for step, success in enumerate(successes, 1)]
    (folder / "metrics.csv").write_text("\n".join(lines) + "\n")


def test_later_rounds_are_drawn_on_from_where_the_round_before_ended(tmp_path):
    write_metrics(tmp_path / "runs" / "apo-seed0", [0.25, 0.5, 0.5])
    write_metrics(tmp_path / "runs" / "apo-seed0-round2", [0.5, 0.75])
    write_metrics(tmp_path / "runs" / "grpo-seed0", [0.0, 1.0])

    assert training_curve(tmp_path, "apo", 0) == ([32, 64, 96], [25.0, 50.0, 50.0])
    assert training_curve(tmp_path, "apo-round2", 0) == ([128, 160], [50.0, 75.0])
    assert training_curve(tmp_path, "grpo", 0) == ([32, 64], [0.0, 100.0])
    png = plot(tmp_path, [0], ["apo", "apo-round2", "grpo"], preset="smollm2")
    assert png.read_bytes().startswith(b"\x89PNG")


def test_a_trained_policy_is_evaluated_sampled_once(tmp_path, monkeypatch):
    calls = []

    def evaluate(model, config, *, description):
        calls.append((config.eval_temperature, model))
        return SimpleNamespace(summary=lambda: {"success": 30.0})

    monkeypatch.setattr(apo_runs, "evaluate", evaluate)
    monkeypatch.setattr(apo_runs, "evaluate_reference", lambda config, path: {"success": 20.0})
    config = TrainConfig.from_preset("cpu-demo", output_dir=str(tmp_path))
    run = {"test": {"trained": {"success": 35.0}}, "final_model": "m", "reference_model": "r"}
    first = apo_runs.evaluate_sampled(config, run)
    assert first == {"reference": {"success": 20.0}, "trained": {"success": 30.0}}
    assert apo_runs.evaluate_sampled(config, run) == first and calls == [(1.0, "m")]
    # Another trained policy in the same folder is evaluated again.
    apo_runs.evaluate_sampled(config, {**run, "test": {"trained": {"success": 36.0}}})
    assert len(calls) == 2


def test_bca_over_seeds_needs_ten_seeds():
    with pytest.raises(SystemExit):
        apo_cli.main(["--seeds", "0", "1", "2", "--interval", "bca", "--out", "/nonexistent/never-written"])


def test_a_run_cut_short_by_a_cpu_budget_ends_its_test_curve_at_its_final_model(tmp_path, monkeypatch):
    import apo_agent.evaluation
    from benchmarks.training.apo_curves import success_curve

    evaluated = []

    def evaluate(reference, config, *, checkpoint, description):
        evaluated.append(checkpoint.name)
        return SimpleNamespace(success=25.0)

    monkeypatch.setattr(apo_agent.evaluation, "evaluate", evaluate)
    config = TrainConfig.from_preset("cpu-demo", output_dir=str(tmp_path), steps=8, checkpoint_every=2)
    rows = ["step,episodes,wall_time_s,cpu_time_s", "0,0,0.0,0.0"]
    rows += [f"{step},{32 * step},{10.0 * step},{8.0 * step}" for step in (1, 2, 3)]  # budget spent at 3
    (tmp_path / "metrics.csv").write_text("\n".join(rows) + "\n")
    run = {
        "reference_model": "r",
        "test": {"reference": {"success": 20.0}, "trained": {"success": 31.0}},
        "stage1_episodes": 0,
        "wall_time_s": {},
        "cpu_time_s": {"stage1": 0.0},
    }
    points = success_curve(config, run)
    assert [(p.episodes, p.cpu_seconds, p.success) for p in points] == [
        (0, 0.0, 20.0),
        (64, 16.0, 25.0),
        (96, 24.0, 31.0),
    ]
    assert len(evaluated) == 1  # the checkpoint at step 2; step 3 is the final model, already tested


def test_side_by_side_runs_a_seeds_pair_in_two_processes_and_keeps_their_records(tmp_path, monkeypatch):
    """The pair goes to two spawned processes (nothing patched there): both find their kept
    records, and the records come back to the parent."""
    out, work = tmp_path / "out", tmp_path / "work"
    overrides = {"eval_temperature": 1.0, "checkpoint_every": 0}
    for policy in ("apo", "grpo"):
        config = apo_runs.run_config("cpu-demo", overrides, 0, policy, work, work)
        kept = out / "runs" / apo_runs.run_name(policy, 0)
        kept.mkdir(parents=True)
        record = {"config": json.loads(json.dumps(dataclasses.asdict(config), default=str))}
        (kept / "results.json").write_text(
            json.dumps({**record, "test": {"trained": {"success": len(policy)}}})
        )
    monkeypatch.setattr(apo_runs, "run_pipeline", lambda config: pytest.fail("trained in the parent"))
    runs = apo_runs.run_all(out, work, [0], overrides, side_by_side=True)
    assert {name: run["test"]["trained"]["success"] for name, run in runs.items()} == {
        "apo-seed0": 3,
        "grpo-seed0": 4,
    }


def test_only_full_fine_tuning_runs_with_checkpoints_draw_a_test_curve(tmp_path):
    """Checkpoints of a LoRA run hold adapters, which the curve's evaluation cannot read: such a
    run resumes from them but is not asked for a curve; a greedy preset also asks for sampled."""
    for preset, overrides, curve in [
        ("cpu-demo", {}, True),
        ("cpu-demo", {"checkpoint_every": 0}, False),
        ("smollm2-cpu", {"checkpoint_every": 2}, False),
        ("smollm2-cpu", {"checkpoint_every": 2, "lora_rank": 0}, True),
    ]:
        config = apo_runs.run_config(preset, overrides, 0, "apo", tmp_path, tmp_path)
        expected = ["test", "test_sampled"] + (["test_curve"] if curve else [])
        assert apo_runs.needed_entries(config, "apo") == expected, (preset, overrides)


def test_a_run_of_more_steps_goes_on_from_a_shorter_runs_checkpoint(tmp_path):
    from apo_agent.runtime.checkpoints import checkpoint_dir

    config = TrainConfig.from_preset("cpu-demo", output_dir=str(tmp_path), steps=96)
    assert not apo_runs.can_resume(config)  # no checkpoint yet
    folder = checkpoint_dir(tmp_path, 96)
    folder.mkdir(parents=True)
    stored = json.loads(json.dumps(dataclasses.asdict(config), default=str))
    torch.save({"step": 96, "config": stored}, folder / "state.pt")
    assert apo_runs.can_resume(config)
    assert apo_runs.can_resume(dataclasses.replace(config, steps=400, torch_threads=2))
    # A shorter run would end before the checkpoint; other training settings are another run.
    assert not apo_runs.can_resume(dataclasses.replace(config, steps=64))
    assert not apo_runs.can_resume(dataclasses.replace(config, steps=400, learning_rate=1e-3))


def test_only_keep_policy_copies_a_policy_into_the_record(tmp_path, monkeypatch):
    """A policy is a few MB of weights: one record keeps it (the `apo` agent's), not every comparison."""

    def fake_pipeline(config):
        folder = Path(config.output_dir)
        (folder / "final-model").mkdir(parents=True)
        (folder / "config.json").write_text("{}")
        (folder / "metrics.csv").write_text("step,episodes\n1,32\n")
        run = fake_run(20.0, 30.0 + config.seed, 512, 1.0, cpu=(10.0, 20.0))
        return {**run, "config": json.loads(json.dumps(dataclasses.asdict(config), default=str))}

    monkeypatch.setattr(apo_runs, "run_pipeline", fake_pipeline)
    sampled = {"reference": {"success": 20.0, "score": 60.0}, "trained": {"success": 25.0, "score": 65.0}}
    monkeypatch.setattr(apo_runs, "evaluate_sampled", lambda config, run: sampled)
    curve = [CurvePoint(0.0, 0, 20.0, 0.0), CurvePoint(5.0, 64, 30.0, 4.0)]
    monkeypatch.setattr(apo_runs, "success_curve", lambda config, run: curve)
    out, work = tmp_path / "out", tmp_path / "work"
    arguments = ["--seeds", "0", "1", "--algorithms", "apo", "--out", str(out), "--work", str(work)]
    apo_cli.main([*arguments, "--set", "steps=2"])
    assert (out / "results.md").is_file() and not (out / "policy").exists()
    apo_cli.main([*arguments, "--set", "steps=2", "--report-only", "--keep-policy"])
    assert (out / "policy" / "final-model").is_dir()
