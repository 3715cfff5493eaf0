"""Tuning reads the dev split only, and picks the best dev success (ties: the smaller value)."""

from __future__ import annotations

import dataclasses
import json

import pytest

import benchmarks.training.apo_tuning as apo_tuning
from benchmarks.training.apo_compare.runs import run_config
from benchmarks.training.apo_tuning import (
    Grid,
    GridRun,
    dev_success,
    grid_lines,
    parse_grid,
    reuse_identical_run,
    tune,
)


def test_a_grid_is_algorithm_field_and_typed_values():
    assert parse_grid("apo:beta2=0.001,0.01") == ("apo", "beta2", [0.001, 0.01])
    assert parse_grid("grpo:grpo_kl_coef=0.04") == ("grpo", "grpo_kl_coef", [0.04])
    with pytest.raises(ValueError, match="ALGORITHM:FIELD=V1,V2"):
        parse_grid("ppo:beta2=0.1")


def write_dev_metrics(folder, before, after, kl=1.5):
    folder.mkdir(parents=True)
    rows = [
        "step,episodes,eval/success,charts/success,losses/loss,losses/kl,charts/token_entropy",
        f"0,0,{before},,,,",
    ]
    rows += [f"{step},{32 * step},,0.3,0.1,{kl - 1},0.5" for step in (1, 2)] + [
        f"3,96,{after},0.4,0.1,{kl + 2},0.2"
    ]
    (folder / "metrics.csv").write_text("\n".join(rows) + "\n")


def fake_run(out, seeds, before, after, algorithm="apo"):
    """What `run_all` leaves for one run: the kept metrics and the record it returns."""
    write_dev_metrics(out / "runs" / f"{algorithm}-seed{seeds[0]}", before, after)
    return {f"{algorithm}-seed{seeds[0]}": {"cpu_time_s": {"stage1": 100.0, "stage2": 250.0}}}


def test_dev_success_is_read_before_the_first_step_and_after_the_last(tmp_path):
    write_dev_metrics(tmp_path / "run", 0.2, 0.35)
    assert dev_success(tmp_path / "run") == pytest.approx((20.0, 35.0))
    (tmp_path / "bare").mkdir()
    (tmp_path / "bare" / "metrics.csv").write_text("step,episodes,charts/success\n1,32,0.5\n")
    with pytest.raises(ValueError, match="no dev evaluation"):
        dev_success(tmp_path / "bare")


def test_the_best_dev_success_is_chosen_and_ties_go_to_the_smaller_value(tmp_path, monkeypatch):
    dev_after = {0.001: 0.30, 0.01: 0.34, 0.03: 0.34}
    trained = []

    def train_one(out, work, seeds, overrides, algorithms, shared):  # stands in for the runs
        trained.append((overrides["beta2"], algorithms, seeds, shared))
        return fake_run(out, seeds, 0.2, dev_after[overrides["beta2"]])

    monkeypatch.setattr(apo_tuning, "run_all", train_one)
    grid = tune("apo", "beta2", [0.001, 0.01, 0.03], 0, tmp_path / "work", tmp_path / "shared")
    assert grid.chosen == 0.01 and (grid.algorithm, grid.field) == ("apo", "beta2")
    assert [t[0] for t in trained] == [0.001, 0.01, 0.03]
    assert all(t[1:] == (["apo"], [0], tmp_path / "shared") for t in trained)
    # log-ratio and entropy: the mean of the last steps (here all 3); CPU: Stage 1, then in all
    assert [run.value for run in grid.runs] == [0.001, 0.01, 0.03]
    for run in grid.runs[1:]:
        assert (run.dev_before, run.dev_after, run.gain) == pytest.approx((20.0, 34.0, 14.0))
        assert (run.log_ratio, run.entropy) == pytest.approx((1.5, 0.4))
        assert (run.stage1_cpu_s, run.training_cpu_s) == (100.0, 350.0)


def test_a_grid_is_rendered_as_its_table_and_choice():
    runs = [
        GridRun(0.01, 20.0, 34.0, 1.5, 0.4, 100.0, 350.0),
        GridRun(0.03, 20.0, 34.0, 1.5, 0.4, 100.0, 350.0),
    ]
    assert grid_lines(Grid("apo", "beta2", runs, 0.01, at={"learning_rate": 0.0002})) == [
        "| A*PO beta2 | dev success of pi_ref % | dev success after training % | gain | "
        "log pi/pi_ref per episode (last 10 steps) | entropy per token (nats) | Stage 1 CPU s | "
        "training CPU s | chosen |",
        "|---|---|---|---|---|---|---|---|---|",
        "| 0.01 | 20.0 | 34.0 | +14.0 | 1.50 | 0.400 | 100 | 350 | **yes** |",
        "| 0.03 | 20.0 | 34.0 | +14.0 | 1.50 | 0.400 | 100 | 350 |  |",
        "",
        "Chosen: `beta2=0.01` (at learning_rate=0.0002).",
    ]


def test_a_tie_with_the_presets_own_value_keeps_it(tmp_path, monkeypatch):
    # The preset's learning rate is 2e-4: a tied 1e-4 does not win on dev, so nothing changes.
    dev_after = {0.0001: 0.39, 0.0002: 0.39, 0.0004: 0.38}

    def train_one(out, work, seeds, overrides, algorithms, shared):
        return fake_run(out, seeds, 0.24, dev_after[overrides["learning_rate"]])

    monkeypatch.setattr(apo_tuning, "run_all", train_one)
    values = [0.0001, 0.0002, 0.0004]
    assert tune("apo", "learning_rate", values, 0, tmp_path / "work", tmp_path / "shared").chosen == 0.0002


def test_a_grid_runs_at_the_values_earlier_grids_chose_and_a_set_never_hides_the_grid(tmp_path, monkeypatch):
    seen = []

    def train_one(out, work, seeds, overrides, algorithms, shared):
        seen.append(dict(overrides))
        if "learning_rate" in overrides:  # the second grid
            better = overrides["learning_rate"] == 0.0004
        else:
            better = overrides["group_size"] == 4
        return fake_run(out, seeds, 0.2, 0.4 if better else 0.3, algorithm="grpo")

    monkeypatch.setattr(apo_tuning, "run_all", train_one)
    grids = apo_tuning.main(
        [
            "--out",
            str(tmp_path / "tuning.md"),
            "--work",
            str(tmp_path / "work"),
            "--shared",
            str(tmp_path / "s"),
            "--set",
            "goals_per_step=16",
            "--set",
            "grpo:learning_rate=0.0001",
            "--grid",
            "grpo:group_size=4,8",
            "--grid",
            "grpo:learning_rate=0.0002,0.0004",
        ]
    )
    # the group-size grid runs at the --set learning rate; the learning-rate grid at the chosen G
    assert [(o["group_size"], o["grpo:learning_rate"]) for o in seen[:2]] == [(4, 0.0001), (8, 0.0001)]
    assert [(o["group_size"], o["learning_rate"]) for o in seen[2:]] == [(4, 0.0002), (4, 0.0004)]
    assert all("grpo:learning_rate" not in o for o in seen[2:])  # the grid's own value wins
    assert all(o["goals_per_step"] == 16 for o in seen)
    assert [(g.field, g.chosen, g.at) for g in grids] == [
        ("group_size", 4, {}),
        ("learning_rate", 0.0004, {"group_size": 4}),
    ]
    text = (tmp_path / "tuning.md").read_text()
    assert all("\n".join(grid_lines(grid)) in text for grid in grids)


def test_a_run_two_grids_share_trains_once(tmp_path):
    """The learning-rate grid's 2e-4 run is the beta2 grid's 1e-3 run: its record is copied."""
    config = run_config(
        "cpu-demo", {"learning_rate": 2e-4}, 0, "apo", tmp_path / "work" / "x", tmp_path / "s"
    )
    kept = tmp_path / "tuning" / "apo-learning_rate-0.0002" / "runs" / "apo-seed0"
    kept.mkdir(parents=True)
    record = {"config": json.loads(json.dumps(dataclasses.asdict(config), default=str))}
    (kept / "results.json").write_text(
        json.dumps({**record, "test": {}, "test_sampled": {}, "test_curve": []})
    )
    reuse_identical_run(tmp_path / "tuning", "apo-beta2-0.001", config)
    assert (tmp_path / "tuning" / "apo-beta2-0.001" / "runs" / "apo-seed0" / "results.json").is_file()
    reuse_identical_run(
        tmp_path / "tuning", "apo-learning_rate-0.0004", dataclasses.replace(config, learning_rate=4e-4)
    )
    assert not (tmp_path / "tuning" / "apo-learning_rate-0.0004").exists()
