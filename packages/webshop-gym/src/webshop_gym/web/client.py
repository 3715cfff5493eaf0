"""`RemoteWebShopEnv` (``WebShop-Remote-v0``): a WebShop env that lives on a `webshop-gym serve` server.

The client side of `webshop_gym.web`: standard library, `webshop_gym.web.codec` and the env's
spaces only, so it imports (and ``gym.make("WebShop-Remote-v0")`` works) without Flask.

Agents in other processes or on other machines share the server's one loaded catalogue:
each `RemoteWebShopEnv` creates its own env on the server through the JSON API
(`webshop_gym.web.api`) and forwards ``reset`` / ``step`` / ``render`` / ``close`` to it.
Observations, rewards and ``info`` are exactly what a local `webshop_gym.envs.WebShopEnv`
with the same arguments returns (JSON carries floats exactly). Only the standard library
is used here; the server needs the ``web`` extra, the client does not.

What the client takes from a server is bounded and checked: an answer larger than
``MAX_RESPONSE_BYTES`` is refused unread, and one that is not the API's JSON (a proxy's
login page, NaN, a missing field) is a `RemoteEnvError` that says so. A ``server_url`` may
carry credentials for a proxy in front of the server (``http://user:token@host:8000``):
they go in an ``Authorization: Basic`` header and never into messages or ``server_url``
(put them in ``$WEBSHOP_GYM_SERVER`` to keep them out of ``gym.make``'s spec too).

Example (with a server running: ``webshop-gym serve --catalog mini``)::

    import gymnasium as gym
    import webshop_gym

    env = gym.make("WebShop-Remote-v0", server_url="http://127.0.0.1:8000", split="test")
    observation, info = env.reset(seed=0)
    observation, reward, terminated, truncated, info = env.step(f"search[{info['instruction']}]")
    env.close()  # frees the env on the server (idle ones expire anyway)
"""

from __future__ import annotations

import base64
import contextlib
import http.client
import json
import os
import urllib.parse
import warnings
from typing import Any

import gymnasium as gym

from webshop_gym.data.model import Goal
from webshop_gym.envs import checked_reset_options
from webshop_gym.shop import PageState
from webshop_gym.spaces import action_space, observation_space
from webshop_gym.web.codec import goal_from_json, state_from_json

__all__ = ["DEFAULT_SERVER_URL", "SERVER_URL_ENV", "RemoteEnvError", "RemoteEnvWarning", "RemoteWebShopEnv"]

SERVER_URL_ENV = "WEBSHOP_GYM_SERVER"
DEFAULT_SERVER_URL = "http://127.0.0.1:8000"
API_PREFIX = "/api/v1"
# The largest answer read: an observation is at most spaces.MAX_OBSERVATION_CHARS (1 Mi) characters,
# a few bytes each in JSON, and the info beside it is small.
MAX_RESPONSE_BYTES = 32 << 20
_NOT_THE_API = "is server_url the address `webshop-gym serve` prints (like http://127.0.0.1:8000)?"

# Failures on a kept-alive connection that mean the server never read the request (it
# closed the idle connection first), so sending it again on a new connection is safe.
_STALE_CONNECTION_ERRORS = (http.client.RemoteDisconnected, BrokenPipeError, ConnectionResetError)


class _Hidden:
    """A secret (a URL with credentials, an Authorization header) whose repr does not show it."""

    __slots__ = ("value",)

    def __init__(self, value: str) -> None:
        self.value = value

    def __repr__(self) -> str:
        return "<hidden>"


class RemoteEnvWarning(UserWarning):
    """The server had forgotten this env (restart, idle expiry); a new one was made."""


class RemoteEnvError(RuntimeError):
    """The server refused a request or could not be reached; the message says why."""

    def __init__(self, message: str, status: int | None = None) -> None:
        super().__init__(message)
        self.status = status


class _JsonClient:
    """JSON over one kept-alive HTTP(S) connection (reconnects when the server closed it)."""

    def __init__(self, server_url: str, timeout: float) -> None:
        parsed = urllib.parse.urlsplit(server_url)
        if parsed.scheme not in ("http", "https") or not parsed.hostname:
            shown = _without_credentials(server_url)
            raise ValueError(f"server_url must look like http://host:port, got {shown!r}")
        prefix = parsed.path.rstrip("/")
        if prefix.endswith(API_PREFIX):  # the API's address, as the server prints it, is fine too
            prefix = prefix[: -len(API_PREFIX)]
        try:
            port = parsed.port
        except ValueError:
            shown = _without_credentials(server_url)
            raise ValueError(f"server_url must look like http://host:port, got {shown!r}") from None
        self._scheme = parsed.scheme
        self._host = parsed.hostname
        self._port = port
        self._prefix = prefix
        netloc = parsed.netloc.rsplit("@", 1)[-1]  # never shown with its credentials
        self.server_url = urllib.parse.urlunsplit((parsed.scheme, netloc, prefix, "", ""))
        self._authorization: _Hidden | None = None
        if parsed.username is not None or parsed.password is not None:
            user = urllib.parse.unquote(parsed.username or "")
            secret = urllib.parse.unquote(parsed.password or "")
            self._authorization = _Hidden("Basic " + base64.b64encode(f"{user}:{secret}".encode()).decode())
        self._timeout = timeout
        self._connection: http.client.HTTPConnection | None = None

    def __repr__(self) -> str:
        return f"_JsonClient({self.server_url!r})"

    def _connect(self) -> http.client.HTTPConnection:
        cls = http.client.HTTPSConnection if self._scheme == "https" else http.client.HTTPConnection
        return cls(self._host, self._port, timeout=self._timeout)

    def request(self, method: str, path: str, body: dict[str, Any] | None = None) -> Any:
        payload = json.dumps(body).encode() if body is not None else None
        headers = {"Accept": "application/json"}
        if self._authorization is not None:
            headers["Authorization"] = self._authorization.value
        if payload is not None:
            headers["Content-Type"] = "application/json"
        for attempt in (1, 2):
            reused = self._connection is not None
            if self._connection is None:
                self._connection = self._connect()
            try:
                self._connection.request(method, self._prefix + path, body=payload, headers=headers)
                response = self._connection.getresponse()
                raw = self._read(response, method, path)
                break
            except _STALE_CONNECTION_ERRORS as error:
                self.close()
                if reused and attempt == 1:
                    continue
                raise RemoteEnvError(f"lost the connection to {self.server_url}: {error}") from error
            except OSError as error:
                self.close()
                raise RemoteEnvError(
                    f"cannot reach the WebShop server at {self.server_url} ({error}); start one with "
                    f"`webshop-gym serve` or pass server_url= (or set ${SERVER_URL_ENV})"
                ) from error
        if response.getheader("Connection", "").lower() == "close":
            self.close()
        try:
            data = json.loads(raw, parse_constant=_not_a_number) if raw else None
            problem = None
        except (ValueError, RecursionError) as error:  # also bad UTF-8
            data, problem = None, str(error)
        if response.status >= 400:
            message = data.get("error") if isinstance(data, dict) else None
            if message is None and response.status == 404:
                message = f"nothing answers {self._prefix}{path} at {self.server_url}; {_NOT_THE_API}"
            shown = str(message) if message is not None else raw[:200].decode("utf-8", "replace")
            raise RemoteEnvError(
                f"{method} {path}: HTTP {response.status}: {shown[:500]}", status=response.status
            )
        if response.status == 204:
            return None
        if problem is not None or data is None:
            start = raw[:60].decode("utf-8", "replace")
            raise RemoteEnvError(
                f"{method} {path}: the server at {self.server_url} answered HTTP {response.status} with a "
                f"body that is not JSON ({start!r}...: {problem or 'empty'}); {_NOT_THE_API}"
            )
        if not isinstance(data, dict):
            raise RemoteEnvError(
                f"{method} {path}: the server at {self.server_url} answered a JSON "
                f"{type(data).__name__}, not an object; {_NOT_THE_API}"
            )
        return data

    def _read(self, response: http.client.HTTPResponse, method: str, path: str) -> bytes:
        """The body, unless it is larger than any answer of the API (then nothing more is read)."""
        declared = response.getheader("Content-Length")
        size = int(declared) if declared is not None and declared.isdigit() else None
        raw = b"" if size is not None and size > MAX_RESPONSE_BYTES else response.read(MAX_RESPONSE_BYTES + 1)
        if (size is not None and size > MAX_RESPONSE_BYTES) or len(raw) > MAX_RESPONSE_BYTES:
            self.close()  # the rest is never read
            shown = f"{size} bytes" if size is not None else "over that"
            raise RemoteEnvError(
                f"{method} {path}: the server at {self.server_url} answer is {shown}, more than the "
                f"{MAX_RESPONSE_BYTES} a WebShop answer can be; {_NOT_THE_API}"
            )
        return raw

    def close(self) -> None:
        if self._connection is not None:
            self._connection.close()
            self._connection = None


def _not_a_number(constant: str) -> Any:
    raise ValueError(f"{constant} is not a JSON number")


def _without_credentials(url: str) -> str:
    parsed = urllib.parse.urlsplit(url)
    return parsed._replace(netloc=parsed.netloc.rsplit("@", 1)[-1]).geturl()


def _field(answer: Any, name: str, method: str, path: str, server_url: str) -> Any:
    """``answer[name]``, or a `RemoteEnvError` naming what the server left out."""
    if not isinstance(answer, dict) or name not in answer:
        raise RemoteEnvError(
            f"{method} {path}: the answer of the server at {server_url} lacks {name!r}; {_NOT_THE_API}"
        )
    return answer[name]


def _jsonable_action(action: Any) -> Any:
    # The server hands any JSON value to the env, which reports non-strings as invalid
    # actions; a value JSON cannot carry goes as a description of its type.
    try:
        json.dumps(action)
    except (TypeError, ValueError):
        return {"unsupported_type": type(action).__name__}
    return action


class RemoteWebShopEnv(gym.Env[str, str]):
    """A `WebShopEnv` on a `webshop-gym serve` server, behind the Gymnasium API.

    ## Description
    The same WebShop task as `webshop_gym.envs.WebShopEnv` (see its docstring for
    observations, actions, rewards, episode end and ``info``); the env runs on the server
    and over the server's catalogue and search engine.

    ## Arguments
    * ``server_url``: the server (default ``$WEBSHOP_GYM_SERVER`` or ``http://127.0.0.1:8000``).
    * ``observation_mode``, ``goals``, ``split``, ``reward``, ``shaping_discount``,
      ``max_steps``, ``show_attributes``, ``render_mode``: as for `WebShopEnv`.
    * ``timeout``: seconds to wait for each answer.

    Privileged attributes (``goal``, ``goal_index``, ``state``, ``steps``) are fetched from
    the server when read, so privileged policies such as `webshop_gym.agents.scripted.ExpertPolicy`
    work as with a local env.

    Pickling stores the episode as JSON (`webshop_gym.web.snapshots`, read from the
    server; nothing is made there); each unpickle makes its own env on the server and
    continues the episode in it, so a pickle restores against any server with the same
    catalogue, even after a restart. Close unpickled copies too (idle envs expire anyway).

    If the server forgets the env (it restarted, or the env idled past ``serve
    --idle-timeout``), ``step`` says so and ``reset`` makes a new env there, with a warning.

    ## Version History
    * v0: initial release.
    """

    metadata = {"render_modes": ["ansi"], "render_fps": 4}

    def __init__(
        self,
        server_url: str | None = None,
        observation_mode: str = "text",
        goals: str = "human",
        split: str = "train",
        reward: str = "original",
        shaping_discount: float = 1.0,
        max_steps: int = 15,
        show_attributes: bool = False,
        render_mode: str | None = None,
        timeout: float = 60.0,
    ) -> None:
        if render_mode not in (None, *self.metadata["render_modes"]):
            raise ValueError(f"render_mode={render_mode!r} is not one of None, 'ansi'")
        self.server_url = server_url or os.environ.get(SERVER_URL_ENV) or DEFAULT_SERVER_URL
        self._url = _Hidden(self.server_url)  # with any credentials: for pickles, never shown
        self.timeout = timeout
        self.render_mode = render_mode
        self.arguments = {
            "observation_mode": observation_mode,
            "goals": goals,
            "split": split,
            "reward": reward,
            "shaping_discount": shaping_discount,
            "max_steps": max_steps,
            "show_attributes": show_attributes,
            "render_mode": render_mode,
        }
        self.observation_space = observation_space()
        self.action_space = action_space()
        self._client = _JsonClient(self._url.value, timeout)
        self.server_url = self._client.server_url  # without a trailing /api/v1
        self.env_id: str | None = None
        self._internals: dict[str, Any] | None = None
        self._attach(self._client.request("POST", f"{API_PREFIX}/envs", self.arguments))

    def _attach(self, created: dict[str, Any]) -> None:
        env_id = _field(created, "env_id", "POST", f"{API_PREFIX}/envs", self.server_url)
        if not isinstance(env_id, str):
            raise RemoteEnvError(
                f"the server at {self.server_url} gave an env id that is not a string; {_NOT_THE_API}"
            )
        self.env_id = env_id
        self._internals = None

    def _shown_id(self) -> str:
        """The env's id cut short: messages end up in logs, and the id is all it takes to act in it."""
        return f"{self.env_id[:6]}…" if self.env_id else "(none)"

    def _fields(self, answer: Any, path: str, *names: str) -> list[Any]:
        return [_field(answer, name, "POST", path, self.server_url) for name in names]

    def _path(self, suffix: str = "") -> str:
        if self.env_id is None:
            raise gym.error.ClosedEnvironmentError("this RemoteWebShopEnv is closed")
        return f"{API_PREFIX}/envs/{self.env_id}{suffix}"

    # -- Gymnasium API -------------------------------------------------------------------

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[str, dict]:
        super().reset(seed=seed)
        options = dict(checked_reset_options(options)) or None
        if options and options.get("goal") is not None:
            raise ValueError(
                "a remote env plays its server's goals: use options={'goal_index': i}, or a local env"
            )
        body = {"seed": seed, "options": options}
        try:
            try:
                answer = self._client.request("POST", self._path("/reset"), body)
            except RemoteEnvError as error:
                if error.status != 404:
                    raise
                warnings.warn(
                    f"the server at {self.server_url} no longer has env {self._shown_id()} (it restarted, or "
                    "the env idled past its --idle-timeout); reset made a new env there",
                    RemoteEnvWarning,
                    stacklevel=2,
                )
                self._attach(self._client.request("POST", f"{API_PREFIX}/envs", self.arguments))
                answer = self._client.request("POST", self._path("/reset"), body)
        except RemoteEnvError as error:
            if error.status == 400:  # bad reset options: as a local env, a ValueError
                raise ValueError(str(error)) from error
            raise
        self._internals = None
        observation, info = self._fields(answer, self._path("/reset"), "observation", "info")
        return observation, info

    def step(self, action: str) -> tuple[str, float, bool, bool, dict]:
        try:
            answer = self._client.request("POST", self._path("/step"), {"action": _jsonable_action(action)})
        except RemoteEnvError as error:
            if error.status == 409:
                raise gym.error.ResetNeeded(str(error)) from error
            if error.status == 404:
                raise RemoteEnvError(
                    f"the server at {self.server_url} no longer has env {self._shown_id()} (it restarted, or "
                    "the env idled past its --idle-timeout); call reset() to start a new episode in a "
                    "new env",
                    status=404,
                ) from error
            raise
        self._internals = None
        observation, reward, terminated, truncated, info = self._fields(
            answer, self._path("/step"), "observation", "reward", "terminated", "truncated", "info"
        )
        return observation, float(reward), bool(terminated), bool(truncated), info

    def render(self) -> str | None:
        if self.render_mode != "ansi":
            return None
        return self._client.request("GET", self._path("/render"))["render"]

    def close(self) -> None:
        if self.env_id is not None:
            # Already gone (expired, server stopped): nothing left to free.
            with contextlib.suppress(RemoteEnvError):
                self._client.request("DELETE", self._path())
            self.env_id = None
        self._client.close()
        super().close()

    # -- privileged reads, for expert policies and debugging -----------------------------

    def _fetch_internals(self) -> dict[str, Any]:
        if self._internals is None:
            self._internals = self._client.request("GET", self._path("/internals"))
        return self._internals

    @property
    def goal(self) -> Goal | None:
        data = self._fetch_internals()["goal"]
        return goal_from_json(data) if data is not None else None

    @property
    def goal_index(self) -> int | None:
        return self._fetch_internals()["goal_index"]  # type: ignore[no-any-return]

    @property
    def state(self) -> PageState | None:
        data = self._fetch_internals()["state"]
        return state_from_json(data) if data is not None else None

    @property
    def steps(self) -> int:
        return int(self._fetch_internals()["steps"])

    # -- pickling: the episode as JSON, nothing kept on the server ------------------------

    def __getstate__(self) -> dict[str, Any]:
        snapshot = None
        if self.env_id is not None:
            try:
                snapshot = self._client.request("GET", self._path("/snapshot"))
            except RemoteEnvError as error:
                if error.status != 404:
                    raise
                warnings.warn(
                    f"the server at {self.server_url} no longer has env {self._shown_id()}; the copy starts "
                    "afresh (call reset())",
                    RemoteEnvWarning,
                    stacklevel=2,
                )
        return {
            "server_url": self._url.value,
            "timeout": self.timeout,
            "arguments": self.arguments,
            "episode": snapshot,
            "np_random": self._np_random.bit_generator.state if self._np_random is not None else None,
            "np_random_seed": self._np_random_seed,
        }

    def __setstate__(self, saved: dict[str, Any]) -> None:
        self._url = _Hidden(saved["server_url"])
        self.timeout = saved["timeout"]
        self.arguments = saved["arguments"]
        self.render_mode = self.arguments["render_mode"]  # type: ignore[assignment]
        self.observation_space = observation_space()
        self.action_space = action_space()
        self._client = _JsonClient(self._url.value, self.timeout)
        self.server_url = self._client.server_url
        self.env_id = None
        self._internals = None
        self._attach(self._client.request("POST", f"{API_PREFIX}/envs", self.arguments))
        if saved.get("episode") is not None:
            self._client.request("POST", self._path("/restore"), saved["episode"])
        if saved["np_random"] is not None:
            self._np_random, _ = gym.utils.seeding.np_random()
            self._np_random.bit_generator.state = saved["np_random"]
            self._np_random_seed = saved["np_random_seed"]
