"""Test-success curves along training: times to a target, checkpoint evaluations."""

from __future__ import annotations

import json
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest
import torch

from benchmarks.training.apo_curves import (
    CurvePoint,
    plot_curves,
    success_curve,
    time_to_reach,
)


def test_the_cost_to_reach_a_target_is_interpolated_between_evaluations():
    points = [CurvePoint(0, 0, 20.0), CurvePoint(50, 100, 20.0), CurvePoint(150, 200, 40.0)]
    assert time_to_reach(points, 30.0) == 100.0
    assert time_to_reach(points, 30.0, "episodes") == 150.0
    assert time_to_reach(points, 20.0) == 0.0  # pi_ref is already there
    assert time_to_reach(points, 45.0) is None


def curve(seconds, episodes, successes):
    return [CurvePoint(s, e, y) for s, e, y in zip(seconds, episodes, successes, strict=True)]


def test_the_curves_plot(tmp_path):
    curves = {"apo": {0: curve([0, 10], [0, 32], [20, 30])}, "grpo": {0: curve([0, 5], [0, 32], [20, 25])}}
    png = plot_curves(curves, {"apo": "A*PO", "grpo": "GRPO"}, tmp_path / "curves.png")
    assert png.read_bytes().startswith(b"\x89PNG")


@pytest.fixture
def run_with_checkpoints(tmp_path):
    """A run folder as the trainer leaves it: pi_ref saved, metrics for 4 steps, checkpoints at 2 and 4."""
    from apo_agent.config import TrainConfig
    from apo_agent.model.policy import LMPolicy
    from apo_agent.model.tiny import build_tiny_model, product_ids, shop_texts, train_tokenizer
    from apo_agent.runtime.checkpoints import save_checkpoint

    env = gym.make("WebShop-Mini-Text-v0", split="train")
    tokenizer = train_tokenizer(shop_texts(env)[:300], vocab_size=500, whole_tokens=product_ids(env))
    torch.manual_seed(0)
    policy = LMPolicy(
        build_tiny_model(tokenizer, hidden_size=32, layers=1, heads=2), tokenizer, torch.device("cpu")
    )
    policy.save(tmp_path / "reference")
    config = TrainConfig.from_preset(
        "cpu-demo",
        output_dir=str(tmp_path / "run"),
        steps=4,
        checkpoint_every=2,
        test_goals=3,
        max_new_tokens=12,
    )
    optimizer = torch.optim.AdamW(policy.trainable_parameters())
    for step in (2, 4):
        save_checkpoint(config.output_dir, step, policy, optimizer, np.random.default_rng(0), {}, {})
    rows = ["step,episodes,wall_time_s,cpu_time_s,charts/success", "0,0,0.0,0.0,"]
    rows += [f"{step},{32 * step},{10.0 * step},{8.0 * step},0.5" for step in (1, 2, 3, 4)]
    (tmp_path / "run" / "metrics.csv").write_text("\n".join(rows) + "\n")
    run = {
        "reference_model": str(tmp_path / "reference"),
        "test": {"reference": {"success": 20.0}, "trained": {"success": 33.0}},
        "stage1_episodes": 100,
        "wall_time_s": {"stage1": 500.0},
        "cpu_time_s": {"stage1": 400.0},
    }
    return config, run


def test_a_run_is_evaluated_at_each_checkpoint_once(run_with_checkpoints, monkeypatch):
    config, run = run_with_checkpoints
    points = success_curve(config, run)
    # pi_ref at zero, pi_ref after Stage 1, then the checkpoints: Stage 1's cost counts on.
    assert [(p.seconds, p.episodes) for p in points] == [(0.0, 0), (500.0, 100), (520.0, 164), (540.0, 228)]
    assert [p.cpu_seconds for p in points] == [0.0, 400.0, 416.0, 432.0]
    assert points[0].success == points[1].success == 20.0
    assert 0.0 <= points[2].success <= 100.0
    assert points[3].success == 33.0  # the final model: the pipeline's own test result
    cached = json.loads((Path(config.output_dir) / "test-curve.json").read_text())
    assert list(cached["successes"]) == ["2"]

    import apo_agent.evaluation

    def must_not_run(*args, **kwargs):
        raise AssertionError("the checkpoint was evaluated again")

    monkeypatch.setattr(apo_agent.evaluation, "evaluate", must_not_run)
    assert success_curve(config, run) == points
