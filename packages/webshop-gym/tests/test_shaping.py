"""The shaped reward: dense, but nothing to farm."""

from __future__ import annotations

import pytest

from webshop_gym.agents.scripted import ExpertPolicy, run_episode
from webshop_gym.envs import WebShopEnv


def test_search_loop_earns_no_net_shaped_reward():
    env = WebShopEnv(split="test", reward="shaped", max_steps=15)
    _, info = env.reset(seed=0, options={"goal_index": 0})
    query = f"search[{info['instruction']}]"
    rewards = []
    for _ in range(7):
        rewards.append(env.step(query)[1])
        rewards.append(env.step("click[back to search]")[1])
    assert rewards[0] > 0  # the results page holds good products: dense signal
    assert sum(rewards) == pytest.approx(0.0, abs=1e-9)
    *_, truncated, _ = env.step(query)
    assert truncated


def test_search_loop_with_discount_loses():
    env = WebShopEnv(split="test", reward="shaped", shaping_discount=0.9)
    _, info = env.reset(seed=0, options={"goal_index": 0})
    total = sum(env.step(a)[1] for a in [f"search[{info['instruction']}]", "click[back to search]"] * 3)
    assert total < 0


@pytest.mark.parametrize("goal_index", range(10))
def test_shaped_return_equals_original_return(goal_index):
    original = WebShopEnv(split="test")
    shaped = WebShopEnv(split="test", reward="shaped")
    a = run_episode(original, ExpertPolicy(original), seed=0, goal_index=goal_index)
    b = run_episode(shaped, ExpertPolicy(shaped), seed=0, goal_index=goal_index)
    assert b["return"] == pytest.approx(a["return"], abs=1e-9)
    assert b["score"] == a["score"]


def test_shaped_rewards_are_dense_along_the_expert_path():
    env = WebShopEnv(split="test", reward="shaped")
    observation, info = env.reset(seed=0, options={"goal_index": 1})
    expert, rewards, done = ExpertPolicy(env), [], False
    while not done:
        observation, reward, terminated, truncated, info = env.step(expert.act(observation, info))
        rewards.append(reward)
        done = terminated or truncated
    assert sum(r != 0 for r in rewards[:-1]) >= 1


def test_binary_reward_is_one_exactly_on_success():
    env = WebShopEnv(split="test", reward="binary")
    for goal_index in range(5):
        result = run_episode(env, ExpertPolicy(env), seed=0, goal_index=goal_index)
        assert result["return"] == (1.0 if result["success"] else 0.0)
    rule = run_episode(env, _BuyFirstOption(), seed=0, goal_index=0)
    assert rule["return"] == (1.0 if rule["success"] else 0.0)


class _BuyFirstOption:
    def act(self, observation, info):
        if info["page"] == "search":
            return "search[gift]"
        if info["page"] == "results":
            return next(
                a for a in info["available_actions"] if a not in ("click[back to search]", "click[next >]")
            )
        return "click[buy now]"
