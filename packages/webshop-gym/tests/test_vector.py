"""Episodes side by side on a vector env: each plays its own goal and seed, whatever the slots."""

from __future__ import annotations

import dataclasses

import gymnasium as gym
import numpy as np
import pytest

import webshop_gym  # noqa: F401  (registers the env ids)
from webshop_gym.agents.scheduler import EpisodeStart, play_episodes, slot_vector_env
from webshop_gym.agents.scripted import ExpertPolicy

GOAL_WITH_OPTIONS, GOAL_WITHOUT_OPTIONS = 0, 8  # of the mini catalogue's test split


def make_envs(count: int, **kwargs) -> list[gym.Env]:
    return [gym.make("WebShop-Mini-Text-v0", split="test", **kwargs) for _ in range(count)]


def expert_play(envs, starts):
    """Every step of every episode (the expert reads each slot's goal), by episode."""
    experts = [ExpertPolicy(env) for env in envs]
    played: dict[int, list] = {}

    def act(turns):
        return [experts[t.slot].act(t.observation, t.info) for t in turns]

    def on_start(turn):
        played[turn.episode] = [(turn.observation, turn.info)]

    def on_step(step):
        played[step.episode].append(dataclasses.replace(step, slot=0))  # the slot may differ

    play_episodes(envs, starts, act, on_start=on_start, on_step=on_step)
    return [played[e] for e in range(len(starts))]


def test_each_episode_plays_its_goal_and_seed_whatever_the_number_of_slots():
    goal = gym.make("WebShop-Mini-Text-v0", split="test").unwrapped.goal_at(5)
    starts = [EpisodeStart(seed=10 + i, options={"goal_index": i}) for i in range(4)]
    starts.append(EpisodeStart(seed=3, options={"goal": goal}))
    one, three = expert_play(make_envs(1), starts), expert_play(make_envs(3), starts)
    assert one == three
    for start, episode in zip(starts, one, strict=True):
        (_, first_info), *steps = episode
        expected = start.options.get("goal_index")
        assert first_info["goal_index"] == expected and steps[-1].info["goal_index"] == expected
        assert steps[-1].done and steps[-1].info["success"]
        assert [s.done for s in steps] == [False] * (len(steps) - 1) + [True]

    # The same as one env reset with the episode's own arguments.
    env = make_envs(1)[0]
    expert = ExpertPolicy(env)
    for start, episode in zip(starts, one, strict=True):
        observation, info = env.reset(seed=start.seed, options=dict(start.options))
        assert (observation, info) == episode[0]
        for step in episode[1:]:
            action = expert.act(observation, info)
            observation, reward, _, _, info = env.step(action)
            assert (step.action, step.observation, step.reward) == (action, observation, reward)
            assert step.info == info


def test_infos_come_back_as_each_env_returned_them():
    """Two purchases on one step, the first of a goal with options: the second's r_option stays None
    (the vector env's own merged info would turn it into nan)."""
    envs = make_envs(2)
    starts = [
        EpisodeStart(0, {"goal_index": GOAL_WITH_OPTIONS}),
        EpisodeStart(0, {"goal_index": GOAL_WITHOUT_OPTIONS}),
    ]
    ends, steps = {}, [0, 0]

    def buy_the_first_result(turns):
        pages = {
            "search": lambda i: f"search[{i['instruction']}]",
            "results": lambda i: i["available_actions"][2],
        }
        return [pages.get(t.info["page"], lambda i: "click[buy now]")(t.info) for t in turns]

    def on_step(step):
        steps[step.episode] += 1
        if step.done:
            ends[step.episode] = step

    play_episodes(envs, starts, buy_the_first_result, on_step=on_step)
    assert steps == [3, 3] and [ends[e].slot for e in (0, 1)] == [0, 1]  # bought on the same step
    assert ends[0].terminated and ends[1].terminated
    assert isinstance(ends[0].info["reward_breakdown"]["r_option"], float)
    assert ends[1].info["reward_breakdown"]["r_option"] is None


def test_fewer_episodes_than_envs_and_none_at_all():
    calls = []
    play_episodes(
        make_envs(3, max_steps=2),
        [EpisodeStart(1, {"goal_index": 1})],
        lambda t: calls.append(len(t)) or ["x"],
    )
    assert calls == [1, 1]  # one slot used, two steps
    play_episodes(make_envs(2), [], lambda turns: pytest.fail("nothing to play"))


def test_a_vector_reset_gives_each_slot_its_own_options():
    vector = slot_vector_env(make_envs(3))
    observations, infos = vector.reset(
        seed=[0, 1, 2], options={"options_by_slot": [{"goal_index": 4}, None, {"goal_index": 2}]}
    )
    assert infos == {}  # each slot's own info is its last_info
    first = vector.get_attr("last_info")
    assert first[0]["goal_index"] == 4 and first[2]["goal_index"] == 2
    assert first[0]["instruction"] in observations[0]
    mask = np.array([False, True, False])
    vector.reset(
        seed=[None, 5, None], options={"reset_mask": mask, "options_by_slot": [None, {"goal_index": 7}, None]}
    )
    assert [info["goal_index"] for info in vector.get_attr("last_info")] == [4, 7, 2]
