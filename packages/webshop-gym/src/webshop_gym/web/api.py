"""The JSON API for agents in other processes or on other machines (`webshop_gym.web.client` is its client).

All envs of a server share its one loaded catalogue, goals and search index; an env
costs a few kilobytes. Bodies are JSON objects (``Content-Type: application/json``);
every error is ``{"error": "<what went wrong and what to do>", "status": <code>}``.

=======  ===============================  =====================================================
method   path                             what
=======  ===============================  =====================================================
GET      ``/api/v1``                      the server: catalogue, goals, limits, version
POST     ``/api/v1/envs``                 a new env: ``{"observation_mode", "goals", "split",
                                          "reward", "shaping_discount", "max_steps",
                                          "show_attributes", "render_mode"}`` (all optional)
                                          -> 201 ``{"env_id", "arguments"}``
POST     ``/api/v1/envs/<id>/reset``      ``{"seed": int|null, "options": {"goal_index": i}}``
                                          -> ``{"observation", "info"}``
POST     ``/api/v1/envs/<id>/step``       ``{"action": "click[buy now]"}`` -> ``{"observation",
                                          "reward", "terminated", "truncated", "info"}``
GET      ``/api/v1/envs/<id>/render``     ``{"render": text_rich page or null}``
GET      ``/api/v1/envs/<id>/internals``  privileged: ``{"goal", "goal_index", "state", "steps"}``
GET      ``/api/v1/envs/<id>/snapshot``   the episode as JSON (`webshop_gym.web.snapshots`);
                                          makes nothing on the server
POST     ``/api/v1/envs/<id>/restore``    a snapshot (of an env with the same arguments) ->
                                          the env continues that episode ``{"steps"}``
POST     ``/api/v1/envs/<id>/fork``       an independent copy of the env -> 201 ``{"env_id"}``
DELETE   ``/api/v1/envs/<id>``            closes the env -> 204
=======  ===============================  =====================================================

An invalid *action* is not an HTTP error: like a local env, ``step`` answers 200 with
``info["action_error"]`` set. HTTP errors are for requests that cannot be carried out:
400 (malformed JSON, NaN or Infinity, unknown or ill-typed fields, bad reset options, an
action longer than ``MAX_ACTION_CHARS``), 404 (no env with that id: closed, expired or
never made), 409 (``step`` before ``reset``), 413 (body too large), 415 (not JSON), 429
(this client holds ``max_envs_per_client`` envs: close one first), 503 (the server's env
limit is reached). Error messages quote at most a few hundred characters of any input.
Numbers in requests and answers are finite: JSON has no NaN or Infinity.
"""

from __future__ import annotations

import json
import math
import pickle
import threading
from typing import Any

import gymnasium as gym
from flask import Blueprint, Response, current_app, request

from webshop_gym import __version__
from webshop_gym.spaces import MAX_ACTION_CHARS
from webshop_gym.trajectories import json_safe
from webshop_gym.web.codec import goal_to_json, state_to_json
from webshop_gym.web.context import error_response, server_of
from webshop_gym.web.sessions import Session
from webshop_gym.web.snapshots import episode_snapshot, restore_episode

__all__ = ["api"]

api = Blueprint("api", __name__, url_prefix="/api/v1")

# The env arguments a client may choose; the catalogue and search engine are the server's.
CREATE_FIELDS: dict[str, type | tuple[type, ...]] = {
    "observation_mode": str,
    "goals": str,
    "split": str,
    "reward": str,
    "shaping_discount": (int, float),
    "max_steps": int,
    "show_attributes": bool,
    "render_mode": (str, type(None)),
}
MAX_SEED = 2**128
MAX_MESSAGE_CHARS = 400  # of an error message; the rest of a long input is elided
# Checking a client's env count and adding its env is one step (a client cannot slip past
# its limit with parallel requests); creating envs is rare next to stepping them.
_creating = threading.Lock()


class _BadRequest(Exception):
    def __init__(self, message: str, status: int = 400) -> None:
        super().__init__(elided(message))
        self.status = status


def elided(message: str, limit: int = MAX_MESSAGE_CHARS) -> str:
    """``message`` with its middle cut out past ``limit`` characters (its start and end say most).

    Example:
        >>> elided("split='" + "x" * 1000 + "' is not one of 'train', 'test'", limit=100)
        "split='xxxxxxxxxxxxxxxxxxxxxxx ... (978 characters left out) ...  is not one of 'train', 'test'"
    """
    if len(message) <= limit:
        return message
    keep = max(limit - 40, 2) // 2
    return f"{message[:keep]} ... ({len(message) - 2 * keep} characters left out) ... {message[-keep:]}"


@api.errorhandler(_BadRequest)
def _bad_request(error: _BadRequest) -> Response:
    return error_response(error.status, "Bad Request", str(error))


def _answer(data: Any, status: int = 200) -> Response:
    """``data`` as JSON; a number JSON cannot carry (NaN, Infinity) is a server error, never sent."""
    try:
        text = current_app.json.dumps(data, allow_nan=False)
    except ValueError:
        return error_response(
            500, "Internal Server Error", "the answer held NaN or Infinity, which JSON cannot carry"
        )
    return Response(text + "\n", status=status, mimetype="application/json")


def _not_finite(constant: str) -> Any:
    raise ValueError(f"{constant} is not a JSON number")


def _finite(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(f"{elided(text, 40)} is too large for a number")
    return value


def _body(allowed: set[str]) -> dict[str, Any]:
    """The request's JSON object, with only ``allowed`` fields (an empty body is ``{}``)."""
    raw = request.get_data(cache=True)
    if not raw.strip():
        return {}
    if not request.is_json:
        raise _BadRequest("send the body as JSON with 'Content-Type: application/json'", status=415)
    try:
        body = json.loads(raw, parse_constant=_not_finite, parse_float=_finite)
    except ValueError as error:  # also bad UTF-8 and integers of over 4,300 digits
        raise _BadRequest(f"the body is not valid JSON ({error}); send one JSON object") from None
    if not isinstance(body, dict):
        raise _BadRequest(f"the body must be a JSON object, got {type(body).__name__}")
    unknown = sorted(set(body) - allowed)
    if unknown:
        raise _BadRequest(f"unknown fields {unknown}; this endpoint takes {sorted(allowed)}")
    return body


def _is(value: Any, types: type | tuple[type, ...]) -> bool:
    # JSON true/false are bools, which Python also counts as ints: keep them apart.
    if isinstance(value, bool):
        return bool in (types if isinstance(types, tuple) else (types,))
    return isinstance(value, types)


def public_arguments(env: Any, catalog_name: str) -> dict[str, Any]:
    """The env's arguments as a client may see them: the catalogue by name, never a server path."""
    return {**env._arguments, "catalog": catalog_name}


def _env_session(env_id: str) -> Session:
    session = server_of().api_envs.get(env_id)
    if session is None:
        raise _BadRequest(
            f"no env {env_id[:60]!r} on this server (closed, expired or never made)", status=404
        )
    return session


def _add_env(env: Any, used: bool = False) -> Session:
    """Stores ``env`` for the requesting client, within its limit of envs (429 beyond).

    A client at its limit gives up its oldest never-used env first (the store does the same
    for the server's own limit).
    """
    server = server_of()
    owner = request.remote_addr
    limit = server.config.envs_per_client
    with _creating:
        held = server.api_envs.sessions_of(owner) if limit < server.config.max_sessions else []
        if len(held) >= limit:
            unused = [session for session in held if not session.used]
            if not unused:
                env.close()
                raise _BadRequest(
                    f"this client holds {limit} envs, the most one client may hold on this server: close "
                    "envs you no longer use (DELETE /api/v1/envs/<id>, or env.close()); idle ones go after "
                    f"{server.config.idle_timeout:g} s. The operator can raise serve --max-envs-per-client.",
                    status=429,
                )
            server.api_envs.remove(min(unused, key=lambda session: session.last_used).id)
        return server.api_envs.add(env, owner=owner, used=used)


@api.get("")
def describe() -> Any:
    server = server_of()
    config = server.config
    return {
        "webshop_gym_version": __version__,
        "catalog": server.prototype.catalog.name,  # a name: the server's folders stay private
        "search_engine": config.search_engine,
        "visitor_goals": {"goals": config.goals, "split": config.split, "count": server.goal_count},
        "max_request_bytes": config.max_request_bytes,
        "max_envs": config.max_sessions,
        "max_envs_per_client": config.envs_per_client,
        "max_action_chars": MAX_ACTION_CHARS,
        "idle_timeout_s": config.idle_timeout,
        "envs": len(server.api_envs),
        "create_fields": sorted(CREATE_FIELDS),
    }


@api.post("/envs")
def create() -> Any:
    server = server_of()
    body = _body(set(CREATE_FIELDS))
    for name, value in body.items():
        if not _is(value, CREATE_FIELDS[name]):
            raise _BadRequest(f"{name} has the wrong type: {type(value).__name__}")
    try:
        env = server.config.make_env(**body)
    except (ValueError, FileNotFoundError) as error:
        raise _BadRequest(str(error)) from None
    session = _add_env(env)
    if server.config.log_api:
        with session.lock:  # the file comes with the first reset: an env never played leaves none
            session.make_recorder = lambda: server.recorder("api")
    return _answer(
        {"env_id": session.id, "arguments": public_arguments(env, server.prototype.catalog.name)}, 201
    )


@api.post("/envs/<env_id>/reset")
def reset(env_id: str) -> Any:
    session = _env_session(env_id)
    body = _body({"seed", "options"})
    seed = body.get("seed")
    if seed is not None and (not _is(seed, int) or not 0 <= seed < MAX_SEED):
        raise _BadRequest(f"seed must be null or a whole number in [0, 2**128), got {seed!r}")
    options = body.get("options")
    if options is not None and not isinstance(options, dict):
        raise _BadRequest(f"options must be null or an object like {{'goal_index': 3}}, got {options!r}")
    with session.lock:
        try:
            observation, info = session.reset(seed, options)
        except ValueError as error:
            raise _BadRequest(str(error)) from None
    return _answer({"observation": observation, "info": json_safe(info)})


@api.post("/envs/<env_id>/step")
def step(env_id: str) -> Any:
    session = _env_session(env_id)
    body = _body({"action"})
    if "action" not in body:
        raise _BadRequest("the body needs an 'action', like {'action': 'search[red shoes]'}")
    action = body["action"]
    if isinstance(action, str) and len(action) > MAX_ACTION_CHARS:
        raise _BadRequest(
            f"the action is {len(action)} characters long; actions are at most {MAX_ACTION_CHARS} "
            f"(the action space's max_length): shorten it, e.g. fewer search keywords ({action[:60]!r}...)"
        )
    with session.lock:
        try:
            observation, reward, terminated, truncated, info = session.step(action)
        except gym.error.ResetNeeded:
            raise _BadRequest("call reset before step", status=409) from None
    return _answer(
        {
            "observation": observation,
            "reward": float(reward),
            "terminated": bool(terminated),
            "truncated": bool(truncated),
            "info": json_safe(info),
        }
    )


@api.get("/envs/<env_id>/render")
def render(env_id: str) -> Any:
    session = _env_session(env_id)
    with session.lock:
        return _answer({"render": session.env.render() if session.env.state is not None else None})


@api.get("/envs/<env_id>/internals")
def internals(env_id: str) -> Any:
    session = _env_session(env_id)
    with session.lock:
        env = session.env
        return _answer(
            {
                "goal": goal_to_json(env.goal) if env.goal is not None else None,
                "goal_index": env.goal_index,
                "state": state_to_json(env.state) if env.state is not None else None,
                "steps": env.steps,
            }
        )


@api.get("/envs/<env_id>/snapshot")
def snapshot(env_id: str) -> Any:
    session = _env_session(env_id)
    with session.lock:
        try:
            snapshot = episode_snapshot(session.env)
        except ValueError as error:
            raise _BadRequest(str(error), status=409) from None
    return _answer(snapshot)


@api.post("/envs/<env_id>/restore")
def restore(env_id: str) -> Any:
    session = _env_session(env_id)
    body = _body({"goal_index", "state", "steps", "last_potential", "np_random", "np_random_seed"})
    with session.lock:
        try:
            restore_episode(session.env, body)
        except ValueError as error:
            raise _BadRequest(str(error)) from None
        session.used = True
        if session.recorder is not None:  # a record starts at a reset: the copy's next one
            session.recorder.close()
            session.recorder = None
    return _answer({"steps": session.env.steps})


@api.post("/envs/<env_id>/fork")
def fork(env_id: str) -> Any:
    session = _env_session(env_id)
    with session.lock:
        # The server's own object, pickled and loaded in-process: a deep copy that shares
        # the catalogue (WebShopEnv pickles its arguments and episode state only).
        copy = pickle.loads(pickle.dumps(session.env))
    forked = _add_env(copy, used=True)
    return _answer({"env_id": forked.id}, 201)


@api.delete("/envs/<env_id>")
def close(env_id: str) -> Any:
    if not server_of().api_envs.remove(env_id):
        raise _BadRequest(
            f"no env {env_id[:60]!r} on this server (closed, expired or never made)", status=404
        )
    return Response(status=204)
