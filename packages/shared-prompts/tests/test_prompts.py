"""Prompts state the actions the env accepts, on real pages of every kind."""

from __future__ import annotations

import pytest

from shared_prompts import PromptConfig, system_prompt, turn_prompt
from webshop_gym.actions import ACTION_KINDS, SEARCH_PLACEHOLDER
from webshop_gym.agents.scripted import ExpertPolicy
from webshop_gym.envs import WebShopEnv


def pages_of_an_expert_episode():
    """Every page kind: the expert's path with a visit to the Description tab on the way."""
    env = WebShopEnv(split="test", show_attributes=True)
    observation, info = env.reset(seed=0, options={"goal_index": 3})
    expert, done, detoured = ExpertPolicy(env), False, False
    yield observation, info
    while not done:
        if info["page"] == "item" and not detoured:
            detoured = True
            for action in ("click[description]", "click[< prev]"):
                observation, _, _, _, info = env.step(action)
                yield observation, info
        observation, _, terminated, truncated, info = env.step(expert.act(observation, info))
        done = terminated or truncated
        yield observation, info


@pytest.mark.parametrize("config", [PromptConfig(), PromptConfig(few_shot=True, think=False)])
def test_system_prompt_states_the_grammar(config):
    prompt = system_prompt(config)
    for kind in ACTION_KINDS:
        assert f"{kind}[" in prompt
    assert SEARCH_PLACEHOLDER in prompt and "click[buy now]" in prompt
    assert ("<think>" in prompt) == config.think or config.few_shot
    assert ("Example episode" in prompt) == config.few_shot


def test_every_turn_prompt_lists_exactly_the_available_actions():
    pages = set()
    for observation, info in pages_of_an_expert_episode():
        pages.add(info["page"])
        prompt = turn_prompt(info["instruction"], observation, info["available_actions"], info["steps_left"])
        listed = prompt.split("Available actions:\n", 1)[1].split("\nSteps left:", 1)[0].splitlines()
        assert listed == [f"- {a}" for a in info["available_actions"]]
        assert f"Steps left: {info['steps_left']}." in prompt
        assert info["instruction"] in prompt
    assert {"search", "results", "item", "sub_page", "done"} <= pages


def test_long_observations_are_cut_with_a_marker():
    prompt = turn_prompt("i", "x" * 5000, [], 3, PromptConfig(max_observation_chars=1000))
    assert "x" * 1000 + " ... [cut: 4000 more characters]" in prompt
    assert "x" * 1001 not in prompt
    with pytest.raises(ValueError, match="max_observation_chars"):
        PromptConfig(max_observation_chars=10)


@pytest.mark.parametrize("think", [True, False])
def test_react_example_follows_the_answer_format(think):
    from shared_prompts import few_shot_example, parse_model_output

    config = PromptConfig(few_shot=True, few_shot_style="react", think=think)
    example = few_shot_example(config)
    assert example in system_prompt(config)
    answers = [line.removeprefix("Answer: ") for line in example.splitlines() if line.startswith("Answer: ")]
    assert [parse_model_output(a).action for a in answers] == [
        "search[3 ounce bright citrus deodorant sensitive skin]",
        "click[b078gwrc1j]",
        "click[bright citrus]",
        "click[3 ounce (pack of 1)]",
        "click[buy now]",
    ]
    assert ("<think>" in example) == think
    with pytest.raises(ValueError, match="few_shot_style"):
        PromptConfig(few_shot_style="cot")
