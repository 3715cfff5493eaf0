"""Training runs with a tiny model: weights change, metrics are logged, resume is exact."""

from __future__ import annotations

import json
from types import SimpleNamespace

import gymnasium as gym
import numpy as np
import pytest
import torch

from apo_agent import optimal_values
from apo_agent.config import TrainConfig
from apo_agent.model.policy import LMPolicy
from apo_agent.objectives import optimal_value
from apo_agent.optimal_values import ReferenceRewardCache, estimate_optimal_values
from apo_agent.rollout.episodes import collect_episodes
from apo_agent.rollout.tokens import PromptEncoder
from apo_agent.runtime.checkpoints import latest_checkpoint
from apo_agent.runtime.metrics import read_metrics
from apo_agent.trainer import _step_requests, train
from shared_prompts import PromptConfig


def weights(policy):
    return {k: v.detach().clone() for k, v in policy.model.state_dict().items()}


def test_a_tiny_apo_run_changes_weights_and_logs_metrics(tmp_path, warm_model_dir, tiny_config):
    config = tiny_config(tmp_path, warm_model_dir)
    before = weights(LMPolicy.load(str(warm_model_dir), device="cpu", with_reference=False))
    result = train(config)
    after = weights(result.policy)
    assert any(not torch.equal(before[k], after[k]) for k in before)

    rows = read_metrics(result.metrics_path)
    assert [r["step"] for r in rows] == [1, 2]
    assert [r["episodes"] for r in rows] == [4, 8]
    for row in rows:
        assert row["losses/loss"] >= 0 and "losses/kl" in row and "charts/success" in row
        assert row["charts/token_entropy"] > 0  # -log pi of sampled tokens, at temperature 1
    assert result.curve_path.stat().st_size > 1000
    assert len(result.optimal_values) == 4
    for value in result.optimal_values.values():
        assert len(value.rewards) == 2
        assert value.value == pytest.approx(optimal_value(value.rewards, config.beta1))
    # the exported model loads as a plain transformers model
    assert LMPolicy.load(str(result.model_dir), device="cpu", with_reference=False).model is not None


def test_resume_gives_the_same_next_step_loss_as_an_uninterrupted_run(tmp_path, warm_model_dir, tiny_config):
    straight = train(tiny_config(tmp_path / "straight", warm_model_dir, steps=2))
    interrupted = tiny_config(tmp_path / "interrupted", warm_model_dir, steps=1)
    first = train(interrupted)
    assert latest_checkpoint(interrupted.output_dir).name == "step-000001"
    resumed = train(tiny_config(tmp_path / "interrupted", warm_model_dir, steps=2))
    assert resumed.stage1_cpu_s == first.stage1_cpu_s > 0  # read back from the cache: it still counts

    straight_rows, resumed_rows = read_metrics(straight.metrics_path), read_metrics(resumed.metrics_path)
    assert [r["step"] for r in resumed_rows] == [1, 2]
    for key in ("losses/loss", "losses/kl", "charts/return", "charts/agent_tokens"):
        assert resumed_rows[1][key] == straight_rows[1][key], key
    for name, tensor in weights(straight.policy).items():
        torch.testing.assert_close(weights(resumed.policy)[name], tensor, rtol=0, atol=0)


def test_a_tiny_grpo_run_plays_a_group_for_each_of_the_same_goals_per_step(
    tmp_path, warm_model_dir, tiny_config
):
    config = tiny_config(tmp_path, warm_model_dir, algorithm="grpo", group_size=2, steps=1, grpo_epochs=2)
    result = train(config)
    (row,) = read_metrics(result.metrics_path)
    assert row["episodes"] == config.goals_per_step * 2 == 8  # A*PO's step: 4
    assert "losses/clip_fraction" in row and row["losses/loss"] == row["losses/loss"]  # not NaN
    assert result.optimal_values == {}  # no Stage 1


@pytest.mark.parametrize(("algorithm", "per_goal"), [("apo", 1), ("grpo", 4)])
def test_a_step_holds_the_goals_fixed_and_grpo_samples_a_group_of_each(algorithm, per_goal):
    config = TrainConfig.from_preset("cpu-demo", algorithm=algorithm, goals_per_step=8, group_size=4)
    requests = _step_requests(list(range(100, 200)), config, np.random.default_rng(0))
    goals = [goal for goal, _ in requests]
    assert len(requests) == 8 * per_goal == config.episodes_per_step
    assert len(set(goals)) == 8 and set(goals) <= set(range(100, 200))
    assert goals == [g for g in dict.fromkeys(goals) for _ in range(per_goal)]  # consecutive groups
    assert len({seed for _, seed in requests}) == len(requests)  # every episode its own env seed


def test_a_cpu_budget_ends_stage_two_after_the_step_that_spends_it(tmp_path, warm_model_dir, tiny_config):
    config = tiny_config(tmp_path, warm_model_dir, algorithm="grpo", group_size=2, steps=5, cpu_budget_s=1e-3)
    result = train(config)
    assert [r["step"] for r in read_metrics(result.metrics_path)] == [1]
    assert latest_checkpoint(config.output_dir).name == "step-000001"
    again = train(config)  # resumed: the budget is spent, so nothing more is trained
    assert [r["step"] for r in read_metrics(again.metrics_path)] == [1]
    for name, tensor in weights(result.policy).items():
        torch.testing.assert_close(weights(again.policy)[name], tensor, rtol=0, atol=0)


def test_stage_one_counts_against_the_cpu_budget(tmp_path, warm_model_dir, tiny_config):
    config = tiny_config(tmp_path, warm_model_dir, steps=5, cpu_budget_s=1e-3)
    result = train(config)
    assert result.stage1_cpu_s > 1e-3
    assert read_metrics(result.metrics_path) == []  # Stage 1 alone spent it: pi_ref is the result
    assert latest_checkpoint(config.output_dir).name == "step-000000"


def stage_one_setup(model_dir, tokenizer, env_count):
    """pi_ref (the random tiny model), its prompt encoder and short train-split envs."""
    policy = LMPolicy.load(str(model_dir), device="cpu", with_reference=False)
    encoder = PromptEncoder(
        tokenizer, PromptConfig(think=False, max_observation_chars=120), "last_observation", False, 512
    )
    envs = [gym.make("WebShop-Mini-Text-v0", split="train", max_steps=2) for _ in range(env_count)]
    return policy, encoder, envs


def test_stage_one_reuses_its_cache(tmp_path, tiny_model_dir, tokenizer):
    policy, encoder, envs = stage_one_setup(tiny_model_dir, tokenizer, env_count=3)
    key = {"reference_weights": policy.fingerprint(), "test": 1}
    arguments = dict(beta1=0.5, max_new_tokens=4, progress=False)
    first = estimate_optimal_values(
        policy, envs, encoder, [0, 1], samples=2, cache=ReferenceRewardCache(tmp_path, key), **arguments
    )
    stored = json.loads(ReferenceRewardCache(tmp_path, key).path.read_text())
    assert stored["rewards"] == {"0": list(first[0].rewards), "1": list(first[1].rewards)}

    class NoSampling:  # a cached run must not sample again
        tokenizer = policy.tokenizer

        def generate(self, *args, **kwargs):
            raise AssertionError("sampled although the returns were cached")

    again = estimate_optimal_values(
        NoSampling(), envs, encoder, [0, 1], samples=2, cache=ReferenceRewardCache(tmp_path, key), **arguments
    )
    assert again == first
    assert ReferenceRewardCache(tmp_path, {**key, "test": 2}).rewards == {}  # another key, another file


def test_a_run_using_part_of_a_larger_cache_counts_the_cost_of_its_part(tmp_path):
    cache = ReferenceRewardCache(tmp_path, {"k": 1})
    cache.rewards = {goal: [0.0] * 8 for goal in range(4)}
    cache.seconds, cache.cpu_seconds = 80.0, 40.0
    assert cache.cost_of(4 * 2) == (20.0, 10.0)  # N = 2 of the 8 cached samples per goal
    assert cache.cost_of(4 * 8) == (80.0, 40.0)
    assert ReferenceRewardCache(tmp_path / "empty", {"k": 1}).cost_of(8) == (0.0, 0.0)


def test_stage_one_batches_change_no_greedy_return(tiny_model_dir, tokenizer):
    """Stage 1 plays its episodes in batches far larger than training's: the batch size is
    a matter of speed only (greedy decoding gives the same returns at 1 env and at 6)."""
    returns = []
    for env_count in (1, 6):
        policy, encoder, envs = stage_one_setup(tiny_model_dir, tokenizer, env_count)
        values = estimate_optimal_values(
            policy,
            envs,
            encoder,
            [0, 1, 2],
            samples=2,
            beta1=0.5,
            max_new_tokens=16,
            temperature=0.0,
            progress=False,
        )
        returns.append({goal: value.rewards for goal, value in values.items()})
    assert returns[0] == returns[1]


def test_a_stage_one_top_up_samples_new_episodes(tmp_path, tiny_model_dir, tokenizer, monkeypatch):
    """Asking for more reference samples than are cached runs the missing ones as fresh draws,
    although each run seeds its RNG the same way (they once replayed the cached episodes)."""
    policy, encoder, envs = stage_one_setup(tiny_model_dir, tokenizer, env_count=2)
    key = {"reference_weights": policy.fingerprint(), "test": "top-up"}
    played: list = []

    def recording(*args, **kwargs):
        episodes = collect_episodes(*args, **kwargs)
        played.append([episode.actions for episode in episodes])
        return episodes

    monkeypatch.setattr(optimal_values, "collect_episodes", recording)
    arguments = dict(beta1=0.5, max_new_tokens=12, progress=False)
    torch.manual_seed(0)
    estimate_optimal_values(
        policy, envs, encoder, [0, 1], samples=2, cache=ReferenceRewardCache(tmp_path, key), **arguments
    )
    torch.manual_seed(0)  # a later run starts from the same RNG state
    values = estimate_optimal_values(
        policy, envs, encoder, [0, 1], samples=4, cache=ReferenceRewardCache(tmp_path, key), **arguments
    )
    cached, topped_up = played
    assert len(cached) == len(topped_up) == 4 and all(len(v.rewards) == 4 for v in values.values())
    assert cached != topped_up  # a random tiny model writes other text unless the draws repeat


def test_pi_ref_is_evaluated_once_per_evaluation_key(tmp_path, monkeypatch):
    import dataclasses

    from apo_agent import evaluation
    from apo_agent.config import TrainConfig

    calls = []

    def fake_evaluation(model_path, config, **options):
        calls.append(config.eval_temperature)
        summary = {"success": 10.0 + config.eval_temperature, "goals": 100}
        return SimpleNamespace(summary=lambda: summary)

    monkeypatch.setattr(evaluation, "evaluate", fake_evaluation)
    greedy = TrainConfig.from_preset("cpu-demo", reference_dir=str(tmp_path / "ref"), eval_temperature=0.0)
    sampled = dataclasses.replace(greedy, eval_temperature=1.0)
    assert evaluation.evaluate_reference(greedy, "ref")["success"] == 10.0
    assert evaluation.evaluate_reference(sampled, "ref")["success"] == 11.0
    assert evaluation.evaluate_reference(greedy, "ref")["success"] == 10.0
    assert evaluation.evaluate_reference(sampled, "ref")["success"] == 11.0
    assert calls == [0.0, 1.0]


def test_one_pi_ref_serves_every_reward_variant(tmp_path, monkeypatch):
    """The reward variant does not change pi_ref: a stored pi_ref and its evaluation are reused
    for another variant."""
    import dataclasses

    from apo_agent import evaluation
    from apo_agent.config import TrainConfig
    from apo_agent.warm_start import reference

    def no_build(*args, **kwargs):
        raise AssertionError("pi_ref was built again")

    calls = []

    def fake_evaluation(model_path, config, **options):
        calls.append(config.reward)
        return SimpleNamespace(summary=lambda: {"success": 20.0, "goals": 100})

    monkeypatch.setattr(reference, "collect_demonstrations", no_build)
    monkeypatch.setattr(evaluation, "evaluate", fake_evaluation)
    original = TrainConfig.from_preset("cpu-demo", reference_dir=str(tmp_path / "ref"), eval_temperature=0.0)
    binary = dataclasses.replace(original, reward="binary")
    settings = reference.reference_settings(original)
    (tmp_path / "ref").mkdir()
    (tmp_path / "ref" / "reference.json").write_text(json.dumps({"settings": settings}))
    assert reference.build_reference(binary) == str(tmp_path / "ref")
    key = {"reference": settings, "test_goals": None, "eval_temperature": 0.0}
    (tmp_path / "ref" / "test-evaluation.json").write_text(
        json.dumps({"evaluations": [{"key": key, "result": {"success": 18.0}}]})
    )
    assert evaluation.evaluate_reference(binary, str(tmp_path / "ref"))["success"] == 18.0
    assert calls == []
    # What does decide pi_ref still counts: other demonstrations are another pi_ref.
    with pytest.raises(AssertionError, match="built again"):
        reference.build_reference(dataclasses.replace(binary, demo_skip_options_prob=0.2))


def test_option_variant_goals_join_both_stages(tmp_path, warm_model_dir, tiny_config, monkeypatch):
    from apo_agent import trainer
    from apo_agent.rollout.goals import NumberedGoals
    from apo_agent.warm_start import option_variants_of

    config = tiny_config(tmp_path, warm_model_dir, train_goals=8, rl_option_variants=2, goal_filter="none")
    variants = option_variants_of(gym.make(config.env_id, split="train"), range(8), 2, config.seed)
    assert len(variants) >= 2  # (some of the first 8 goals name their options)
    played = []

    def spy(*args, **kwargs):
        envs = args[1]  # set up once to play goal numbers (apo_agent.rollout.goals)
        goals = list(envs[0].goals) if isinstance(envs[0], NumberedGoals) else None
        played.append(([goal for goal, _ in args[3]], goals))
        return collect_episodes(*args, **kwargs)

    collect_episodes = trainer.collect_episodes
    monkeypatch.setattr(trainer, "collect_episodes", spy)
    result = trainer.train(config)

    # Stage 1 valued the 8 split goals and every variant; the variants' returns are cached apart.
    assert sorted(result.optimal_values) == list(range(8 + len(variants)))
    assert len(list((tmp_path / "run" / "optimal-values").glob("reference-rewards-*.json"))) == 2
    # Stage 2 played goals by content: the split goals first, then the variants.
    for goal_indices, goals in played:
        assert goals is not None and goals[8:] == variants
        assert all(0 <= g < 8 + len(variants) for g in goal_indices)
    split = gym.make(config.env_id, split="train").unwrapped
    assert played[0][1][:8] == [split.all_goals[split.goal_indices[i]] for i in range(8)]


def test_the_pipeline_evaluates_the_trained_policy_on_the_runs_own_engine(
    tmp_path, warm_model_dir, tiny_config, monkeypatch
):
    """No second engine after training (with vLLM it would be a second copy of the weights and
    KV cache): the test evaluation plays on the engine the run trained with, which holds the
    trained weights, and scores what the saved final model scores."""
    from apo_agent import pipeline
    from apo_agent.evaluation import evaluate

    trained, played_on = [], []
    real_train, real_evaluate = pipeline.train, pipeline.evaluate
    monkeypatch.setattr(pipeline, "train", lambda *a, **k: trained.append(real_train(*a, **k)) or trained[-1])

    def spy(player, config, **options):
        played_on.append(player)
        return real_evaluate(player, config, **options)

    monkeypatch.setattr(pipeline, "evaluate", spy)
    config = tiny_config(tmp_path, warm_model_dir, steps=1, sft_epochs=0, test_goals=4, eval_temperature=0.0)
    results = pipeline.run_pipeline(config)
    assert played_on == [trained[0].engine]
    saved = evaluate(str(trained[0].model_dir), config, description="the saved final model")
    assert results["test"]["trained"] == saved.summary()
