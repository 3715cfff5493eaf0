"""The JSON API under clients that take too much or send nonsense (issue 40).

Flask's test client; each "client" has its own address (``REMOTE_ADDR``).
"""

from __future__ import annotations

import logging
import math
from typing import Any

import pytest

from webshop_gym.envs import MAX_ACTION_CHARS, WebShopEnv
from webshop_gym.web import ServerConfig, create_app

JSON = {"Content-Type": "application/json"}


def client_at(app: Any, address: str) -> Any:
    client = app.test_client()
    client.environ_base["REMOTE_ADDR"] = address
    return client


def new_env(client: Any, reset: bool = True) -> tuple[int, str | None]:
    answer = client.post("/api/v1/envs", json={"split": "test"})
    env_id = answer.get_json().get("env_id")
    if reset and answer.status_code == 201:
        assert client.post(f"/api/v1/envs/{env_id}/reset", json={"seed": 0}).status_code == 200
    return answer.status_code, env_id


def test_one_client_cannot_hold_every_env() -> None:
    """The issue's case: a client that keeps its envs busy held all 20; another was refused."""
    app = create_app(ServerConfig(catalog="mini", max_sessions=20))
    assert app.test_client().get("/api/v1").get_json()["max_envs_per_client"] == 10
    hog, other = client_at(app, "10.0.0.1"), client_at(app, "10.0.0.2")
    made = [new_env(hog) for _ in range(10)]
    assert [status for status, _ in made] == [201] * 10
    refused = hog.post("/api/v1/envs", json={})
    assert refused.status_code == 429
    message = refused.get_json()["error"]
    assert "holds 10 envs, the most one client may hold" in message and "env.close()" in message
    assert new_env(other)[0] == 201  # the other client is served
    assert hog.delete(f"/api/v1/envs/{made[0][1]}").status_code == 204  # closing one makes room
    assert new_env(hog)[0] == 201


def test_a_client_at_its_limit_gives_up_an_env_it_never_used() -> None:
    app = create_app(ServerConfig(catalog="mini", max_sessions=100, max_envs_per_client=3))
    client = client_at(app, "10.0.0.1")
    played = [new_env(client)[1] for _ in range(2)]
    _, unused = new_env(client, reset=False)
    status, newest = new_env(client)
    assert status == 201
    assert client.post(f"/api/v1/envs/{unused}/reset", json={}).status_code == 404  # it made room
    for env_id in (*played, newest):
        assert client.post(f"/api/v1/envs/{env_id}/step", json={"action": "search[x]"}).status_code == 200
    assert client.post("/api/v1/envs", json={}).status_code == 429  # all three in use now


def test_forks_count_towards_the_limit() -> None:
    app = create_app(ServerConfig(catalog="mini", max_sessions=100, max_envs_per_client=2))
    client = client_at(app, "10.0.0.1")
    _, env_id = new_env(client)
    assert client.post(f"/api/v1/envs/{env_id}/fork").status_code == 201
    assert client.post(f"/api/v1/envs/{env_id}/fork").status_code == 429


@pytest.fixture
def api() -> Any:
    client = create_app(ServerConfig(catalog="mini")).test_client()
    env_id = client.post("/api/v1/envs", json={"split": "test"}).get_json()["env_id"]
    client.post(f"/api/v1/envs/{env_id}/reset", json={"seed": 0, "options": {"goal_index": 0}})
    return client, f"/api/v1/envs/{env_id}"


@pytest.mark.parametrize(
    ("path", "body", "reason"),
    [
        ("/step", '{"action": NaN}', "NaN is not a JSON number"),
        ("/step", '{"action": "search[x]", "extra": Infinity}', "Infinity is not a JSON number"),
        ("/reset", '{"seed": -Infinity}', "-Infinity is not a JSON number"),
        ("/reset", '{"options": {"goal_index": 1e999}}', "1e999 is too large for a number"),
        ("/restore", '{"last_potential": NaN}', "NaN is not a JSON number"),
        ("", '{"shaping_discount": 1e400}', "too large for a number"),
        ("/step", '{"action": "search[x]"', "the body is not valid JSON"),
        ("/step", '["search[x]"]', "the body must be a JSON object, got list"),
        ("/step", '{"act": "search[x]"}', "unknown fields ['act']"),
    ],
)
def test_bad_bodies_get_400_with_the_reason(api: Any, path: str, body: str, reason: str) -> None:
    client, env = api
    target = "/api/v1/envs" if path == "" else env + path
    answer = client.post(target, data=body, headers=JSON)
    assert answer.status_code == 400, answer.get_data(as_text=True)
    assert reason in answer.get_json()["error"]


def test_an_action_longer_than_the_action_space_allows_is_refused(api: Any) -> None:
    client, env = api
    too_long = "search[" + "x" * MAX_ACTION_CHARS + "]"
    answer = client.post(env + "/step", json={"action": too_long})
    assert answer.status_code == 400
    error = answer.get_json()["error"]
    assert f"{len(too_long)} characters long; actions are at most {MAX_ACTION_CHARS}" in error
    assert len(error) < 400
    # The longest allowed action is still an action, and the episode went on untouched.
    longest = "search[" + "x" * (MAX_ACTION_CHARS - 8) + "]"
    step = client.post(env + "/step", json={"action": longest}).get_json()
    assert step["info"]["page"] == "results"


def test_long_inputs_are_elided_in_error_messages() -> None:
    client = create_app(ServerConfig(catalog="mini")).test_client()
    answer = client.post("/api/v1/envs", json={"split": "x" * 50_000})
    error = answer.get_json()["error"]
    assert answer.status_code == 400 and len(error) <= 400
    assert error.startswith("split='xxx") and "characters left out" in error
    assert error.endswith("'train', 'dev', 'test', 'all'")  # what to send instead survives


def test_numbers_json_cannot_carry_are_never_sent(api: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    client, env = api
    real_step = WebShopEnv.step

    def nan_reward(self: WebShopEnv, action: Any) -> Any:
        observation, _, terminated, truncated, info = real_step(self, action)
        return observation, math.nan, terminated, truncated, info

    monkeypatch.setattr(WebShopEnv, "step", nan_reward)
    answer = client.post(env + "/step", json={"action": "search[shoes]"})
    assert answer.status_code == 500
    assert "NaN" not in answer.get_data(as_text=True).replace("NaN or Infinity", "")
    assert "JSON cannot carry" in answer.get_json()["error"]


def test_the_error_log_never_holds_a_whole_env_id(
    api: Any, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    client, env = api
    env_id = env.rsplit("/", 1)[1]

    def broken(self: WebShopEnv) -> Any:
        raise RuntimeError("render failed")

    monkeypatch.setattr(WebShopEnv, "render", broken)
    with caplog.at_level(logging.ERROR):
        assert client.get(env + "/render").status_code == 500
    logged = "\n".join(record.getMessage() for record in caplog.records)
    assert f"/api/v1/envs/{env_id[:6]}…/render" in logged
    assert env_id not in logged
