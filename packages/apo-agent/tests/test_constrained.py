"""Constrained decoding: answers spell the page's actions, and scoring uses the sampled distribution."""

from __future__ import annotations

import math
from collections import Counter

import gymnasium as gym
import pytest
import torch

import webshop_gym  # noqa: F401
from apo_agent.config import TrainConfig
from apo_agent.model.constrained import ActionConstraint, ActionVocabulary, answer_budget
from apo_agent.model.policy import LMPolicy
from apo_agent.rollout.episodes import collect_episodes
from apo_agent.rollout.tokens import EpisodeContext, PromptEncoder, TokenSequence
from shared_prompts import PromptConfig, action_from_answer, format_model_output


@pytest.fixture(scope="module")
def vocabulary(tokenizer):
    return ActionVocabulary(tokenizer)


@pytest.fixture(scope="module")
def encoder(tokenizer):
    config = PromptConfig(think=False, max_observation_chars=300)
    return PromptEncoder(tokenizer, config, "last_observation", False, 512, constrain_actions=True)


def results_page():
    env = gym.make("WebShop-Mini-Text-v0", split="train")
    env.reset(seed=0, options={"goal_index": 3})
    return env.step("search[red frying pan]")


def ids_of(tokenizer, text):
    return tokenizer(text, add_special_tokens=False)["input_ids"]


def test_every_click_on_the_page_can_be_spelled_and_then_only_the_stop_token(tokenizer, vocabulary):
    info = results_page()[-1]
    constraint = ActionConstraint.for_page(vocabulary, info["available_actions"])
    assert constraint.open_prefix is None  # no search bar on a results page
    for action in info["available_actions"]:
        ids = ids_of(tokenizer, format_model_output(action))
        along = constraint.allowed_along([*ids, tokenizer.eos_token_id])
        assert all(
            allowed is not None and token in allowed for token, allowed in zip(ids, along, strict=False)
        )
        assert along[-1] == (tokenizer.eos_token_id,)


def test_a_button_that_is_not_on_the_page_cannot_be_spelled(tokenizer, vocabulary):
    constraint = ActionConstraint.for_page(vocabulary, ["click[buy now]", "click[< prev]"])
    ids = ids_of(tokenizer, format_model_output("click[back to search]"))
    steps = [constraint.allowed_next(ids[:k]) for k in range(len(ids))]
    assert any(
        allowed is not None and token not in allowed for token, allowed in zip(ids, steps, strict=True)
    )
    assert None in constraint.allowed_along(ids)  # teacher-forced past the constraint: scored without it


def test_the_search_query_is_free_text_after_the_prefix(tokenizer, vocabulary):
    constraint = ActionConstraint.for_page(vocabulary, ["search[<query>]"])
    ids = ids_of(tokenizer, format_model_output("search[red shoes under 30 dollars]"))
    along = constraint.allowed_along(ids)
    constrained = [allowed for allowed in along if allowed is not None]
    assert constrained and all(
        token in allowed for token, allowed in zip(ids, along, strict=False) if allowed
    )
    assert along[-1] is None  # inside the query nothing is restricted
    assert "".join(vocabulary.text[t] for t in ids[: len(constrained)]).startswith("<action>")


def test_sampled_answers_are_valid_actions_of_the_page(tokenizer, tiny_model_dir, encoder):
    """A random model, constrained, writes only actions the page offers."""
    torch.manual_seed(0)
    policy = LMPolicy.load(str(tiny_model_dir), device="cpu", with_reference=False)
    observation, _, _, _, info = results_page()
    context = EpisodeContext(encoder)
    prompt = context.prompt(observation, info)
    answers = policy.generate(
        [prompt] * 64, max_new_tokens=24, temperature=1.0, constraints=[context.constraint] * 64
    )
    actions = {action_from_answer(tokenizer.decode(a, skip_special_tokens=True)) for a in answers}
    assert actions <= set(info["available_actions"])
    assert len(actions) > 1


def test_log_probs_are_those_of_the_restricted_softmax(tokenizer, tiny_model_dir, encoder):
    """Scoring normalises over the allowed ids: checked against a step-by-step forward pass."""
    policy = LMPolicy.load(str(tiny_model_dir), device="cpu", with_reference=False)
    observation, _, _, _, info = results_page()
    context = EpisodeContext(encoder)
    prompt = context.prompt(observation, info)
    answer = [*ids_of(tokenizer, format_model_output(info["available_actions"][3])), tokenizer.eos_token_id]
    context.record(answer, info["available_actions"][3])
    with torch.no_grad():
        scored = policy.token_logprobs(context.sequences)[0]

    expected = []
    allowed = context.constraint.allowed_along(answer)
    for step, token in enumerate(answer):
        with torch.no_grad():
            logits = policy.model(torch.tensor([prompt + answer[:step]])).logits[0, -1]
        ids = torch.tensor(allowed[step])
        expected.append(float(logits[token] - logits[ids].logsumexp(0)))
    assert scored.tolist() == pytest.approx(expected, abs=1e-4)
    with torch.no_grad():
        full = policy.token_logprobs([unconstrained(context.sequences[0])])[0]
    assert float(scored.sum()) > float(full.sum())


def unconstrained(sequence: TokenSequence) -> TokenSequence:
    return TokenSequence(list(sequence.ids), list(sequence.agent_mask))


def test_sampling_frequencies_match_the_scored_probabilities(tokenizer, tiny_model_dir, encoder):
    """What generate samples and what token_logprobs says it sampled are the same distribution."""
    torch.manual_seed(1)
    policy = LMPolicy.load(str(tiny_model_dir), device="cpu", with_reference=False)
    info = {
        "instruction": "red shoes",
        "available_actions": ["click[buy now]", "click[< prev]"],
        "steps_left": 5,
    }
    context = EpisodeContext(encoder)
    prompt = context.prompt("Back to Search [SEP] < Prev [SEP] Buy Now", info)
    samples = 3000
    answers = policy.generate(
        [prompt] * samples, max_new_tokens=24, temperature=1.0, constraints=[context.constraint] * samples
    )
    counts = Counter(tuple(a) for a in answers)
    for answer, count in counts.most_common(3):
        sequence = TokenSequence()
        sequence.extend(prompt, agent=False)
        sequence.extend(list(answer), agent=True, allowed=context.constraint.allowed_along(list(answer)))
        with torch.no_grad():
            probability = math.exp(float(policy.token_logprobs([sequence])[0].sum()))
        assert count / samples == pytest.approx(probability, abs=4 * math.sqrt(probability / samples) + 0.005)


def test_rollouts_record_the_allowed_ids_and_keep_them_through_truncation(tokenizer, tiny_model_dir, encoder):
    policy = LMPolicy.load(str(tiny_model_dir), device="cpu", with_reference=False)
    envs = [gym.make("WebShop-Mini-Text-v0", split="train", max_steps=4) for _ in range(2)]
    episodes = collect_episodes(
        policy, envs, encoder, [(0, 0), (1, 1)], max_new_tokens=24, temperature=1.0, progress=False
    )
    for episode in episodes:
        # Clicks are always buttons of their page; only a (random) search query can go wrong.
        assert all(action.startswith(("click[", "search[", "<action>search[")) for action in episode.actions)
        for sequence in episode.sequences:
            assert len(sequence.allowed) == len(sequence.ids)
            assert all(
                a is None for a, agent in zip(sequence.allowed, sequence.agent_mask, strict=True) if not agent
            )
            assert any(a is not None for a in sequence.agent_allowed())


def test_truncated_prompt_keeps_allowed_ids_aligned(tokenizer, vocabulary):
    encoder = PromptEncoder(
        tokenizer, PromptConfig(think=False), "full", False, max_prompt_tokens=64, constrain_actions=True
    )
    context = EpisodeContext(encoder)
    info = {"instruction": "red shoes " * 20, "available_actions": ["click[buy now]"], "steps_left": 5}
    answer = [*ids_of(tokenizer, format_model_output("click[buy now]")), tokenizer.eos_token_id]
    context.prompt("Buy Now", info)
    context.record(answer, "click[buy now]")
    context.prompt("Buy Now", info)
    sequence = context.sequences[0]
    assert context.truncated_prompts and len(sequence.allowed) == len(sequence.ids) <= 64


def test_with_the_instruction_as_query_searching_is_one_whole_answer(tokenizer, vocabulary):
    constraint = ActionConstraint.for_page(vocabulary, ["search[<query>]"], fixed_query="Red shoes, size 9")
    assert constraint.open_prefix is None
    ids = ids_of(tokenizer, format_model_output("search[red shoes, size 9]"))
    along = constraint.allowed_along([*ids, tokenizer.eos_token_id])
    assert all(allowed is not None and token in allowed for token, allowed in zip(ids, along, strict=False))
    assert along[-1] == (tokenizer.eos_token_id,)
    other = ids_of(tokenizer, format_model_output("search[blue shoes]"))
    other_along = constraint.allowed_along(other)
    assert any(allowed is None for allowed in other_along)  # it left the constraint: not a sample


def test_a_whole_action_longer_than_max_new_tokens_is_not_cut(tokenizer, tiny_model_dir, vocabulary):
    """The instruction search gets the tokens it needs; an unconstrained answer sampled in the
    same batch still stops at ``max_new_tokens``."""
    instruction = "i need a red frying pan with a glass lid, and price lower than 40.00 dollars"
    search = ActionConstraint.for_page(vocabulary, ["search[<query>]"], fixed_query=instruction)
    assert search.whole_answer_tokens == len(search.answers[0]) + 1 > 4
    assert answer_budget(4, search) == search.whole_answer_tokens
    assert answer_budget(4, ActionConstraint.for_page(vocabulary, ["search[<query>]"])) == 4  # a free query
    assert answer_budget(4, None) == 4
    policy = LMPolicy.load(str(tiny_model_dir), device="cpu", with_reference=False)
    prompt = ids_of(tokenizer, "i need a red frying pan")
    whole, free = policy.sample(
        [prompt, prompt], max_new_tokens=4, temperature=1.0, constraints=[search, None]
    )
    assert whole.ids[-1] in policy.stop_ids
    assert "".join(vocabulary.text[i] for i in whole.ids[:-1]) == search.answers[0]
    assert len(whole.logprobs) == len(whole.ids)
    assert 1 <= len(free.ids) <= 4 and len(free.logprobs) == len(free.ids)


def test_demonstrations_stay_inside_the_constraint(tokenizer):
    from apo_agent.warm_start import collect_demonstrations

    encoder = PromptEncoder(
        tokenizer, PromptConfig(think=False), "last_observation", False, 512, True, "instruction"
    )
    envs = [gym.make("WebShop-Mini-Text-v0", split="train") for _ in range(4)]
    episodes = collect_demonstrations(
        envs, encoder, list(range(8)), skip_options_prob=0.5, random_action_prob=0.1, progress=False
    )
    for episode in episodes:
        _, info = envs[0].reset(options={"goal_index": episode.goal_index})
        searches = [action.lower() for action in episode.actions if action.startswith("search[")]
        assert searches and set(searches) == {f"search[{info['instruction']}]".lower()}
        for sequence in episode.sequences:  # every answer token was drawn from a restricted set
            assert all(allowed is not None for allowed in sequence.agent_allowed())


def test_thoughts_and_constrained_answers_do_not_mix(tokenizer):
    with pytest.raises(ValueError, match="think=False"):
        TrainConfig(constrain_actions=True, think=True)
    with pytest.raises(ValueError, match="think=False"):
        PromptEncoder(tokenizer, PromptConfig(think=True), constrain_actions=True)
    with pytest.raises(ValueError, match="constrain_actions=True"):
        TrainConfig(search_query="instruction", think=False)
