"""The imperfect demonstrator and the supervised warm start that makes pi_ref."""

from __future__ import annotations

import dataclasses
import random

import gymnasium as gym
import pytest
import torch

from apo_agent.model.policy import LMPolicy
from apo_agent.model.tiny import build_tiny_model, product_ids
from apo_agent.rollout.tokens import PromptEncoder
from apo_agent.warm_start import (
    NoisyExpert,
    collect_demonstrations,
    option_variant,
    supervised_warm_start,
)
from shared_prompts import PromptConfig
from webshop_gym.actions import clicked_product
from webshop_gym.agents.scripted import run_episode


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


def test_an_option_variant_names_other_values_of_the_same_option():
    world = gym.make("WebShop-Mini-Text-v0", split="train").unwrapped
    rng = random.Random(0)
    changed = 0
    for index in world.goal_indices[:60]:
        goal = world.all_goals[index]
        variant = option_variant(goal, world.catalog, rng)
        if not goal.goal_options:
            assert variant is None
            continue
        product = world.catalog.get(goal.asin)
        for old, new in zip(goal.goal_options, variant.goal_options, strict=True):
            group = next(values for values in product.options.values() if old in values)
            assert new in [value.lower() for value in group]
            assert new in variant.instruction_text
        assert (variant.asin, variant.attributes, variant.price_upper) == (
            goal.asin,
            goal.attributes,
            goal.price_upper,
        )
        changed += variant.goal_options != tuple(value.lower() for value in goal.goal_options)
    assert changed >= 20


def test_option_variants_without_named_options_are_skipped():
    world = gym.make("WebShop-Mini-Text-v0", split="train").unwrapped
    goal = next(world.all_goals[i] for i in world.goal_indices if world.all_goals[i].goal_options)
    unnamed = dataclasses.replace(goal, instruction_text="i want it")
    assert option_variant(unnamed, world.catalog, random.Random(0)) is None
    assert (
        option_variant(dataclasses.replace(goal, asin="B0NOTTHERE"), world.catalog, random.Random(0)) is None
    )


def test_option_variant_demonstrations_are_product_page_turns_that_choose_the_new_options(tokenizer):
    envs = [gym.make("WebShop-Mini-Text-v0", split="train") for _ in range(4)]
    goals_before = envs[0].unwrapped.all_goals
    encoder = PromptEncoder(
        tokenizer, PromptConfig(think=False, max_observation_chars=120), "last_observation", False, 512
    )
    goals = list(range(10))
    with_options = sum(bool(goals_before[envs[0].unwrapped.goal_indices[g]].goal_options) for g in goals)
    demonstrations = collect_demonstrations(
        envs, encoder, goals, skip_options_prob=0.0, random_action_prob=0.3, option_variants=2, progress=False
    )
    detours = {"click[< prev]", "click[back to search]", "click[next >]"}
    detours |= {"click[description]", "click[features]", "click[reviews]"}
    assert envs[0].unwrapped.all_goals is goals_before  # the envs play their own goals again
    plain, variants = demonstrations[:10], demonstrations[10:]
    assert len(variants) == 2 * with_options
    assert all(episode.actions[0].startswith("search[") for episode in plain)
    for episode in variants:
        assert episode.actions and episode.actions[-1] == "click[buy now]"
        assert len(episode.sequences) == len(episode.actions)
        assert not any(a.startswith("search[") or clicked_product(a) or a in detours for a in episode.actions)
        assert len(episode.actions) >= 2  # at least one option, then buy
    assert sum(episode.success for episode in variants) >= 0.8 * len(variants)
    assert any(set(episode.actions) & detours for episode in plain)  # random clicks in the goals' own


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
