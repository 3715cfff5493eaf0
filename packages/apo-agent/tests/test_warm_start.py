"""The imperfect demonstrator and the supervised warm start that makes pi_ref."""

from __future__ import annotations

import random

import gymnasium as gym
import pytest
import torch

from apo_agent.context import PromptEncoder
from apo_agent.policy import LMPolicy
from apo_agent.tiny import build_tiny_model, product_ids
from apo_agent.warm_start import NoisyExpert, collect_demonstrations, supervised_warm_start
from shared_prompts import PromptConfig
from webshop_gym.actions import clicked_product
from webshop_gym.policies import run_episode


def play(skip_options_prob, random_action_prob, goals=range(40)):
    env = gym.make("WebShop-Mini-Text-v0", split="train")
    expert = NoisyExpert(env, skip_options_prob, random_action_prob, random.Random(0))
    return [run_episode(env, expert, seed=g, goal_index=g) for g in goals]


def test_without_noise_the_demonstrator_mostly_succeeds():
    results = play(0.0, 0.0)
    assert sum(r["success"] for r in results) / len(results) >= 0.6
    assert all(r["steps"] <= 6 for r in results)  # search, open, options, buy: no page scanning


def test_skipping_options_costs_success():
    careful, hasty = play(0.0, 0.0), play(1.0, 0.0)
    assert sum(r["success"] for r in hasty) < sum(r["success"] for r in careful)
    assert all(not r.get("purchased_options") for r in hasty)


def test_on_a_results_page_it_opens_a_product_that_is_on_the_page():
    env = gym.make("WebShop-Mini-Text-v0", split="train")
    expert = NoisyExpert(env, 0.0, 0.0, random.Random(0))
    for goal in range(20):
        observation, info = env.reset(seed=goal, options={"goal_index": goal})
        observation, _, _, _, info = env.step(expert.act(observation, info))
        action = expert.act(observation, info)
        assert clicked_product(action) and action in info["available_actions"]


def test_the_first_result_variant_always_opens_the_first_product():
    env = gym.make("WebShop-Mini-Text-v0", split="train")
    expert = NoisyExpert(env, 0.0, 0.0, random.Random(0), product="first")
    goal_or_first = NoisyExpert(env, 0.0, 0.0, random.Random(0))
    differs = 0
    for goal in range(20):
        observation, info = env.reset(seed=goal, options={"goal_index": goal})
        observation, _, _, _, info = env.step(expert.act(observation, info))
        products = [a for a in info["available_actions"] if clicked_product(a)]
        assert expert.act(observation, info) == products[0]
        differs += goal_or_first.act(observation, info) != products[0]
    assert differs  # the goal's product is not always the first result


def test_an_unknown_product_rule_is_refused():
    env = gym.make("WebShop-Mini-Text-v0", split="train")
    with pytest.raises(ValueError, match="goal_or_first"):
        NoisyExpert(env, 0.0, 0.0, random.Random(0), product="best")  # type: ignore[arg-type]


def test_warm_start_lowers_the_loss_on_demonstrations(tokenizer):
    envs = [gym.make("WebShop-Mini-Text-v0", split="train", max_steps=6) for _ in range(4)]
    encoder = PromptEncoder(
        tokenizer, PromptConfig(think=False, max_observation_chars=120), "last_observation", False, 512
    )
    demonstrations = collect_demonstrations(
        envs, encoder, list(range(12)), skip_options_prob=0.5, random_action_prob=0.0, progress=False
    )
    assert len(demonstrations) == 12
    for episode in demonstrations:
        for sequence in episode.sequences:  # the answer is the only agent text, and it ends the turn
            answer = [t for t, agent in zip(sequence.ids, sequence.agent_mask, strict=True) if agent]
            assert tokenizer.decode(answer).startswith("<action>") and answer[-1] == tokenizer.eos_token_id
    torch.manual_seed(0)
    model = build_tiny_model(
        tokenizer, hidden_size=32, layers=1, heads=2, product_tokens=product_ids(envs[0])
    )
    policy = LMPolicy(model, tokenizer, torch.device("cpu"))
    sequences = [s for episode in demonstrations for s in episode.sequences]
    losses = supervised_warm_start(
        policy, sequences, epochs=8, learning_rate=1e-2, batch_size=8, progress=False
    )
    assert sum(losses[-3:]) / 3 < 0.6 * sum(losses[:3]) / 3


def test_product_ids_share_an_embedding_direction(tokenizer):
    env = gym.make("WebShop-Mini-Text-v0", split="train")
    torch.manual_seed(0)
    model = build_tiny_model(tokenizer, hidden_size=64, layers=1, heads=2, product_tokens=product_ids(env))
    embeddings = model.get_input_embeddings().weight
    ids = tokenizer.convert_tokens_to_ids(product_ids(env)[:50])
    products = torch.nn.functional.normalize(embeddings[ids], dim=1)
    others = torch.nn.functional.normalize(embeddings[100:150], dim=1)
    assert (products @ products.T).mean() > 0.3 > (others @ others.T).mean()
