"""The apo agent plays an apo-agent run's policy through the runner, with the run's own prompts."""

from __future__ import annotations

import json

import gymnasium as gym
import pytest
import torch

from benchmarks.harness.agents import make_factory
from benchmarks.harness.run import env_spec, run_agent

MINI = env_spec("WebShop-Mini-Text-v0", "test")


@pytest.fixture(scope="module")
def apo_run(tmp_path_factory):
    """A run folder as apo-agent writes it: config.json and final-model/ (a tiny random model)."""
    from apo_agent.config import TrainConfig
    from apo_agent.model.policy import LMPolicy
    from apo_agent.model.tiny import build_tiny_model, product_ids, shop_texts, train_tokenizer

    env = gym.make("WebShop-Mini-Text-v0", split="train")
    tokenizer = train_tokenizer(shop_texts(env)[:300], vocab_size=500, whole_tokens=product_ids(env))
    torch.manual_seed(0)
    model = build_tiny_model(tokenizer, hidden_size=32, layers=1, heads=2)
    run = tmp_path_factory.mktemp("apo-run")
    LMPolicy(model, tokenizer, torch.device("cpu")).save(run / "final-model")
    config = TrainConfig.from_preset("cpu-demo", output_dir=str(run), max_new_tokens=12)
    (run / "config.json").write_text(json.dumps(config.to_dict()))
    return run


def test_apo_agent_plays_two_episodes_through_the_runner(apo_run):
    records = run_agent(
        "apo", make_factory("apo", {"run": str(apo_run)}), MINI, episodes=2, n_envs=2, progress=False
    )
    assert [r["goal_index"] for r in records] == [0, 1]
    for record in records:
        assert record["steps"] == len(record["trajectory"]) - 1 >= 1
        assert 0.0 <= record["score"] <= 1.0


def test_apo_agent_is_reproducible_per_episode_seed(apo_run):
    factory = make_factory("apo", {"run": str(apo_run / "final-model")})  # a model folder works too
    first = run_agent("apo", factory, MINI, episodes=2, n_envs=1, progress=False)
    again = run_agent("apo", factory, MINI, episodes=2, n_envs=1, progress=False)
    assert [r["trajectory"] for r in first] == [r["trajectory"] for r in again]


def test_apo_agent_plays_a_lora_run(apo_run, tmp_path):
    """A run that trained LoRA adapters saves only them; the agent loads them onto their base."""
    from apo_agent.config import TrainConfig
    from apo_agent.model.policy import LMPolicy

    policy = LMPolicy.load(str(apo_run / "final-model"), lora_rank=4, with_reference=False)
    with torch.no_grad():  # adapters that change the answers, as trained ones do
        for name, parameter in policy.model.named_parameters():
            if "lora_B" in name:
                parameter.normal_(0.0, 0.5)
    run = tmp_path / "lora-run"
    policy.save(run / "final-model")
    assert not (run / "final-model" / "config.json").exists()
    config = TrainConfig.from_preset("cpu-demo", output_dir=str(run), max_new_tokens=12)
    (run / "config.json").write_text(json.dumps(config.to_dict()))

    base = run_agent("apo", make_factory("apo", {"run": str(apo_run)}), MINI, episodes=2, progress=False)
    lora = run_agent("apo", make_factory("apo", {"run": str(run)}), MINI, episodes=2, progress=False)
    assert all(1 <= r["steps"] <= 15 for r in lora)
    assert [r["trajectory"] for r in lora] != [r["trajectory"] for r in base]


def test_apo_agent_explains_a_folder_that_is_not_a_run(tmp_path):
    with pytest.raises(FileNotFoundError, match="nox -s train"):
        make_factory("apo", {"run": str(tmp_path)})
