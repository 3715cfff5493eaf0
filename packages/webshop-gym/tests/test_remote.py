"""`WebShop-Remote-v0` beyond the registry checks of test_envs.py: errors and server sharing."""

from __future__ import annotations

import socket

import gymnasium as gym
import pytest

import webshop_gym  # noqa: F401
from webshop_gym.envs import WebShopEnv
from webshop_gym.remote import RemoteEnvError, RemoteWebShopEnv
from webshop_gym.web import ServerConfig, create_app
from webshop_gym.web.server import ServerThread


@pytest.fixture(scope="module")
def server():
    with ServerThread(create_app(ServerConfig(catalog="mini"))) as running:
        yield running


def unused_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def test_unreachable_server_says_how_to_start_one() -> None:
    with pytest.raises(RemoteEnvError, match="webshop-gym serve"):
        RemoteWebShopEnv(server_url=f"http://127.0.0.1:{unused_port()}", timeout=5)


def test_server_url_from_the_environment(server, monkeypatch) -> None:
    monkeypatch.setenv("WEBSHOP_GYM_SERVER", server.url)
    env = gym.make("WebShop-Remote-v0", split="test")
    assert env.unwrapped.server_url == server.url
    env.close()


@pytest.mark.parametrize("url", ["127.0.0.1:8000", "ftp://host/", "http://"])
def test_bad_server_url(url: str) -> None:
    with pytest.raises(ValueError, match="server_url must look like"):
        RemoteWebShopEnv(server_url=url)


def test_errors_match_a_local_env(server) -> None:
    env = RemoteWebShopEnv(server_url=server.url, split="test")
    with pytest.raises(gym.error.ResetNeeded):
        env.step("search[shoes]")
    with pytest.raises(ValueError, match="goal_index"):
        env.reset(options={"goal_index": 10_000})
    with pytest.raises(ValueError, match="must be a dict"):
        env.reset(options=["goal_index"])
    with pytest.raises(ValueError, match="got True"):
        env.reset(options={"goal_index": True})
    with pytest.raises(RemoteEnvError, match="observation_mode"):
        RemoteWebShopEnv(server_url=server.url, observation_mode="pixels")
    env.close()
    with pytest.raises(gym.error.ClosedEnvironmentError):
        env.step("search[shoes]")


def test_an_env_the_server_dropped_is_reported(server) -> None:
    env = RemoteWebShopEnv(server_url=server.url, split="test")
    env.reset(seed=0)
    server.app.extensions["webshop_gym"].api_envs.remove(env.env_id)
    with pytest.raises(RemoteEnvError, match="HTTP 404: no env"):
        env.step("search[shoes]")


def test_render_and_html_mode_equal_a_local_env(server) -> None:
    remote = RemoteWebShopEnv(
        server_url=server.url, split="test", observation_mode="html", render_mode="ansi"
    )
    local = WebShopEnv(split="test", observation_mode="html", render_mode="ansi")
    assert remote.reset(seed=9) == local.reset(seed=9)
    assert remote.step("search[red dress]") == local.step("search[red dress]")
    assert remote.render() == local.render()
    remote.close()


def test_many_envs_share_one_server_catalogue(server) -> None:
    envs = [RemoteWebShopEnv(server_url=server.url, split="test") for _ in range(20)]
    instructions = [
        env.reset(seed=0, options={"goal_index": i})[1]["instruction"] for i, env in enumerate(envs)
    ]
    local = WebShopEnv(split="test")
    assert instructions == [local.reset(options={"goal_index": i})[1]["instruction"] for i in range(20)]
    for env in envs:
        env.close()
    assert len(server.app.extensions["webshop_gym"].api_envs) < 20
