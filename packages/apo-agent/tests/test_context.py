"""Token records: the agent mask covers exactly the sampled tokens, across all turns."""

from __future__ import annotations

import gymnasium as gym
import pytest
import torch

from apo_agent.model.policy import LMPolicy
from apo_agent.rollout.episodes import collect_episodes
from apo_agent.rollout.tokens import PromptEncoder, TokenSequence
from shared_prompts import PromptConfig, format_model_output
from webshop_gym.agents.scripted import ExpertPolicy


def expert_episode(tokenizer, context):
    """One expert episode on a real page sequence, recorded with teacher-forced answers."""
    encoder = PromptEncoder(
        tokenizer, PromptConfig(think=False, max_observation_chars=300), context, True, 4096
    )
    env = gym.make("WebShop-Mini-Text-v0", split="test")
    expert = ExpertPolicy(env)
    answers, pages = [], []

    def demonstrator(slot, observation, info):
        pages.append(observation)
        answers.append(format_model_output(expert.act(observation, info)))
        return answers[-1]

    (episode,) = collect_episodes(
        None,
        [env],
        encoder,
        [(3, 0)],
        max_new_tokens=0,
        temperature=0.0,
        progress=False,
        demonstrator=demonstrator,
    )
    return encoder, episode, answers, pages


@pytest.mark.parametrize("context", ["full", "last_observation"])
def test_mask_covers_exactly_the_agent_tokens_across_all_turns(tokenizer, context):
    encoder, episode, answers, _ = expert_episode(tokenizer, context)
    assert episode.success and len(answers) >= 3
    assert len(episode.sequences) == (1 if context == "full" else len(answers))
    stop = tokenizer.eos_token_id
    agent_ids = [i for s in episode.sequences for i, a in zip(s.ids, s.agent_mask, strict=True) if a]
    expected = [i for answer in answers for i in [*encoder.encode_text(answer), stop]]
    assert agent_ids == expected  # every answer token, in order, and nothing else
    contexts = [
        tokenizer.decode([i for i, a in zip(s.ids, s.agent_mask, strict=True) if not a])
        for s in episode.sequences
    ]
    assert all(not s.agent_mask[0] for s in episode.sequences)
    # The pages are context: every turn's step budget is there, unmasked.
    for turn in range(len(answers)):
        assert any(f"steps left: {15 - turn}." in text for text in contexts)
    if context == "last_observation":  # earlier actions are shown as text in later turns
        assert "previous actions: " + " | ".join(episode.actions[:-1]) in contexts[-1]


def test_full_context_is_the_chat_template_of_the_whole_conversation(tokenizer):
    """Concatenating ids turn by turn gives the same ids as templating the conversation at once."""
    encoder, episode, answers, pages = expert_episode(tokenizer, "full")
    env = gym.make("WebShop-Mini-Text-v0", split="test")
    _, info = env.reset(seed=0, options={"goal_index": 3})
    messages = [{"role": "system", "content": encoder._system[0]["content"]}]
    for page, answer in zip(pages, answers, strict=True):
        messages.append({"role": "user", "content": encoder.user_message(page, info, [])})
        messages.append({"role": "assistant", "content": answer})
        info = env.step(answer.removeprefix("<action>").removesuffix("</action>"))[4]
    text = tokenizer.apply_chat_template(messages, tokenize=False)
    assert episode.sequences[0].ids == encoder.encode_text(text)


def test_log_probs_do_not_depend_on_padding_or_batch_company(tokenizer, tiny_model_dir):
    policy = LMPolicy.load(str(tiny_model_dir), device="cpu", with_reference=False)
    _, episode, _, _ = expert_episode(tokenizer, "last_observation")
    sequences = episode.sequences
    together = policy.token_logprobs(sequences)
    with torch.no_grad():
        for sequence, batched in zip(sequences, together, strict=True):
            alone = policy.token_logprobs([sequence])[0]
            assert len(alone) == sequence.agent_tokens
            torch.testing.assert_close(alone, batched, atol=1e-5, rtol=1e-5)
            # the same numbers as a plain forward pass over the unpadded ids
            ids = torch.tensor([sequence.ids])
            logits = policy.model(input_ids=ids).logits[0, :-1]
            mask = torch.tensor(sequence.agent_mask[1:])
            direct = torch.log_softmax(logits, -1).gather(1, ids[0, 1:].unsqueeze(1)).squeeze(1)[mask]
            torch.testing.assert_close(alone, direct, atol=1e-5, rtol=1e-5)


def test_sampled_answers_are_kept_as_sampled(tokenizer, tiny_model_dir):
    """The ids recorded for a turn are the generated ids, not a re-encoding of their text."""
    policy = LMPolicy.load(str(tiny_model_dir), device="cpu", with_reference=False)
    encoder = PromptEncoder(
        tokenizer, PromptConfig(think=False, max_observation_chars=120), "full", False, 512
    )
    envs = [gym.make("WebShop-Mini-Text-v0", split="test", max_steps=3) for _ in range(2)]
    torch.manual_seed(0)
    episodes = collect_episodes(
        policy, envs, encoder, [(0, 0), (1, 1), (2, 2)], max_new_tokens=6, temperature=1.0, progress=False
    )
    assert [e.goal_index for e in episodes] == [0, 1, 2]
    for episode in episodes:
        assert episode.steps == 3 and len(episode.actions) == 3  # random weights: no purchase
        (sequence,) = episode.sequences
        runs, current = [], []
        for token, agent in zip(sequence.ids, sequence.agent_mask, strict=True):
            if agent:
                current.append(token)
            elif current:
                runs.append(current)
                current = []
        runs.append(current)
        assert len(runs) == 3 and all(1 <= len(run) <= 6 for run in runs)


def test_token_sequence_counts_agent_tokens():
    sequence = TokenSequence()
    sequence.extend([1, 2, 3], agent=False)
    sequence.extend([4, 5], agent=True)
    assert sequence.agent_tokens == 2 and sequence.agent_mask == [False, False, False, True, True]
