"""What one client can cost a WebShop OpenEnv server (issue 40): sessions, threads, idle time.

Real uvicorn servers on 127.0.0.1 in this process, openenv-core's own client (async, on this
thread's event loop, so that the client adds no threads of its own); a second client address
is 127.0.0.2 (loopback too). Each test takes seconds.
"""

from __future__ import annotations

import asyncio
import json
import threading
import urllib.error
import urllib.request
from typing import Any

import pytest
import uvicorn
from websockets.asyncio.client import connect

from webshop_gym.cli import main
from webshop_gym.envs import WebShopEnv
from webshop_gym.integrations import openenv
from webshop_gym.integrations.openenv import (
    DEFAULT_IDLE_TIMEOUT,
    DEFAULT_MAX_SESSIONS,
    SessionClosedError,
    SessionConfig,
    WebShopAction,
    WebShopClient,
    create_webshop_app,
)

from .test_openenv import free_port, serving


async def session_from(url: str, address: str, goal_index: int = 0) -> Any:
    """A raw WebSocket session from ``address``: the server's answer to its first reset."""
    ws_url = url.replace("http://", "ws://") + "/ws"
    async with connect(ws_url, local_addr=(address, 0)) as ws:
        await ws.send(json.dumps({"type": "reset", "data": {"goal_index": goal_index}}))
        return json.loads(await ws.recv())


def test_one_client_holds_at_most_half_the_sessions_and_another_gets_one() -> None:
    """The issue's case: one client opening every slot locked the next one out."""
    app = create_webshop_app(SessionConfig(split="test"), max_sessions=4)

    async def scenario(url: str) -> None:
        hog = [WebShopClient(base_url=url) for _ in range(3)]
        await hog[0].reset(goal_index=0)
        await hog[1].reset(goal_index=1)
        with pytest.raises(RuntimeError, match=r"your address holds 2 of this server's 4 sessions.*CAPACITY"):
            await hog[2].reset(goal_index=2)
        answer = await session_from(url, "127.0.0.2", goal_index=3)  # another client still gets in
        assert answer["type"] == "observation"
        assert answer["data"]["observation"]["info"]["goal_index"] == 3
        for client in hog:
            await client.close()
        again = WebShopClient(base_url=url)  # slots free again once closed
        assert (await again.reset(goal_index=2)).observation.info["goal_index"] == 2
        await again.close()

    with serving(app) as url:
        asyncio.run(scenario(url))


def test_sessions_share_a_bounded_pool_of_threads() -> None:
    """40 live sessions add at most the pool's 3 threads (openenv-core alone: one thread per session)."""
    app = create_webshop_app(
        SessionConfig(split="test"), max_sessions=64, max_sessions_per_client=64, workers=3
    )

    async def scenario(url: str) -> int:
        before = threading.active_count()
        clients = [WebShopClient(base_url=url) for _ in range(40)]
        for number, client in enumerate(clients):
            result = await client.reset(goal_index=number % 10, seed=number)
            assert result.observation.info["goal_index"] == number % 10
            await client.step(WebShopAction(action="search[shoes]"))
        grown = threading.active_count() - before
        for client in clients:
            await client.close()
        return grown

    with serving(app) as url:
        assert asyncio.run(scenario(url)) <= 3 + 1  # the pool, and openenv-core's one setup thread


def test_a_silent_session_is_closed_at_its_idle_timeout_and_the_client_says_what_to_do() -> None:
    app = create_webshop_app(SessionConfig(split="test"), max_sessions=1, idle_timeout=1.0)

    async def scenario(url: str) -> None:
        idle = WebShopClient(base_url=url)
        await idle.reset(goal_index=0)
        await asyncio.sleep(1.8)  # openenv-core alone would look at 5 s and leave the socket open
        fresh = WebShopClient(base_url=url)
        assert (await fresh.reset(goal_index=1)).observation.info["goal_index"] == 1  # the slot is free
        await fresh.close()
        with pytest.raises(SessionClosedError, match=r"idle for 1 s.*episode is gone: call reset\(\)"):
            await idle.step(WebShopAction(action="search[shoes]"))
        result = await idle.reset(goal_index=4, seed=0)  # reconnects: a new session
        expected = WebShopEnv(catalog="mini", split="test").reset(seed=0, options={"goal_index": 4})[0]
        assert result.observation.text == expected
        await idle.close()

    with serving(app) as url:
        asyncio.run(scenario(url))


def test_a_dropped_connection_says_what_to_do() -> None:
    async def scenario(url: str) -> None:
        client = WebShopClient(base_url=url)
        await client.reset(goal_index=0)
        assert client._ws is not None
        client._ws.transport.abort()  # the network fails: no close frame
        with pytest.raises(SessionClosedError, match=r"is closed .*call reset\(\) to connect again"):
            await client.step(WebShopAction(action="search[shoes]"))
        assert (await client.reset(goal_index=1)).observation.info["goal_index"] == 1
        await client.close()

    with serving(create_webshop_app(SessionConfig(split="test"))) as url:
        asyncio.run(scenario(url))


@pytest.mark.parametrize(
    ("body", "reason"),
    [
        ({"split": "holdout"}, "split must be one of train, dev, test, all, got 'holdout'"),
        ({"goal_index": 10**6}, "goal_index must be an int in [0, "),
        ({"goal_index": "3"}, "goal_index"),
        ({"goal": 3}, "reset takes seed, episode_id, goal_index, split, catalog and goals, not goal"),
        ({"split": "x" * 5000}, "(5002 characters)"),
    ],
)
def test_http_reset_with_a_bad_argument_is_a_400_with_the_reason(body: dict[str, Any], reason: str) -> None:
    with serving(create_webshop_app(SessionConfig(split="test"))) as url:
        request = urllib.request.Request(
            f"{url}/reset", data=json.dumps(body).encode(), headers={"Content-Type": "application/json"}
        )
        with pytest.raises(urllib.error.HTTPError) as raised:
            urllib.request.urlopen(request, timeout=10)
        assert raised.value.code == 400
        detail = json.load(raised.value)["detail"]
        assert reason in detail and len(detail) < 300


def test_serve_openenv_defaults_are_the_modules(monkeypatch: pytest.MonkeyPatch) -> None:
    """``serve --protocol openenv`` used to default to 10,000 sessions, 100 steps and an hour idle."""
    made: dict[str, Any] = {}

    def fake_app(config: SessionConfig, **limits: Any) -> str:
        made.update(limits, max_steps=config.max_steps)
        return "app"

    ran: list[uvicorn.Config] = []
    monkeypatch.setattr(openenv, "create_webshop_app", fake_app)
    monkeypatch.setattr(uvicorn.Server, "run", lambda self, sockets=None: ran.append(self.config))
    assert main(["serve", "--protocol", "openenv", "--port", str(free_port())]) == 0
    assert made == {
        "max_sessions": DEFAULT_MAX_SESSIONS,
        "idle_timeout": DEFAULT_IDLE_TIMEOUT,
        "max_sessions_per_client": None,
        "workers": 8,
        "max_steps": 15,
    }
    assert (DEFAULT_MAX_SESSIONS, DEFAULT_IDLE_TIMEOUT) == (64, 300.0)
    assert ran and ran[0].ws_max_size <= 1 << 20  # a client's message is small: a reset or an action
