"""Tests over the registry: every id this package registers passes the same checks."""

from __future__ import annotations

import copy
import dataclasses
import pickle
import warnings

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

import webshop_gym
from webshop_gym.agents.scripted import ExpertPolicy
from webshop_gym.envs import WebShopEnv

# Real-data ids run over the 1k set beside the repo (the full catalogue is not here).
REAL_DATA_IDS = {"WebShop-Text-v0", "WebShop-HTML-v0"}
# Ids that talk to a `webshop-gym serve` server: tests start one in-process.
REMOTE_IDS = {"WebShop-Remote-v0"}


@pytest.fixture(scope="module")
def remote_server_url():
    """A web-shop server on 127.0.0.1 (bundled catalogue) for the remote ids."""
    from webshop_gym.web import ServerConfig, create_app
    from webshop_gym.web.server import ServerThread

    with ServerThread(create_app(ServerConfig(catalog="mini"))) as server:
        yield server.url


@pytest.fixture(params=sorted(webshop_gym.ENV_IDS))
def make_env(request, webshop_1k):
    """A factory for the id under test, pointed at data that exists on this machine."""
    env_id = request.param
    extra = {"catalog": str(webshop_1k), "goals": "synthetic"} if env_id in REAL_DATA_IDS else {}
    if env_id in REMOTE_IDS:
        extra = {"server_url": request.getfixturevalue("remote_server_url")}

    def make(**kwargs):
        return gym.make(env_id, **{**extra, **kwargs})

    make.env_id = env_id
    make.extra = extra  # where the id's data or server is
    return make


def rollout(env, seed, actions_from_expert=True, n_steps=15):
    """(observation, reward, terminated, truncated, action_error) of a seeded expert episode."""
    trace = []
    observation, info = env.reset(seed=seed)
    trace.append((observation, tuple(info["available_actions"])))
    expert = ExpertPolicy(env)
    for _ in range(n_steps):
        action = expert.act(observation, info)
        observation, reward, terminated, truncated, info = env.step(action)
        trace.append((action, observation, reward, terminated, truncated, info["action_error"]))
        if terminated or truncated:
            break
    return trace


def test_check_env_passes_without_warnings(make_env):
    env = make_env()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        check_env(env.unwrapped, skip_render_check=False)
    assert [str(w.message) for w in caught] == []


def test_same_seed_same_episode(make_env):
    first = rollout(make_env(), seed=7)
    second = rollout(make_env(), seed=7)
    assert first == second
    assert len(first) > 2


def test_different_seeds_draw_different_goals(make_env):
    env = make_env()
    instructions = {env.reset(seed=s)[1]["instruction"] for s in range(10)}
    assert len(instructions) > 1


def test_pickle_round_trip_mid_episode(make_env):
    env = make_env().unwrapped
    observation, info = env.reset(seed=3)
    expert = ExpertPolicy(env)
    observation, *_, info = env.step(expert.act(observation, info))
    clone = pickle.loads(pickle.dumps(env))
    assert clone.goal == env.goal and clone.state == env.state and clone.steps == env.steps
    for _ in range(3):
        action = expert.act(observation, info)
        a = env.step(action)
        b = clone.step(action)
        assert a[:4] == b[:4] and a[4]["available_actions"] == b[4]["available_actions"]
        observation, info = a[0], a[4]
        if a[2] or a[3]:
            break
    # The random generator travels too: the next seedless reset draws the same goal.
    assert env.reset()[1]["instruction"] == clone.reset()[1]["instruction"]


@pytest.mark.parametrize("vector_cls", ["sync", "async"])
def test_vector_envs(make_env, vector_cls):
    fns = [make_env for _ in range(4)]
    if vector_cls == "sync":
        envs = gym.vector.SyncVectorEnv(fns)
    else:
        envs = gym.vector.AsyncVectorEnv(fns, shared_memory=False)
    try:
        observations, infos = envs.reset(seed=[0, 1, 2, 3])
        assert len(observations) == 4 and list(infos["page"]) == ["search"] * 4
        on_search_page = ("WebShop [SEP] Instruction:", "<!DOCTYPE html>")
        assert all(o.startswith(on_search_page) for o in observations)
        queries = [f"search[{instruction}]" for instruction in infos["instruction"]]
        observations, rewards, terminated, truncated, infos = envs.step(queries)
        assert list(infos["page"]) == ["results"] * 4
        assert np.all(rewards == 0.0) and not terminated.any() and not truncated.any()
        single = make_env()
        expected, _ = single.reset(seed=2)
        expected, *_ = single.step(queries[2])
        assert observations[2] == expected
    finally:
        envs.close()


@pytest.mark.parametrize("vectorization_mode", ["sync", "async"])
def test_make_vec_with_default_arguments(make_env, vectorization_mode):
    """gym.make_vec with Gymnasium's defaults (async: shared memory) for every id (issue 28.1)."""
    envs = gym.make_vec(make_env.env_id, num_envs=2, vectorization_mode=vectorization_mode, **make_env.extra)
    try:
        observations, infos = envs.reset(seed=[4, 5])
        single = make_env()
        assert list(observations) == [single.reset(seed=seed)[0] for seed in (4, 5)]
        queries = [f"search[{instruction}]" for instruction in infos["instruction"]]
        observations, *_ = envs.step(queries)
        single.reset(seed=5)
        assert observations[1] == single.step(queries[1])[0] and " " in observations[1]
        assert isinstance(observations, tuple) and all(isinstance(o, str) for o in observations)
        single.close()
    finally:
        envs.close()


def test_unicode_text_crosses_async_shared_memory_unchanged():
    from gymnasium.vector.utils import create_shared_memory, read_from_shared_memory, write_to_shared_memory

    from webshop_gym.envs import UnicodeText

    space = UnicodeText(max_length=12)
    memory = create_shared_memory(space, n=3)
    view = read_from_shared_memory(space, memory, n=3)
    assert tuple(view) == ("", "", "")
    values = ["a b [SEP] c", "é 🙂 \ud800\x00", "x" * 12]
    for index, value in enumerate(values):
        write_to_shared_memory(space, index, value, memory)
    assert copy.deepcopy(view) == tuple(values)  # the view shows later writes
    write_to_shared_memory(space, 0, "", memory)
    assert view[0] == "" and view[1:] == tuple(values[1:])
    with pytest.raises(ValueError, match="does not fit"):
        write_to_shared_memory(space, 0, "y" * 13, memory)


def test_every_id_is_registered_on_import():
    for env_id in ("WebShop-Mini-Text-v0", "WebShop-Text-v0"):
        assert env_id in gym.registry
        assert gym.registry[env_id].entry_point == "webshop_gym.envs:WebShopEnv"


def test_real_data_id_without_data_fails_at_once_naming_the_way_out(tmp_path, monkeypatch):
    monkeypatch.setenv("WEBSHOP_GYM_DATA", str(tmp_path))
    with pytest.raises(FileNotFoundError, match="items_shuffle") as error:
        gym.make("WebShop-Text-v0")
    assert "catalog=" in str(error.value)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"observation_mode": "pixels"}, "observation_mode"),
        ({"split": "validation"}, "split"),
        ({"reward": "dense"}, "reward"),
        ({"max_steps": 0}, "max_steps"),
        ({"search_engine": "google"}, "search_engine"),
        ({"goals": "expert"}, "goals"),
        ({"shaping_discount": 1.5}, "shaping_discount"),
    ],
)
def test_wrong_arguments_get_clear_errors(kwargs, message):
    with pytest.raises(ValueError, match=message):
        WebShopEnv(**kwargs)


def test_reset_options_are_checked():
    env = WebShopEnv(split="test")
    with pytest.raises(ValueError, match="goal_index"):
        env.reset(options={"goal_index": 10_000})
    with pytest.raises(ValueError, match="goal_index"):
        env.reset(options={"goal_index": "3"})
    with pytest.raises(ValueError, match="unknown reset options"):
        env.reset(options={"goals": 3})
    with pytest.raises(ValueError, match=r"must be a webshop_gym\.Goal"):
        env.reset(options={"goal": 3})
    goal = env.all_goals[env.goal_indices[0]]
    with pytest.raises(ValueError, match="not in catalogue 'mini'"):
        env.reset(options={"goal": dataclasses.replace(goal, asin="B000NOSUCH")})
    with pytest.raises(ValueError, match="either"):
        env.reset(options={"goal": goal, "goal_index": 0})


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (["goal_index"], r"must be a dict such as \{'goal_index': 3\} \(or None\), got a list: \['goal_"),
        ("x", r"must be a dict .* got a str: 'x'"),
        ({"goal_index": True}, r"goal_index must be an int .* got True"),
        ({"goal_index": False}, r"goal_index must be an int .* got False"),
        ({"goal_index": 1.0}, r"goal_index must be an int"),
        ({"goals": 1, 3: 2}, r"unknown reset options 'goals', 3; the options are 'goal_index' and 'goal'"),
    ],
)
def test_malformed_reset_options_get_clear_errors(options, message):
    """Issue 28.2: no AttributeError, no character-by-character list, True is not goal 1."""
    env = WebShopEnv(split="test")
    with pytest.raises(ValueError, match=message):
        env.reset(options=options)
    assert env.reset(options={"goal_index": np.int64(1)})[1]["goal_index"] == 1


@pytest.mark.parametrize("catalog", [123, None, ["mini"], 1.5])
def test_a_catalog_that_is_no_name_or_path_gets_a_clear_error(catalog):
    with pytest.raises(ValueError, match=r"catalog must be 'mini', '1k', 'full' or the path of a folder"):
        WebShopEnv(catalog=catalog)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [({"shaping_discount": "0.9"}, "shaping_discount"), ({"show_attributes": "yes"}, "show_attributes")],
)
def test_ill_typed_arguments_get_value_errors(kwargs, message):
    with pytest.raises(ValueError, match=message):
        WebShopEnv(**kwargs)


def test_a_goal_of_ones_own_is_played_and_scored_against():
    env = WebShopEnv(split="test")
    # The first test goal whose product offers an option value the goal does not ask for.
    split_goal, asked = next(
        (goal, value)
        for goal in (env.all_goals[i] for i in env.goal_indices)
        for values in env.catalog[goal.asin].options.values()
        for value in values
        if value not in goal.goal_options
    )
    goal = dataclasses.replace(split_goal, instruction_text=f"i want it in {asked}", goal_options=(asked,))
    observation, info = env.reset(options={"goal": goal})
    assert info["goal_index"] is None and info["instruction"] == f"i want it in {asked}"
    assert f"i want it in {asked}" in observation
    expert = ExpertPolicy(env)
    terminated = False
    while not terminated:
        _, reward, terminated, _, info = env.step(expert.act(observation, info))
    assert info["purchased_options"] and asked in info["purchased_options"].values()
    assert reward == info["score"]
    # Pickling keeps the goal, which no index names.
    env.reset(options={"goal": goal})
    assert pickle.loads(pickle.dumps(env)).goal == goal


def test_goal_index_selects_the_split_goal():
    env = WebShopEnv(split="dev")
    _, info = env.reset(options={"goal_index": 5})
    assert info["goal_index"] == 5
    assert env.goal == env.all_goals[env.goal_indices[5]]
    assert env.goal_indices[0] == 100  # mini dev starts after the 100 test goals


def test_step_before_reset_and_after_the_end():
    env = WebShopEnv(split="test")
    with pytest.raises(gym.error.ResetNeeded):
        env.step("search[shoes]")
    observation, info = env.reset(seed=0, options={"goal_index": 0})
    expert = ExpertPolicy(env)
    terminated = False
    while not terminated:
        observation, _, terminated, truncated, info = env.step(expert.act(observation, info))
        assert not truncated
    after = env.step("click[back to search]")
    assert after[1] == 0.0 and after[2] is True and "reset()" in after[4]["action_error"]


def test_step_limit_truncates():
    env = WebShopEnv(split="test", max_steps=3)
    env.reset(seed=0)
    outcomes = [env.step("click[nothing here]") for _ in range(3)]
    assert [o[3] for o in outcomes] == [False, False, True]
    assert [o[4]["steps_left"] for o in outcomes] == [2, 1, 0]


def test_non_string_action_is_reported_not_raised():
    env = WebShopEnv(split="test")
    observation, _ = env.reset(seed=0)
    for bad in (None, 3, b"search[x]", ["click[buy now]"]):
        after, reward, terminated, truncated, info = env.step(bad)
        assert after == observation and reward == 0.0 and not terminated and not truncated
        assert "string" in info["action_error"]
