"""Tuning reads the dev split only, and picks the best dev success (ties: the smaller value)."""

from __future__ import annotations

import pytest

import benchmarks.apo_tuning as apo_tuning
from benchmarks.apo_tuning import dev_success, parse_grid, tune


def test_a_grid_is_algorithm_field_and_typed_values():
    assert parse_grid("apo:beta2=0.001,0.01") == ("apo", "beta2", [0.001, 0.01])
    assert parse_grid("grpo:grpo_kl_coef=0.04") == ("grpo", "grpo_kl_coef", [0.04])
    with pytest.raises(ValueError, match="ALGORITHM:FIELD=V1,V2"):
        parse_grid("ppo:beta2=0.1")


def write_dev_metrics(folder, before, after):
    folder.mkdir(parents=True)
    rows = ["step,episodes,eval/success,charts/success", f"0,0,{before},"]
    rows += [f"{step},{32 * step},,0.3" for step in (1, 2)] + [f"3,96,{after},0.4"]
    (folder / "metrics.csv").write_text("\n".join(rows) + "\n")


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
        write_dev_metrics(work / f"apo-seed{seeds[0]}", 0.2, dev_after[overrides["beta2"]])
        return {}

    monkeypatch.setattr(apo_tuning, "run_all", train_one)
    table, chosen = tune("apo", "beta2", [0.001, 0.01, 0.03], 0, tmp_path / "work", tmp_path / "shared")
    assert chosen == 0.01
    assert [t[0] for t in trained] == [0.001, 0.01, 0.03]
    assert all(t[1:] == (["apo"], [0], tmp_path / "shared") for t in trained)
    assert "| 0.01 | 20.0 | 34.0 | +14.0 | **yes** |" in table
    assert "| 0.03 | 20.0 | 34.0 | +14.0 |  |" in table


def test_a_tie_with_the_presets_own_value_keeps_it(tmp_path, monkeypatch):
    # The preset's learning rate is 2e-4: a tied 1e-4 does not win on dev, so nothing changes.
    dev_after = {0.0001: 0.39, 0.0002: 0.39, 0.0004: 0.38}

    def train_one(out, work, seeds, overrides, algorithms, shared):
        write_dev_metrics(work / f"apo-seed{seeds[0]}", 0.24, dev_after[overrides["learning_rate"]])
        return {}

    monkeypatch.setattr(apo_tuning, "run_all", train_one)
    values = [0.0001, 0.0002, 0.0004]
    _, chosen = tune("apo", "learning_rate", values, 0, tmp_path / "work", tmp_path / "shared")
    assert chosen == 0.0002
