"""WebShop as an OpenEnv environment, served by openenv-core's own server and played with its client.

Server side, `WebShopEnvironment` is an openenv-core ``Environment``: every session (one
client's WebSocket connection) gets its own `WebShopEnv` over the catalogue the server
loaded once. `create_webshop_app` hands it to openenv-core's ``create_app``, which serves
``/ws`` (sessions), ``/reset``, ``/step``, ``/state``, ``/schema``, ``/metadata`` and
``/health``, caps the live sessions and closes sessions left idle too long. From a shell::

    webshop-gym serve --protocol openenv --catalog mini --max-steps 15 --port 8000

Client side, `WebShopClient` is an openenv-core ``EnvClient`` (async; ``.sync()`` gives a
blocking one)::

    from webshop_gym.integrations.openenv import WebShopAction, WebShopClient

    with WebShopClient(base_url="http://127.0.0.1:8000").sync() as env:
        result = env.reset(split="test", goal_index=0, seed=0)
        instruction = result.observation.info["instruction"]
        result = env.step(WebShopAction(action=f"search[{instruction}]"))
        print(result.observation.available_actions[:3], result.reward, result.done)

``reset`` takes ``split`` (``train``, ``dev``, ``test`` or ``all``; the server's default split
when left out), ``goal_index`` (goal i of that split, as ``WebShopEnv.reset(options={"goal_index":
i})``; a draw from the split with ``seed`` when left out), ``seed`` and ``episode_id``. Goals
always come from the fixed splits. The observation carries the page (``text``), the
``available_actions``, the ``action_error`` of the last action ("" when it was valid), ``reward``,
``done`` (bought, or out of steps: then ``truncated`` too) and the rest of the env's ``info``
(``instruction``, ``goal_index``, ``page``, ``steps_left``; at the purchase ``reward_breakdown``,
``score``, ``success``, ``purchased_asin``, ``purchased_options``).

openenv-core runs each plain-HTTP ``/reset`` and ``/step`` on a fresh env that is closed after
the call, so episodes go through the client (the WebSocket); a ``/step`` with no episode says so
in ``action_error``, and a ``/reset`` with a bad argument is answered 400 with the reason.

Every session is also an MCP environment (openenv-core's ``MCPEnvironment``): the tools
``search(query)`` and ``click(button)`` play one step of its episode and answer the page as
text (`tool_text`); ``WebShopClient.list_tools`` and ``call_tool`` reach them over the session's
WebSocket, JSON-RPC at ``/mcp`` too. `WebShopServerToolEnv` is TRL's ``environment_factory`` over
a server. The OpenEnv env package (``webshop_env``: OpenEnv's layout, found by ``AutoEnv``) is
``packages/webshop-gym/openenv/webshop_env``.

What one client can cost the server is bounded (`create_webshop_app`): live sessions in all
(64 by default) and per client address (half of them by default); a session whose client
sends nothing for ``idle_timeout`` seconds (300 by default) is closed, WebSocket and all, with
the reason in the close frame; every session's resets and steps run on one pool of
``workers`` threads, not a thread per session. `WebShopClient` reports a dropped connection
with what to do (``reset()`` connects again and starts a new episode).

Example (the environment itself, without a server):
    >>> from webshop_gym.integrations.openenv import SessionConfig, WebShopAction, WebShopEnvironment
    >>> env = WebShopEnvironment(SessionConfig(catalog="mini", split="test"))
    >>> observation = env.reset(goal_index=0, seed=0)
    >>> observation.available_actions, observation.done
    (['search[<query>]'], False)
    >>> observation = env.step(WebShopAction(action="click[buy now]"))
    >>> observation.action_error
    "No clickable 'buy now' on this page. Valid actions: search[<query>]."
    >>> env.state.step_count, env.state.page
    (1, 'search')
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import functools
import json
import uuid
from collections.abc import Awaitable, Callable, MutableMapping
from concurrent.futures import Executor, ThreadPoolExecutor
from typing import Any

try:
    from fastapi import FastAPI
    from fastmcp import FastMCP
    from openenv.core import EnvClient
    from openenv.core.client_types import StepResult
    from openenv.core.env_server import Action, ConcurrencyConfig, Observation, State, create_app
    from openenv.core.env_server.mcp_environment import MCPEnvironment
    from openenv.core.env_server.mcp_types import Tool
    from openenv.core.env_server.types import EnvironmentMetadata
    from pydantic import Field
    from starlette.requests import Request
    from starlette.responses import JSONResponse
    from websockets.asyncio.client import ClientConnection
    from websockets.exceptions import ConnectionClosed
except ImportError as missing:  # openenv-core (with fastapi, fastmcp, websockets) is the extra's
    raise ImportError(
        f"webshop_gym.integrations.openenv runs on openenv-core, and {missing.name} is not installed: "
        "pip install 'webshop-gym[openenv]'"
    ) from missing

from webshop_gym import __version__
from webshop_gym.actions import click_action, search_action
from webshop_gym.envs import (
    MAX_ACTION_CHARS,
    SPLITS,
    GoalSource,
    ObservationMode,
    RewardVariant,
    Split,
    WebShopEnv,
)
from webshop_gym.integrations.tools import ENDED, ShopTools, tool_text

__all__ = [
    "BadResetError",
    "SessionClosedError",
    "SessionConfig",
    "WebShopAction",
    "WebShopClient",
    "WebShopEnvironment",
    "WebShopObservation",
    "WebShopServerToolEnv",
    "WebShopState",
    "create_webshop_app",
]

# What a server holds at most by default: each live session is an env and a WebSocket.
DEFAULT_MAX_SESSIONS = 64
# A client that sends nothing for this long loses its session (an LLM agent thinks for seconds,
# rarely minutes, between steps).
DEFAULT_IDLE_TIMEOUT = 300.0
# Threads that run every session's resets and steps (they hold the GIL: more would not help).
DEFAULT_WORKERS = 8
# The largest message a client reads: an observation is at most MAX_OBSERVATION_CHARS (1 Mi)
# characters, a few bytes each in JSON (openenv-core's own default is 100 MB).
CLIENT_MAX_MESSAGE_MB = 16.0
# WebSocket close codes of the server's own (4000-4999: for applications).
IDLE_CLOSE_CODE = 4408
NO_EPISODE = (
    "no episode is running: reset first (over plain HTTP every /step runs on a fresh env; "
    "play episodes through WebShopClient, which keeps one session)"
)
CLOSED = (
    "this WebShop session is closed (it was idle longer than the server's session timeout, or the "
    "server is stopping): connect a new client"
)
# The info keys the observation carries as fields of their own; the rest stay in ``info``.
_OWN_FIELDS = ("available_actions", "action_error")


class BadResetError(ValueError):
    """A reset argument the env cannot take (HTTP ``/reset`` answers it 400)."""


class SessionClosedError(RuntimeError):
    """The client's connection to the server is gone, and with it the session's episode."""


class WebShopAction(Action):
    """One WebShop action, as the Gymnasium env takes it."""

    action: str = Field(
        max_length=MAX_ACTION_CHARS,
        description="search[keywords] where the page has a search bar, or click[button text] "
        "(case-insensitive); an invalid one is reported in action_error, never raised",
    )


class WebShopObservation(Observation):
    """What the env shows after a reset or a step (``reward`` and ``done`` come from ``Observation``)."""

    text: str = Field(
        default="", description="the page, in the server's observation mode (text, text_rich, html)"
    )
    available_actions: list[str] = Field(
        default_factory=list, description="the actions valid now; search[<query>] stands for any keywords"
    )
    action_error: str = Field(default="", description='why the last action was invalid; "" when it was valid')
    truncated: bool = Field(default=False, description="the episode ran out of steps (done is then True)")
    info: dict[str, Any] = Field(
        default_factory=dict,
        description="the rest of WebShopEnv's info: instruction, goal_index, page, steps_left; at the "
        "purchase also reward_breakdown, score, success, purchased_asin, purchased_options",
    )


class WebShopState(State):
    """The session's episode: its split and goal, the page it is on (``None`` before a reset), its
    return so far and whether it is over (what an MCP client, whose tools return pages, reads)."""

    split: str | None = None
    goal_index: int | None = None
    instruction: str | None = None
    page: str | None = None
    episode_return: float = 0.0
    done: bool = False


@dataclasses.dataclass(frozen=True)
class SessionConfig:
    """The `WebShopEnv` arguments every session's env gets (see `WebShopEnv` for each).

    ``split`` is the split of a reset that names none; a reset may name another.
    """

    catalog: str = "mini"
    observation_mode: ObservationMode = "text"
    goals: GoalSource = "human"
    split: Split = "train"
    search_engine: str = "bm25"
    reward: RewardVariant = "original"
    shaping_discount: float = 1.0
    max_steps: int = 15
    show_attributes: bool = False

    def make_env(self, split: str | None = None) -> WebShopEnv:
        """A new env with these arguments (over the shared, already loaded catalogue after the first)."""
        arguments = dataclasses.asdict(self)
        if split is not None:
            arguments["split"] = split
        return WebShopEnv(**arguments)


class WebShopEnvironment(MCPEnvironment):
    """One session of WebShop for openenv-core's server: an env per split it plays.

    Actions come two ways, on the same episode: as typed steps (`WebShopAction`, answered with a
    `WebShopObservation`), and as the MCP tools ``search(query)`` and ``click(button)``
    (openenv-core's ``MCPEnvironment``: JSON-RPC ``tools/list`` and ``tools/call`` at ``/mcp`` and
    over the session's WebSocket), whose result is the page as text (see `tool_text`). A reset
    starts the episode either way.

    Every env of the server shares the catalogue, goals and search index (read-only). On a
    server, resets, steps and tool calls run on ``executor``, the pool every session shares
    (openenv-core's server calls the async methods); the session's own setup and close are
    trivial and share one thread (``REQUIRES_SINGLE_THREAD_EXECUTOR``), so sessions cost no
    thread each.
    """

    SUPPORTS_CONCURRENT_SESSIONS = True
    REQUIRES_SINGLE_THREAD_EXECUTOR = True

    def __init__(self, config: SessionConfig = SessionConfig(), executor: Executor | None = None) -> None:
        super().__init__(self._tools())
        self.config = config
        self._executor = executor
        self._envs: dict[str, WebShopEnv] = {}  # made at the first reset of each split
        self._env: WebShopEnv | None = None
        self._split: str | None = None
        self._episode_id: str | None = None
        self._return = 0.0
        self._done = False
        self._closed = False

    def _tools(self) -> FastMCP:
        """The MCP tools of this session: one env step each, the page (as `tool_text`) as the result."""
        tools = FastMCP("webshop")

        @tools.tool
        async def search(query: str) -> str:
            """Searches the shop, from a page with a search bar.

            Args:
                query: The keywords to search for, e.g. "red running shoes size 9".
            """
            return await self._play_tool(search_action(query))

        @tools.tool
        async def click(button: str) -> str:
            """Clicks a button of the current page: a product id, an option, a tab, "< Prev", "Buy Now".

            Args:
                button: The button's text as the page shows it, e.g. "Buy Now" or a product id.
            """
            return await self._play_tool(click_action(button))

        return tools

    def reset(
        self,
        seed: int | None = None,
        episode_id: str | None = None,
        goal_index: int | None = None,
        split: str | None = None,
        catalog: str | None = None,
        goals: str | None = None,
        **unknown: Any,
    ) -> WebShopObservation:
        """Starts an episode on goal ``goal_index`` of ``split`` (see the module docstring).

        ``catalog`` and ``goals``, when given, must be the server's: a client that names the goal
        of another catalogue is told so instead of playing a different goal.
        """
        self._check_open()
        if unknown:
            names = _elided(", ".join(sorted(unknown)))
            raise BadResetError(
                f"reset takes seed, episode_id, goal_index, split, catalog and goals, not {names}"
            )
        if seed is not None and (not isinstance(seed, int) or isinstance(seed, bool) or seed < 0):
            raise BadResetError(f"seed must be a non-negative int or None, got {_shown(seed)}")
        if episode_id is not None and not isinstance(episode_id, str):
            raise BadResetError(f"episode_id must be a string or None, got {_shown(episode_id)}")
        for name, value, served in (
            ("catalog", catalog, self.config.catalog),
            ("goals", goals, self.config.goals),
        ):
            if value is not None and value != served:
                raise BadResetError(
                    f"this server plays {name} {served!r}, not {_shown(value)}: connect to a server started "
                    f"with --{name} {_elided(str(value))}, or leave {name} out"
                )
        split = self.config.split if split is None else split
        if not isinstance(split, str) or split not in SPLITS:
            raise BadResetError(f"split must be one of {', '.join(SPLITS)}, got {_shown(split)}")
        if split not in self._envs:
            self._envs[split] = self.config.make_env(split)
        env = self._envs[split]
        try:
            text, info = env.reset(
                seed=seed, options=None if goal_index is None else {"goal_index": goal_index}
            )
        except ValueError as error:  # goal_index out of range or not an int
            raise BadResetError(str(error)) from None
        self._env, self._split = env, split
        self._episode_id = episode_id if episode_id is not None else str(uuid.uuid4())
        self._return, self._done = 0.0, False
        return _observation(text, None, False, False, info)

    def _step_impl(self, action: Action, timeout_s: float | None = None, **kwargs: Any) -> WebShopObservation:
        """Plays one typed action; an invalid action changes nothing and says why in ``action_error``."""
        self._check_open()
        if self._env is None:
            return WebShopObservation(action_error=NO_EPISODE)
        if not isinstance(action, WebShopAction):
            raise TypeError(f"a WebShop step takes a WebShopAction, got {type(action).__name__}")
        text, reward, terminated, truncated, info = self._play(action.action)
        return _observation(text, reward, terminated, truncated, info)

    def _play(self, action: str) -> tuple[str, float, bool, bool, dict[str, Any]]:
        assert self._env is not None
        text, reward, terminated, truncated, info = self._env.step(action)
        self._return += reward
        self._done = terminated or truncated
        return text, reward, terminated, truncated, info

    def _play_tool_now(self, action: str) -> str:
        self._check_open()
        if self._env is None:
            return NO_EPISODE
        if self._done:
            return ENDED
        text, _, _, truncated, info = self._play(action)
        return tool_text(text, info["action_error"], truncated)

    async def _play_tool(self, action: str) -> str:
        call = functools.partial(self._play_tool_now, action)
        return await asyncio.get_running_loop().run_in_executor(self._executor, call)

    async def reset_async(
        self,
        seed: int | None = None,
        episode_id: str | None = None,
        goal_index: int | None = None,
        split: str | None = None,
        catalog: str | None = None,
        goals: str | None = None,
        **unknown: Any,
    ) -> WebShopObservation:
        """`reset`, on the shared pool of worker threads."""
        call = functools.partial(self.reset, seed, episode_id, goal_index, split, catalog, goals, **unknown)
        return await asyncio.get_running_loop().run_in_executor(self._executor, call)

    async def step_async(self, action: Action, timeout_s: float | None = None, **kwargs: Any) -> Observation:
        """`step`, on the shared pool of worker threads (MCP actions go to the tools)."""
        if not isinstance(action, WebShopAction):
            return await super().step_async(action, timeout_s=timeout_s, **kwargs)
        call = functools.partial(self.step, action, timeout_s, **kwargs)
        return await asyncio.get_running_loop().run_in_executor(self._executor, call)

    @property
    def state(self) -> WebShopState:
        env = self._env
        if env is None or env.goal is None or env.state is None:
            return WebShopState(episode_id=self._episode_id)
        return WebShopState(
            episode_id=self._episode_id,
            step_count=env.steps,
            split=self._split,
            goal_index=env.goal_index,
            instruction=env.goal.instruction_text,
            page=env.state.page.value,
            episode_return=self._return,
            done=self._done,
        )

    def get_metadata(self) -> EnvironmentMetadata:
        return EnvironmentMetadata(
            name="WebShop",
            description=(
                f"WebShop (Yao et al. 2022) over catalogue {self.config.catalog!r}: find and buy the product "
                "an instruction asks for with search[...] and click[...] actions (or the MCP tools search "
                "and click); the original WebShop reward"
            ),
            version=__version__,
            documentation_url="https://github.com/webshop-gym/webshop-gym/tree/main/packages/webshop-gym#openenv",
        )

    def close(self) -> None:
        """Ends the session: its envs go (the catalogue they share stays loaded for the others)."""
        self._closed = True
        for env in self._envs.values():
            env.close()
        self._envs.clear()
        self._env = None
        super().close()

    def _check_open(self) -> None:
        if self._closed:
            raise RuntimeError(CLOSED)


def _elided(text: str, limit: int = 80) -> str:
    """``text``, cut short past ``limit`` characters: an error message never echoes a whole input."""
    return text if len(text) <= limit else f"{text[: limit - 20]}... ({len(text)} characters)"


def _shown(value: Any) -> str:
    return _elided(repr(value))


def _observation(
    text: str, reward: float | None, terminated: bool, truncated: bool, info: dict[str, Any]
) -> WebShopObservation:
    return WebShopObservation(
        text=text,
        available_actions=list(info["available_actions"]),
        action_error=info["action_error"],
        truncated=truncated,
        info={key: value for key, value in info.items() if key not in _OWN_FIELDS},
        reward=reward,
        done=terminated or truncated,
    )


def create_webshop_app(
    config: SessionConfig = SessionConfig(),
    max_sessions: int = DEFAULT_MAX_SESSIONS,
    idle_timeout: float | None = DEFAULT_IDLE_TIMEOUT,
    max_sessions_per_client: int | None = None,
    workers: int = DEFAULT_WORKERS,
) -> FastAPI:
    """openenv-core's FastAPI app over WebShop sessions; run it with uvicorn.

    The catalogue loads here, once (a missing one fails now, not at the first session).

    Args:
        config: what every session's env is built with.
        max_sessions: live sessions at most; a client beyond them gets openenv-core's
            ``CAPACITY_REACHED`` error.
        idle_timeout: seconds a session may wait for its client's next message; then the
            server closes it, WebSocket and all, and says why in the close frame (``None``:
            never).
        max_sessions_per_client: live sessions per client address at most (beyond, the same
            ``CAPACITY_REACHED`` error, which names this limit); ``None``: half of
            ``max_sessions`` (at least 2), so no client fills the server. Behind a reverse
            proxy every client has the proxy's address: pass ``max_sessions``.
        workers: threads that run every session's resets and steps.
    """
    if max_sessions < 1 or workers < 1:
        raise ValueError(f"max_sessions and workers must be at least 1, got {max_sessions} and {workers}")
    if idle_timeout is not None and idle_timeout <= 0:
        raise ValueError(f"idle_timeout must be > 0 seconds or None, got {idle_timeout}")
    if max_sessions_per_client is None:
        max_sessions_per_client = max(2, max_sessions // 2)
    if max_sessions_per_client < 1:
        raise ValueError(f"max_sessions_per_client must be at least 1, got {max_sessions_per_client}")
    config.make_env()
    executor = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="webshop-openenv")
    app = create_app(
        functools.partial(WebShopEnvironment, config, executor),
        WebShopAction,
        WebShopObservation,
        env_name="webshop",
        concurrency_config=ConcurrencyConfig(max_concurrent_envs=max_sessions, session_timeout=idle_timeout),
    )
    app.add_exception_handler(BadResetError, _bad_reset)
    app.add_middleware(
        _SessionGuard,
        max_per_client=max_sessions_per_client,
        max_sessions=max_sessions,
        idle_timeout=idle_timeout,
    )
    app.router.on_shutdown.append(lambda: executor.shutdown(wait=False))
    return app


async def _bad_reset(request: Request, error: Exception) -> JSONResponse:
    return JSONResponse({"detail": str(error)}, status_code=400)


_Scope = MutableMapping[str, Any]
_Message = MutableMapping[str, Any]
_Receive = Callable[[], Awaitable[_Message]]
_Send = Callable[[_Message], Awaitable[None]]


class _SessionGuard:
    """ASGI middleware over the session WebSockets (``/ws``, ``/mcp``): sessions per client
    address, and a close for silent ones.

    openenv-core's server counts sessions in all and reaps idle ones every ``max(timeout / 4,
    5)`` seconds while leaving their WebSockets open; this closes a WebSocket whose client has
    sent nothing for ``idle_timeout`` seconds at that moment (the session goes with it).
    """

    def __init__(
        self,
        app: Callable[..., Awaitable[None]],
        max_per_client: int,
        max_sessions: int,
        idle_timeout: float | None,
    ) -> None:
        self.app = app
        self.max_per_client = max_per_client
        self.max_sessions = max_sessions
        self.idle_timeout = idle_timeout
        self.per_client: dict[str, int] = {}

    async def __call__(self, scope: _Scope, receive: _Receive, send: _Send) -> None:
        if scope["type"] != "websocket" or scope.get("path") not in ("/ws", "/mcp"):
            await self.app(scope, receive, send)
            return
        client = str((scope.get("client") or ("unknown",))[0])
        if self.per_client.get(client, 0) >= self.max_per_client:
            await _refuse_session(
                receive,
                send,
                f"your address holds {self.max_per_client} of this server's {self.max_sessions} sessions, "
                "the most one client may hold: close one (client.close()) and connect again, or ask the "
                "operator for a larger serve --max-sessions-per-client",
            )
            return
        self.per_client[client] = self.per_client.get(client, 0) + 1
        closed = False
        connected = False

        async def guarded_receive() -> _Message:
            nonlocal closed, connected
            if not connected or self.idle_timeout is None:
                connected = True
                return await receive()
            try:
                return await asyncio.wait_for(receive(), timeout=self.idle_timeout)
            except asyncio.TimeoutError:
                closed = True
                reason = f"idle for {self.idle_timeout:g} s: session closed; reset() connects again"
                with contextlib.suppress(Exception):  # the client may have gone meanwhile
                    await send({"type": "websocket.close", "code": IDLE_CLOSE_CODE, "reason": reason})
                return {"type": "websocket.disconnect", "code": IDLE_CLOSE_CODE}

        async def guarded_send(message: _Message) -> None:
            if not closed:  # after the idle close, the app's own close has nothing left to do
                await send(message)

        try:
            await self.app(scope, guarded_receive, guarded_send)
        finally:
            left = self.per_client[client] - 1
            if left:
                self.per_client[client] = left
            else:
                del self.per_client[client]


async def _refuse_session(receive: _Receive, send: _Send, message: str) -> None:
    """Accepts the WebSocket only to say why it gets no session (as openenv-core says "full")."""
    if (await receive())["type"] != "websocket.connect":
        return
    error = {"type": "error", "data": {"message": message, "code": "CAPACITY_REACHED"}}
    await send({"type": "websocket.accept"})
    await send({"type": "websocket.send", "text": json.dumps(error)})
    await send({"type": "websocket.close", "code": 1013, "reason": "too many sessions from this address"})


class WebShopClient(EnvClient[WebShopAction, WebShopObservation, WebShopState]):
    """openenv-core's WebSocket client for a WebShop server: one client, one session, one env.

    ``reset(split=..., goal_index=..., seed=...)`` and ``step(WebShopAction(action=...))`` return
    openenv-core ``StepResult``s; ``state()`` the session's `WebShopState`. Errors the server
    reports (a bad reset argument, a full server) raise ``RuntimeError`` with its message.

    When the connection drops (the server closed an idle session, restarted, or the network
    failed), ``step`` and ``state`` raise `SessionClosedError` saying why and what to do; the
    episode is gone with the session, and ``reset`` connects again and starts a new one.
    Messages larger than ``max_message_size_mb`` (16 MB) are refused.
    """

    _ws: ClientConnection | None

    def __init__(
        self,
        base_url: str,
        connect_timeout_s: float = 10.0,
        message_timeout_s: float = 60.0,
        max_message_size_mb: float = CLIENT_MAX_MESSAGE_MB,
        **kwargs: Any,
    ) -> None:
        super().__init__(
            base_url,
            connect_timeout_s=connect_timeout_s,
            message_timeout_s=message_timeout_s,
            max_message_size_mb=max_message_size_mb,
            **kwargs,
        )
        self._mcp_id = 0

    async def disconnect(self) -> None:
        """Ends the session and waits until the server has closed it, so its slot is free on return.

        (Closing at once, as ``EnvClient`` does, races the server's own close of the connection.)
        """
        if self._ws is not None:
            with contextlib.suppress(ConnectionClosed, TimeoutError):
                await self._send({"type": "close"})
                await asyncio.wait_for(self._ws.wait_closed(), timeout=self._message_timeout)
        await super().disconnect()

    async def _send(self, message: dict[str, Any]) -> None:
        # A server that refuses a session (full) sends why and closes at once, which can overtake
        # this first message; the reply is still there to read (else reading raises ConnectionClosed).
        with contextlib.suppress(ConnectionClosed):
            await super()._send(message)

    async def reset(self, **kwargs: Any) -> StepResult[WebShopObservation]:
        """Starts an episode; over a new connection when the last one was closed."""
        if self._ws is not None and self._ws.close_code is not None:
            with contextlib.suppress(Exception):
                await self._ws.close()
            self._ws = None
        return await super().reset(**kwargs)

    async def _send_and_receive(self, message: dict[str, Any]) -> dict[str, Any]:
        try:
            return await super()._send_and_receive(message)
        except ConnectionClosed as error:
            self._ws = None
            raise SessionClosedError(_closed_message(self._ws_url, error)) from None

    async def list_tools(self) -> list[Tool]:
        """The session's MCP tools (``search``, ``click``), as MCP's ``tools/list`` describes them."""
        result = await self._mcp("tools/list", {})
        return [
            Tool(
                name=tool["name"],
                description=tool.get("description") or "",
                input_schema=tool.get("inputSchema", tool.get("input_schema", {})),
            )
            for tool in result["tools"]
        ]

    async def call_tool(self, name: str, **arguments: Any) -> str:
        """Calls an MCP tool on this session's episode (``call_tool("search", query="red shoes")``);
        returns its result, the page as text. The episode's return is then in ``state()``."""
        result = await self._mcp("tools/call", {"name": name, "arguments": arguments})
        if result.get("is_error") or result.get("isError"):
            texts = [part.get("text", "") for part in result.get("content", [])]
            raise RuntimeError(f"tool {name!r} failed: {' '.join(texts) or 'no reason given'}")
        return str(result["data"])

    async def _mcp(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        """One JSON-RPC request of MCP over the session's WebSocket (openenv-core's ``mcp`` message)."""
        self._mcp_id += 1
        request = {"jsonrpc": "2.0", "method": method, "params": params, "id": self._mcp_id}
        answer = (await self._send_and_receive({"type": "mcp", "data": request})).get("data", {})
        if answer.get("error"):
            raise RuntimeError(f"MCP {method} failed: {answer['error'].get('message', answer['error'])}")
        return dict(answer["result"])

    def _step_payload(self, action: WebShopAction) -> dict[str, Any]:
        return {"action": action.action}

    def _parse_result(self, payload: dict[str, Any]) -> StepResult[WebShopObservation]:
        observation = WebShopObservation(
            **payload.get("observation", {}), reward=payload.get("reward"), done=payload.get("done", False)
        )
        return StepResult(observation=observation, reward=observation.reward, done=observation.done)

    def _parse_state(self, payload: dict[str, Any]) -> WebShopState:
        return WebShopState(**payload)


def _closed_message(url: str, error: ConnectionClosed) -> str:
    received = error.rcvd
    why = (
        f"the server closed it: {received.reason}"
        if received is not None and received.reason
        else f"code {received.code}"
        if received is not None
        else "no close frame: the server stopped or the network failed"
    )
    return (
        f"the connection to the WebShop server at {url} is closed ({why}); its episode is gone: call "
        "reset() to connect again and start a new episode"
    )


class WebShopServerToolEnv(ShopTools):
    """TRL's ``environment_factory`` over a WebShop OpenEnv server: tools ``search`` and ``click``.

    The server-side twin of `webshop_gym.integrations.trl.WebShopToolEnv`: the same ``reset(**row)``
    (rows from its ``goal_dataset``), the same tools and the same text back (`tool_text`), and
    ``get_reward()``, TRL's reward hook (the episode's return; also in ``reward``, beside
    ``done``); but every rollout plays on the server at ``base_url``
    through a `WebShopClient` session (its own env there), so the trainer's processes load no
    catalogue. ``functools.partial(WebShopServerToolEnv, base_url=...)`` is a factory for
    another server.

    Args:
        base_url: The server (``webshop-gym serve --protocol openenv`` or the ``webshop_env`` image).
    """

    def __init__(self, base_url: str = "http://127.0.0.1:8000") -> None:
        self.base_url = base_url
        self.reward = 0.0
        self.done = False
        self.info: dict[str, Any] = {}
        self._client: Any = None  # openenv-core's SyncEnvClient over a WebShopClient, from the first reset

    def reset(
        self,
        catalog: str | None = None,
        goals: str | None = None,
        split: str | None = None,
        goal_index: int | None = None,
        **row: Any,
    ) -> str:
        """Starts the episode of the row's goal on the server; returns its first page, after a blank line.

        TRL passes the whole dataset row; columns other than the goal's (``prompt``, ...) are
        ignored. The server refuses a row of another catalogue or goal source (``RuntimeError``).

        Raises:
            ValueError: The row does not name a goal of a fixed split (build it with ``goal_dataset``).
        """
        if split is None or goal_index is None:
            raise ValueError(
                "a row must name its goal with 'split' and 'goal_index' (and 'catalog', 'goals'); build the "
                f"dataset with webshop_gym.integrations.trl.goal_dataset(), got columns {sorted(row)}"
            )
        if self._client is None:
            self._client = WebShopClient(base_url=self.base_url).sync()
        result = self._client.reset(split=split, goal_index=goal_index, catalog=catalog, goals=goals)
        self.reward, self.done, self.info = 0.0, False, result.observation.info
        return "\n\n" + result.observation.text

    def _started(self) -> bool:
        return self._client is not None

    def _step(self, action: str) -> tuple[str, float, bool, bool, dict[str, Any]]:
        observation = self._client.step(WebShopAction(action=action)).observation
        info = {**observation.info, "action_error": observation.action_error}
        return observation.text, observation.reward or 0.0, observation.done, observation.truncated, info
