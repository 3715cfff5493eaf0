"""Training goals against test goals for a run's pi_ref and trained policy."""

from __future__ import annotations

import json

import gymnasium as gym
import pytest
import torch

from benchmarks.training.apo_generalisation import main, markdown


@pytest.fixture(scope="module")
def run_folder(tmp_path_factory):
    """A finished run as apo-agent writes it: config.json, final-model/ and its pi_ref folder."""
    from apo_agent.config import TrainConfig
    from apo_agent.model.policy import LMPolicy
    from apo_agent.model.tiny import build_tiny_model, product_ids, shop_texts, train_tokenizer

    env = gym.make("WebShop-Mini-Text-v0", split="train")
    tokenizer = train_tokenizer(shop_texts(env)[:300], vocab_size=500, whole_tokens=product_ids(env))
    run = tmp_path_factory.mktemp("apo-run")
    for folder, seed in ((run / "reference", 0), (run / "final-model", 1)):
        torch.manual_seed(seed)
        model = build_tiny_model(tokenizer, hidden_size=32, layers=1, heads=2)
        LMPolicy(model, tokenizer, torch.device("cpu")).save(folder)
    config = TrainConfig.from_preset(
        "cpu-demo", output_dir=str(run), max_new_tokens=12, max_steps=3, test_goals=2, progress=False
    )
    (run / "config.json").write_text(json.dumps(config.to_dict()))
    return run


def test_pi_ref_and_the_trained_policy_on_both_splits(run_folder, tmp_path, capsys):
    out = tmp_path / "gap.md"
    results = main([str(run_folder), "--stride", "300", "--out", str(out)])
    assert out.read_text() == markdown(results, 300) == capsys.readouterr().out.rstrip("\n") + "\n"
    policies = results[str(run_folder)]
    assert list(policies) == ["pi_ref", "apo"]
    for splits in policies.values():
        # 630 train goals, every 300th: goals 0, 300 and 600; the run's test_goals: 2.
        assert (splits["train"]["goals"], splits["test"]["goals"]) == (3, 2)
        for summary in splits.values():
            # The option figures: goals that name options, and shares (%) of those goals.
            assert 0 <= summary["option_goals"] <= summary["goals"]
            assert 0.0 <= summary["all_options_right"] <= summary["chose_options"] <= 100.0


def test_a_folder_that_is_not_a_run_is_explained(tmp_path):
    with pytest.raises(SystemExit, match="not a finished training run"):
        main([str(tmp_path)])


def test_option_behaviour_counts_only_goals_that_name_options():
    from apo_agent.rollout.episodes import Episode
    from benchmarks.training.apo_generalisation import option_behaviour
    from webshop_gym.data.model import Goal

    def goal(*options):
        return Goal("B0", "i want shoes", (), options, 0.0, "shoes", "shoes", "shoes", "shoes")

    def bought(goal_index, options):
        info = {"purchased_asin": "B0", "purchased_options": options} if options is not None else {}
        return Episode(goal_index, 0, [], [], 0.0, 0.0, False, steps=3, invalid_actions=0, info=info)

    goals = [goal("large", "navy blue"), goal("9.5"), goal(), goal("red")]
    episodes = [
        bought(0, {"size": "large", "color": "navy blue"}),  # every named option
        bought(1, {"size": "10"}),  # an option, the wrong one
        bought(2, {}),  # names no option: not counted
        bought(3, None),  # never bought
    ]
    assert option_behaviour(episodes, goals) == {
        "option_goals": 3,
        "chose_options": pytest.approx(200 / 3),
        "all_options_right": pytest.approx(100 / 3),
    }
    none = {"option_goals": 0, "chose_options": 0.0, "all_options_right": 0.0}
    assert option_behaviour(episodes[2:3], goals) == none
