"""The reference policies through the public step API."""

from __future__ import annotations

import numpy as np

from webshop_gym.agents.scripted import ExpertPolicy, RulePolicy, run_episode
from webshop_gym.envs import WebShopEnv


def evaluate(env, policy_cls):
    results = [
        run_episode(
            env, policy_cls(env) if policy_cls is ExpertPolicy else policy_cls(), seed=0, goal_index=i
        )
        for i in range(len(env.goal_indices))
    ]
    return np.mean([r["success"] for r in results]), 100 * np.mean([r["score"] for r in results])


def test_expert_reaches_full_reward_on_at_least_95_percent_of_mini_test_goals():
    env = WebShopEnv(split="test")
    success, score = evaluate(env, ExpertPolicy)
    assert success >= 0.95, f"expert success {success:.1%}"
    assert score >= 95.0


def test_rule_baseline_is_far_below_the_expert():
    env = WebShopEnv(split="test")
    success, score = evaluate(env, RulePolicy)
    assert 0.0 < score < 95.0
    assert success < 0.95


def test_expert_on_real_1k_synthetic_goals(webshop_1k):
    env = WebShopEnv(catalog=str(webshop_1k), goals="synthetic", split="test")
    results = [run_episode(env, ExpertPolicy(env), seed=0, goal_index=i) for i in range(0, 500, 10)]
    assert np.mean([r["score"] for r in results]) > 0.8
