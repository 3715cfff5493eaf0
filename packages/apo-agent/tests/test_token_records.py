"""Token-in / token-out records: what outside trainers read, cut from the ids as sampled."""

from __future__ import annotations

import itertools

import gymnasium as gym
import pytest
import torch

import webshop_gym  # noqa: F401
from apo_agent.model.policy import LMPolicy
from apo_agent.rollout.episodes import collect_episodes
from apo_agent.rollout.records import read_token_records, turns_of, write_token_records
from apo_agent.rollout.tokens import PromptEncoder, TokenSequence
from shared_prompts import PromptConfig


@pytest.fixture(scope="module")
def policy(tiny_model_dir):
    return LMPolicy.load(str(tiny_model_dir), device="cpu", with_reference=False)


@pytest.mark.parametrize("context", ["last_observation", "full"])
def test_each_turn_rescored_from_its_ids_gives_the_recorded_log_probs(policy, context, tmp_path):
    torch.manual_seed(0)
    encoder = PromptEncoder(
        policy.tokenizer, PromptConfig(think=False, max_observation_chars=300), context, False, 512
    )
    envs = [gym.make("WebShop-Mini-Text-v0", split="train", max_steps=3) for _ in range(2)]
    episodes = collect_episodes(
        policy, envs, encoder, [(0, 0), (1, 1)], max_new_tokens=16, temperature=1.0, progress=False
    )
    path = write_token_records(episodes, tmp_path / "rollouts.jsonl", step=3)
    records = read_token_records(path)
    assert [r["goal_index"] for r in records] == [0, 1] and all(r["step"] == 3 for r in records)
    for record, episode in zip(records, episodes, strict=True):
        assert record["reward"] == episode.reward and record["actions"] == episode.actions
        # One turn per action the policy answered.
        assert len(record["turns"]) == episode.steps
        for turn in record["turns"]:
            assert turn["loss_mask"] == [1] * len(turn["response_ids"]) and turn["response_ids"]
            # An outside trainer scores prompt_ids + response_ids: the log-probs line up exactly.
            sequence = TokenSequence()
            sequence.extend(turn["prompt_ids"], agent=False)
            sequence.extend(turn["response_ids"], agent=True)
            with torch.no_grad():
                (scored,) = policy.token_logprobs([sequence])
            assert turn["response_logprobs"] == pytest.approx(scored.tolist(), abs=1e-4)
    if context == "full":  # one growing sequence: each turn's prompt holds the turn before it
        turns = records[0]["turns"]
        for before, after in itertools.pairwise(turns):
            assert after["prompt_ids"][: len(before["prompt_ids"]) + len(before["response_ids"])] == (
                before["prompt_ids"] + before["response_ids"]
            )


def test_demonstrations_have_no_log_probs_and_sequences_without_answers_no_turns():
    sequence = TokenSequence()
    sequence.extend([1, 2], agent=False)
    sequence.extend([3], agent=True)  # a demonstration's answer: not sampled, no log-prob
    sequence.extend([4], agent=False)
    assert [(t.prompt_ids, t.response_ids, t.response_logprobs) for t in turns_of([sequence])] == [
        ([1, 2], [3], [None])
    ]
    empty = TokenSequence()
    empty.extend([1, 2, 3], agent=False)
    assert turns_of([empty]) == []
