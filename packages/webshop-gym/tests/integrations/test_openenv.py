"""WebShop over OpenEnv: openenv-core's own client against real servers on 127.0.0.1.

Every episode played through the client is compared with the same goal, seed and actions on
a local `WebShopEnv`: the page, the reward, the end flags and the info must be the same.
"""

from __future__ import annotations

import json
import re
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
import uvicorn
from fastapi import FastAPI
from openenv.auto._discovery import get_discovery

from webshop_gym.agents.scripted import ExpertPolicy, RulePolicy, run_episode
from webshop_gym.cli import main
from webshop_gym.envs import MAX_ACTION_CHARS, Split, WebShopEnv
from webshop_gym.integrations.openenv import (
    NO_EPISODE,
    SessionClosedError,
    SessionConfig,
    WebShopAction,
    WebShopClient,
    WebShopObservation,
    create_webshop_app,
)

README = Path(__file__).resolve().parents[2] / "README.md"
SPLIT: Split = "test"
MAX_STEPS = 15

Step = tuple[str, str, float, bool, bool, dict[str, Any]]  # action, page, reward, terminated, truncated, info


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def get_json(url: str) -> Any:
    with urllib.request.urlopen(url, timeout=10) as response:
        return json.load(response)


def post_json(url: str, payload: dict[str, Any]) -> Any:
    request = urllib.request.Request(
        url, data=json.dumps(payload).encode(), headers={"Content-Type": "application/json"}
    )
    with urllib.request.urlopen(request, timeout=10) as response:
        return json.load(response)


@pytest.fixture(scope="module")
def server_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """``webshop-gym serve --protocol openenv`` in its own process, over the bundled catalogue."""
    port = free_port()
    log = tmp_path_factory.mktemp("openenv-server") / "server.log"  # a file: an unread pipe can stall it
    command = [
        sys.executable, "-m", "webshop_gym.cli", "serve", "--protocol", "openenv", "--catalog", "mini",
        "--split", SPLIT, "--max-steps", str(MAX_STEPS), "--max-sessions", "16", "--port", str(port),
    ]  # fmt: skip
    with log.open("w") as sink:
        server = subprocess.Popen(command, stdout=sink, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 120
        while True:
            try:
                assert get_json(f"{url}/health") == {"status": "healthy"}
                break
            except OSError:
                if server.poll() is not None or time.monotonic() > deadline:
                    pytest.fail(f"the OpenEnv server did not start: {log.read_text()}")
                time.sleep(0.2)
        yield url
    finally:
        server.terminate()
        server.wait(timeout=30)


@contextmanager
def serving(app: FastAPI) -> Iterator[str]:
    """``app`` on uvicorn in a thread of this process, on a free port of 127.0.0.1."""
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=free_port(), log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        assert thread.is_alive() and time.monotonic() < deadline, "uvicorn did not start"
        time.sleep(0.05)
    try:
        yield f"http://127.0.0.1:{server.config.port}"
    finally:
        server.should_exit = True
        thread.join(timeout=30)


def client(url: str) -> Any:
    """openenv-core's blocking client (``EnvClient.sync()``) for a WebShop server."""
    return WebShopClient(base_url=url).sync()


def local_env(split: Split = SPLIT) -> WebShopEnv:
    return WebShopEnv(catalog="mini", split=split, max_steps=MAX_STEPS)


def gym_info(observation: WebShopObservation) -> dict[str, Any]:
    """The Gymnasium env's ``info`` put back together from the observation's fields."""
    return {
        **observation.info,
        "available_actions": observation.available_actions,
        "action_error": observation.action_error,
    }


def as_json(value: Any) -> Any:
    return json.loads(json.dumps(value))


def expert_episode(goal_index: int, seed: int) -> tuple[tuple[str, dict[str, Any]], list[Step]]:
    """The scripted expert's episode on a local env: the reset's (page, info), then every step."""
    env = local_env()
    policy = ExpertPolicy(env)
    observation, info = env.reset(seed=seed, options={"goal_index": goal_index})
    first, steps, done = (observation, info), [], False
    while not done:
        action = policy.act(observation, info)
        observation, reward, terminated, truncated, info = env.step(action)
        steps.append((action, observation, reward, terminated, truncated, info))
        done = terminated or truncated
    return first, steps


@pytest.mark.parametrize("goal_index", [0, 4, 9])
def test_an_expert_episode_through_the_client_is_the_local_envs(server_url: str, goal_index: int) -> None:
    (first_page, first_info), steps = expert_episode(goal_index, seed=goal_index)
    with client(server_url) as env:
        result = env.reset(split=SPLIT, goal_index=goal_index, seed=goal_index)
        assert (result.observation.text, gym_info(result.observation)) == (first_page, as_json(first_info))
        assert (result.reward, result.done) == (None, False)
        for action, page, reward, terminated, truncated, info in steps:
            result = env.step(WebShopAction(action=action))
            assert result.observation.text == page
            assert gym_info(result.observation) == as_json(info)
            assert (result.reward, result.done, result.observation.truncated) == (
                reward,
                terminated or truncated,
                truncated,
            )
        state = env.state()
    assert result.reward == 1.0 and result.observation.info["success"]  # the expert buys exactly
    assert result.observation.info["purchased_asin"] == steps[-1][5]["purchased_asin"]
    assert (state.split, state.goal_index, state.page, state.step_count) == (
        SPLIT,
        goal_index,
        "done",
        len(steps),
    )
    assert state.instruction == first_info["instruction"]


def test_the_rule_baseline_plays_from_the_clients_observations_alone(server_url: str) -> None:
    """RulePolicy reads only what the client returns and scores what it scores on a local env."""
    expected = run_episode(local_env(), RulePolicy(), seed=0, goal_index=0)
    policy = RulePolicy()
    total, steps = 0.0, 0
    with client(server_url) as env:
        result = env.reset(split=SPLIT, goal_index=0, seed=0)
        while not result.done:
            action = policy.act(result.observation.text, gym_info(result.observation))
            result = env.step(WebShopAction(action=action))
            total, steps = total + result.reward, steps + 1
    assert (total, steps) == (expected["return"], expected["steps"])
    assert result.observation.info["reward_breakdown"] == as_json(expected["reward_breakdown"])
    assert 0.0 < total < 1.0  # test goal 0: the first hit lacks the goal's options, so the parts matter


def test_reset_plays_goals_of_the_fixed_splits(server_url: str) -> None:
    with client(server_url) as env:
        splits: tuple[Split, ...] = ("train", "dev", "test", "all")
        for split in splits:
            observation = env.reset(split=split, goal_index=3).observation
            assert observation.info["instruction"] == local_env(split).goal_at(3).instruction_text
            assert env.state().split == split
        drawn = env.reset(split="train", seed=11).observation  # no goal_index: a seeded draw from the split
        assert drawn.info["goal_index"] == local_env("train").reset(seed=11)[1]["goal_index"]
        assert env.reset(split="train", seed=11).observation.info == drawn.info
        default = env.reset(goal_index=3).observation  # no split: the server's --split
        assert default.info["instruction"] == local_env(SPLIT).goal_at(3).instruction_text


def test_an_invalid_action_is_reported_and_changes_nothing(server_url: str) -> None:
    env = local_env()
    page, _ = env.reset(seed=1, options={"goal_index": 1})
    _, reward, terminated, truncated, info = env.step("click[no such button]")
    with client(server_url) as remote:
        remote.reset(goal_index=1, seed=1)
        result = remote.step(WebShopAction(action="click[no such button]"))
        assert remote.state().step_count == 1  # an invalid action still uses a step, as in the env
    assert result.observation.action_error == info["action_error"] != ""
    assert gym_info(result.observation) == as_json(info)
    assert (result.observation.text, result.reward, result.done) == (page, reward, terminated or truncated)


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({"goal_index": 10**6}, "goal_index must be an int in [0, "),
        ({"split": "holdout"}, "split must be one of train, dev, test, all, got 'holdout'"),
        ({"seed": -1}, "seed must be a non-negative int or None, got -1"),
        ({"goal": 3}, "reset takes seed, episode_id, goal_index, split, catalog and goals, not goal"),
    ],
)
def test_bad_reset_arguments_are_refused_with_the_reason(
    server_url: str, arguments: dict[str, Any], message: str
) -> None:
    with client(server_url) as env:
        with pytest.raises(RuntimeError, match=re.escape(message)):
            env.reset(**arguments)
        assert env.reset(goal_index=2).observation.info["goal_index"] == 2  # the session goes on


def test_an_action_longer_than_the_env_takes_is_refused(server_url: str) -> None:
    too_long = WebShopAction.model_construct(action="x" * (MAX_ACTION_CHARS + 1))  # past client checks
    with client(server_url) as env:
        env.reset(goal_index=0)
        with pytest.raises(RuntimeError, match="VALIDATION_ERROR"):
            env.step(too_long)
        assert env.step(WebShopAction(action="search[shoes]")).observation.info["page"] == "results"


def test_the_routes_pass_openenvs_own_runtime_check(server_url: str) -> None:
    checked = subprocess.run(
        [sys.executable, "-m", "openenv.cli", "validate", "--url", server_url],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert json.loads(checked.stdout)["passed"] is True
    schema = get_json(f"{server_url}/schema")
    assert "action" in schema["action"]["properties"]
    assert {"text", "available_actions", "action_error", "truncated", "info"} <= set(
        schema["observation"]["properties"]
    )
    metadata = get_json(f"{server_url}/metadata")
    assert metadata["name"] == "WebShop" and "'mini'" in metadata["description"]
    # Plain HTTP has no session: a /step runs on a fresh env and says so; a /reset starts a goal.
    stepped = post_json(f"{server_url}/step", {"action": {"action": "click[buy now]"}})
    assert stepped["observation"]["action_error"] == NO_EPISODE
    reset = post_json(f"{server_url}/reset", {"seed": 0, "split": "dev", "goal_index": 2})
    assert reset["observation"]["info"]["instruction"] == local_env("dev").goal_at(2).instruction_text


def test_concurrent_sessions_each_play_their_own_episode(server_url: str) -> None:
    goals = range(8)
    expected = {goal: expert_episode(goal, seed=100 + goal) for goal in goals}
    pages: dict[int, list[str]] = {}
    errors: list[str] = []
    start = threading.Barrier(len(goals))

    def play(goal: int) -> None:
        try:
            with client(server_url) as env:
                start.wait(timeout=60)
                env.reset(split=SPLIT, goal_index=goal, seed=100 + goal)
                pages[goal] = [
                    env.step(WebShopAction(action=s[0])).observation.text for s in expected[goal][1]
                ]
        except Exception as error:  # reported below, with the goal
            errors.append(f"goal {goal}: {type(error).__name__}: {error}")

    players = [threading.Thread(target=play, args=(goal,)) for goal in goals]
    for player in players:
        player.start()
    for player in players:
        player.join(timeout=120)
    assert errors == []
    assert pages == {goal: [step[1] for step in expected[goal][1]] for goal in goals}


def connect_when_a_slot_frees(url: str, seconds: float) -> Any:
    """A client whose reset got a session, trying again while the server is full."""
    deadline = time.monotonic() + seconds
    while True:
        env = client(url)
        try:
            env.reset(goal_index=0)
            return env
        except RuntimeError as error:
            env.close()
            if "CAPACITY_REACHED" not in str(error) or time.monotonic() > deadline:
                raise
            time.sleep(0.2)


def test_sessions_beyond_the_cap_are_refused_until_one_closes() -> None:
    with serving(create_webshop_app(SessionConfig(split=SPLIT), max_sessions=2)) as url:
        first, second, third = client(url), client(url), client(url)
        first.reset(goal_index=0)
        second.reset(goal_index=1)
        with pytest.raises(RuntimeError, match="CAPACITY_REACHED"):
            third.reset(goal_index=2)
        third.close()
        first.close()  # returns once the server has ended its session: the slot is free now
        fourth = client(url)
        assert fourth.reset(goal_index=3).observation.info["goal_index"] == 3
        assert second.step(WebShopAction(action="search[shoes]")).observation.info["goal_index"] == 1
        second.close()
        fourth.close()


def test_an_idle_session_is_closed_and_its_slot_freed() -> None:
    app = create_webshop_app(SessionConfig(split=SPLIT), max_sessions=1, idle_timeout=1.0)
    with serving(app) as url:
        idle = client(url)
        idle.reset(goal_index=0)
        fresh = connect_when_a_slot_frees(url, seconds=30)
        # Since issue 40 the server closes the WebSocket too, and says why in the close frame.
        closed = r"idle for 1 s: session closed; reset\(\) connects again"
        with pytest.raises(SessionClosedError, match=closed):
            idle.step(WebShopAction(action="search[shoes]"))
        assert fresh.step(WebShopAction(action="search[shoes]")).observation.info["page"] == "results"
        idle.close()
        fresh.close()


def test_serve_openenv_refuses_the_web_shops_options(capsys: pytest.CaptureFixture[str]) -> None:
    # (--threads sizes the OpenEnv server's worker pool too since issue 40.)
    assert main(["serve", "--protocol", "openenv", "--product-images", "catalog", "--no-log"]) == 2
    assert "--product-images, --no-log belong to --protocol web" in capsys.readouterr().err


def test_serve_openenv_without_the_data_says_what_to_do(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["serve", "--protocol", "openenv", "--catalog", str(tmp_path / "nowhere")]) == 2
    assert "nowhere" in capsys.readouterr().err


def test_serve_openenv_on_a_port_in_use_says_so(capsys: pytest.CaptureFixture[str]) -> None:
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        port = listener.getsockname()[1]
        assert main(["serve", "--protocol", "openenv", "--port", str(port)]) == 2
    assert f"cannot listen on 127.0.0.1:{port}: the port is in use" in capsys.readouterr().err


def test_the_readmes_openenv_example_runs(server_url: str, capsys: pytest.CaptureFixture[str]) -> None:
    """The client lines of the README's OpenEnv section (AutoEnv, the installed webshop_env), against
    the module's server."""
    get_discovery().clear_cache()  # AutoEnv's file cache in the temp folder may predate the install
    section = README.read_text(encoding="utf-8").split("### OpenEnv", 1)[1]
    code = re.search(r"```python\n(.*?)```", section, re.S)
    assert code is not None
    exec(compile(code.group(1).replace("http://127.0.0.1:8000", server_url), str(README), "exec"), {})
    assert capsys.readouterr().out.splitlines() == ["0.6666666666666666 True 1.0"]
