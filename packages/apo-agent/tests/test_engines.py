"""The rollout-engine seam with its transformers backend (the vLLM backend: test_vllm.py)."""

from __future__ import annotations

import gymnasium as gym
import pytest
import torch

import webshop_gym  # noqa: F401
from apo_agent.engines import RolloutEngine, TransformersEngine, as_engine, make_engine
from apo_agent.model.policy import LMPolicy
from apo_agent.rollout.episodes import collect_episodes
from apo_agent.rollout.tokens import EpisodeContext, PromptEncoder
from shared_prompts import PromptConfig


@pytest.fixture(scope="module")
def policy(tiny_model_dir):
    return LMPolicy.load(str(tiny_model_dir), device="cpu", with_reference=False)


def encoder_for(tokenizer, context="last_observation", constrain=False):
    config = PromptConfig(think=False, max_observation_chars=300)
    return PromptEncoder(tokenizer, config, context, False, 512, constrain_actions=constrain)


def test_a_policy_is_sampled_through_the_transformers_engine(policy):
    engine: RolloutEngine = as_engine(policy)
    assert isinstance(engine, TransformersEngine) and engine.tokenizer is policy.tokenizer
    assert as_engine(engine) is engine
    assert isinstance(make_engine("transformers", policy), TransformersEngine)
    with pytest.raises(ValueError, match="unknown rollout engine 'sglang'"):
        make_engine("sglang", policy)  # type: ignore[arg-type]


@pytest.mark.parametrize("constrain", [False, True])
def test_sampled_log_probs_are_what_training_scores(policy, constrain):
    """Token-out: the engine's log-prob of every sampled id equals `token_logprobs` on the
    recorded sequence (the restricted softmax under constrained decoding), at temperature 1."""
    torch.manual_seed(0)
    envs = [gym.make("WebShop-Mini-Text-v0", split="train", max_steps=3) for _ in range(3)]
    episodes = collect_episodes(
        TransformersEngine(policy),
        envs,
        encoder_for(policy.tokenizer, constrain=constrain),
        [(0, 0), (1, 1), (2, 2)],
        max_new_tokens=24,
        temperature=1.0,
        progress=False,
    )
    sequences = [s for e in episodes for s in e.sequences]
    recorded = [[lp for lp, agent in zip(s.logprobs, s.agent_mask, strict=True) if agent] for s in sequences]
    assert all(lp is not None for lps in recorded for lp in lps)
    assert all(
        lp is None for s in sequences for lp, agent in zip(s.logprobs, s.agent_mask, strict=True) if not agent
    )
    with torch.no_grad():
        scored = policy.token_logprobs(sequences)
    for lps, score in zip(recorded, scored, strict=True):
        assert lps == pytest.approx(score.tolist(), abs=1e-4)
    if constrain:
        assert any(a is not None for s in sequences for a in s.agent_allowed())


def test_full_context_prompts_grow_by_the_template_delta_only(policy):
    """Token-in: in ``context="full"`` each turn's prompt is the previous prompt, the sampled
    ids exactly as sampled, and the chat-template ids of the new observation."""
    prompts: list[list[int]] = []
    answers: list[list[int]] = []
    engine = TransformersEngine(policy)
    sample = engine.sample

    def recording_sample(batch, **kwargs):
        samples = sample(batch, **kwargs)
        prompts.append(list(batch[0]))
        answers.append(samples[0].ids)
        return samples

    engine.sample = recording_sample  # type: ignore[method-assign]
    envs = [gym.make("WebShop-Mini-Text-v0", split="train", max_steps=3)]
    encoder = encoder_for(policy.tokenizer, context="full")
    (episode,) = collect_episodes(
        engine, envs, encoder, [(4, 4)], max_new_tokens=12, temperature=1.0, progress=False
    )
    assert len(prompts) == episode.steps >= 2
    for turn in range(1, len(prompts)):
        before = prompts[turn - 1] + answers[turn - 1]
        assert prompts[turn][: len(before)] == before
    (sequence,) = episode.sequences
    assert sequence.ids == prompts[-1] + answers[-1]


def test_temperature_zero_is_greedy_with_the_log_probs_of_the_plain_softmax(policy):
    context = EpisodeContext(encoder_for(policy.tokenizer))
    prompt = context.prompt("Search", {"instruction": "red shoes", "available_actions": ["search[<query>]"]})
    first, second = TransformersEngine(policy).sample([prompt, prompt], max_new_tokens=8, temperature=0.0)
    assert first == second
    with torch.no_grad():
        logits = policy.model(torch.tensor([prompt])).logits[0, -1]
    assert first.ids[0] == int(logits.argmax())
    assert first.logprobs[0] == pytest.approx(float(torch.log_softmax(logits, -1).max()), abs=1e-5)
