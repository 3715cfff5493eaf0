"""DiscreteActions (slots, masks, hashed-text features) and the text page readers."""

from __future__ import annotations

import pickle
import warnings

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

import webshop_gym  # noqa: F401
from webshop_gym.agents.pages import instruction_query, price_bounds, read_item, read_results
from webshop_gym.agents.scripted import ExpertPolicy
from webshop_gym.wrappers import DiscreteActions, EncoderConfig, encode


@pytest.fixture
def env():
    return DiscreteActions(gym.make("WebShop-Mini-Text-v0", split="test"))


def test_check_env_passes(env):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        check_env(env, skip_render_check=True)
    # The only warning is the checker's advice to check unwrapped envs; this is a wrapper on purpose.
    assert [str(w.message) for w in caught if "different from the unwrapped" not in str(w.message)] == []


def test_mask_marks_exactly_the_available_actions(env):
    features, info = env.reset(seed=0, options={"goal_index": 1})
    for _ in range(4):
        mask = env.action_masks()
        assert mask.sum() == len(info["available_actions"])
        assert mask[: len(info["available_actions"])].all()
        assert np.array_equal(mask, info["action_mask"])
        assert env.observation_space.contains(features)
        features, _, terminated, truncated, info = env.step(int(np.flatnonzero(mask)[-1]))
        if terminated or truncated:
            break


def test_search_slot_searches_the_instruction_keywords(env):
    _, info = env.reset(seed=0, options={"goal_index": 0})
    _, _, _, _, info = env.step(0)
    assert info["action"] == f"search[{instruction_query(info['instruction'])}]"
    assert "price lower than" not in info["action"]
    assert info["page"] == "results" and info["action_error"] == ""


def test_other_observation_modes_are_refused_with_a_clear_error():
    with pytest.raises(ValueError, match="observation_mode='text'"):
        DiscreteActions(gym.make("WebShop-Mini-Text-v0", observation_mode="text_rich"))
    with pytest.raises(ValueError, match="max_actions >= 2"):
        EncoderConfig(max_actions=1)


def test_empty_slot_is_a_reported_invalid_action_that_counts(env):
    _, info = env.reset(seed=0, options={"goal_index": 0})
    _, reward, terminated, truncated, info = env.step(env.config.max_actions - 1)
    assert info["action_error"] and reward == 0.0 and not (terminated or truncated)
    assert info["page"] == "search" and info["steps_left"] == env.unwrapped.max_steps - 1


def test_features_are_a_pure_function_of_the_text(env):
    """What the wrapper returns equals `encode` of the text observation and info it wraps."""
    features, info = env.reset(seed=0, options={"goal_index": 2})
    for slot in (0, 2, 0):
        again, mask, actions = encode(info["text_observation"], info, env.config)
        assert np.array_equal(features, again) and np.array_equal(mask, info["action_mask"])
        assert len(actions) == mask.sum()
        features, *_, info = env.step(slot)


def test_product_slots_score_the_goal_product_higher_than_unrelated_ones():
    base = gym.make("WebShop-Mini-Text-v0", split="test")
    observation, info = base.reset(seed=0, options={"goal_index": 3})
    observation, *_, info = base.step(f"search[{instruction_query(info['instruction'])}]")
    config = EncoderConfig()
    features, _, actions = encode(observation, info, config)
    slots = features[-config.max_actions * config.slot_features :].reshape(config.max_actions, -1)
    coverage = {actions[i]: slots[i, 9] for i in range(len(actions)) if actions[i].startswith("click[b0")}
    # The results hold desk lamps and unrelated earbuds; lamps cover the instruction better.
    titles = {e.asin: e.title for e in read_results(observation, info["available_actions"])}
    lamp = max(coverage[f"click[{a}]"] for a, t in titles.items() if "Lamp" in t)
    other = max(coverage[f"click[{a}]"] for a, t in titles.items() if "Lamp" not in t)
    assert lamp > other


def test_readers_agree_with_the_catalogue(env):
    base = gym.make("WebShop-Mini-Text-v0", split="test")
    catalog = base.unwrapped.catalog
    observation, info = base.reset(seed=0, options={"goal_index": 5})
    observation, *_, info = base.step("search[insulated tumbler]")
    entries = read_results(observation, info["available_actions"])
    assert len(entries) == 10
    for entry in entries:
        product = catalog[entry.asin.upper()]
        assert (entry.title, entry.price) == (product.title, product.price)
    observation, *_, info = base.step(f"click[{entries[0].asin}]")
    item = read_item(observation, info["available_actions"])
    product = catalog[entries[0].asin.upper()]
    assert item is not None and item.title == product.title
    assert {k: list(v) for k, v in item.options.items()} == {k: list(v) for k, v in product.options.items()}
    assert read_item(observation, ["click[< prev]"]) is None  # not an item page without Buy Now


def test_readers_never_raise_on_odd_text():
    for text in ("", "[SEP]", "Next > [SEP] ", "< Prev [SEP] Price: ", "\x00" * 10):
        assert read_results(text, ["click[buy now]"]) == []
        assert read_item(text, ["click[buy now]"]) is None or read_item(text, ["click[buy now]"]).title == ""
    assert price_bounds("free") is None


def test_expert_run_through_slots_succeeds(env):
    """The action strings of the slots are the env's actions: an expert can play through them."""
    _, info = env.reset(seed=0, options={"goal_index": 0})
    expert = ExpertPolicy(env)
    for _ in range(env.unwrapped.max_steps):
        wanted = expert.act(info["text_observation"], info)
        if wanted.startswith("search["):
            slot = 0
        else:
            slot = [a.lower() for a in info["available_actions"]].index(wanted.lower())
        _, _, terminated, truncated, info = env.step(slot)
        if terminated or truncated:
            break
    assert terminated and info["success"]


def test_wrapper_pickles_mid_episode(env):
    env.reset(seed=0, options={"goal_index": 0})
    env.step(0)
    clone = pickle.loads(pickle.dumps(env))
    a = env.step(2)
    b = clone.step(2)
    assert np.array_equal(a[0], b[0]) and a[1:4] == b[1:4]
