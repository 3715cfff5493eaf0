"""stable-baselines3: SB3's env checker passes the wrapper; MaskablePPO trains and plays via the runner."""

from __future__ import annotations

import json

import gymnasium as gym
import numpy as np

import webshop_gym  # noqa: F401
from benchmarks.harness.agents import make_factory
from benchmarks.harness.run import env_spec, run_agent
from benchmarks.training.train_sb3 import TrainConfig, train
from webshop_gym.wrappers import DiscreteActions


def test_sb3_check_env_accepts_the_wrapper():
    from stable_baselines3.common.env_checker import check_env

    check_env(DiscreteActions(gym.make("WebShop-Mini-Text-v0", split="train")), warn=True)


def test_maskable_ppo_trains_and_plays_through_the_runner(tmp_path):
    config = TrainConfig(
        timesteps=256, n_envs=2, n_steps=64, batch_size=64, n_epochs=1, hidden=16, hash_dim=32,
        max_actions=32, eval_every=128, eval_episodes=2,
    )  # fmt: skip
    summary = train(config, tmp_path)
    assert summary["timesteps"] >= 256 and summary["train_episodes"] > 0
    rows = (tmp_path / "progress.csv").read_text().splitlines()
    assert rows[0].startswith("timesteps,minutes,train_episodes") and len(rows) >= 3
    assert (tmp_path / "learning_curve.png").stat().st_size > 1000
    assert json.loads((tmp_path / "encoder.json").read_text())["max_actions"] == 32

    make_agent = make_factory("sb3", {"policy": str(tmp_path / "policy.zip")})
    records = run_agent(
        "sb3", make_agent, env_spec("WebShop-Mini-Text-v0", "test"), episodes=2, n_envs=2, progress=False
    )
    for record in records:
        # A masked policy only ever picks listed actions.
        assert record["invalid_actions"] == 0 and 1 <= record["steps"] <= 15
    # Deterministic: the same policy plays the same episodes.
    again = run_agent(
        "sb3", make_agent, env_spec("WebShop-Mini-Text-v0", "test"), episodes=2, n_envs=2, progress=False
    )
    assert [s["action"] for s in records[0]["trajectory"][1:]] == [
        s["action"] for s in again[0]["trajectory"][1:]
    ]


def test_policy_weights_change_in_training(tmp_path):
    import torch
    from sb3_contrib import MaskablePPO

    env = DiscreteActions(gym.make("WebShop-Mini-Text-v0", split="train"))
    model = MaskablePPO("MlpPolicy", env, n_steps=64, batch_size=32, n_epochs=1, seed=0, device="cpu")
    before = [p.detach().clone() for p in model.policy.parameters()]
    model.learn(64)
    after = list(model.policy.parameters())
    assert any(not torch.equal(a, b) for a, b in zip(before, after, strict=True))
    assert np.all(np.isfinite(np.concatenate([p.detach().numpy().ravel() for p in after])))
