"""The thin ``llm`` and ``apo`` agents play exactly as the agents they replaced.

``data/agents-before-one-stack.json`` was written by the benchmark agents as they were before
they became factories over `apo_agent.agent` (commit 7f335a3, their own backends, mask and
budget): per episode, each step's raw answer and action, and the return. The committed tiny
A*PO policy (benchmarks/results/apo/policy, the one the recorded ``apo-mini-test`` result
played) greedy and sampled, and the tiny chat model under five decoding set-ups, each with
and without prefix reuse. The episodes are played here without the runner, so the check
depends only on the agents and the env.
"""

from __future__ import annotations

import json
from pathlib import Path

import gymnasium as gym
import pytest

import webshop_gym  # noqa: F401  (registers the env ids)
from benchmarks.harness.agents import make_factory
from benchmarks.harness.agents.apo import DEFAULT_RUN

BEFORE = json.loads((Path(__file__).parent / "data" / "agents-before-one-stack.json").read_text())

LLM_SETUPS = {
    "free-think": {"think": "true", "max_new_tokens": "8"},
    "constrained-think-h1": {
        "think": "true",
        "constrained": "true",
        "history_turns": "1",
        "max_new_tokens": "8",
    },
    "constrained-instruction": {
        "think": "false",
        "constrained": "true",
        "search_query": "instruction",
        "max_new_tokens": "4",
    },
    "constrained-free-query": {"think": "false", "constrained": "true", "max_new_tokens": "10"},
    "sampled-constrained": {
        "think": "false",
        "constrained": "true",
        "temperature": "1.0",
        "max_new_tokens": "10",
    },
}


def play(make_agent, goals, max_steps=15):
    """Each goal of the mini test split once, seeded by its index: raw answers, actions, return."""
    env = gym.make("WebShop-Mini-Text-v0", split="test", max_steps=max_steps)
    episodes = []
    for goal in goals:
        agent = make_agent()
        observation, info = env.reset(seed=goal, options={"goal_index": goal})
        agent.reset(seed=goal)
        steps, total, done = [], 0.0, False
        while not done:
            action = agent.act(observation, info)
            steps.append([agent.last_output, action])
            observation, reward, terminated, truncated, info = env.step(action)
            total += reward
            done = terminated or truncated
        episodes.append({"goal": goal, "steps": steps, "reward": total})
    return episodes


@pytest.mark.parametrize("temperature", ["0", "1"], ids=["greedy", "sampled"])
def test_apo_agent_plays_the_committed_policy_as_before(temperature):
    make_agent = make_factory("apo", {"run": str(DEFAULT_RUN), "temperature": temperature})
    assert play(make_agent, range(4)) == BEFORE[f"apo-t{temperature}"]


@pytest.mark.parametrize("reuse", ["true", "false"])
@pytest.mark.parametrize("setup", sorted(LLM_SETUPS))
def test_llm_agent_answers_as_before(tiny_chat_model, setup, reuse):
    options = {"model": str(tiny_chat_model), "cpu_threads": "1", "reuse_prefix": reuse, **LLM_SETUPS[setup]}
    episodes = play(make_factory("llm", options), range(2), max_steps=6)
    assert episodes == BEFORE[f"llm-{setup}-reuse-{reuse}"]
