"""An env's episode as JSON and back: how the server copies, branches and restores episodes.

The JSON API hands a remote env's episode to its client (``GET /api/v1/envs/<id>/snapshot``,
what a pickled `webshop_gym.web.client.RemoteWebShopEnv` carries) and continues one in a new
env (``POST .../restore``); the web shop puts an env back to an earlier page when a visitor
goes Back (`webshop_gym.web.visits`). Only the server does this, so it lives here, beside it,
and not in `webshop_gym.envs`: the env gives its episode as plain parts (the ones its pickles
carry) and takes them back; this module turns them into JSON and checks JSON from outside
before any of it reaches the env. Standard library and the codec only: no Flask.

Example:
    >>> from webshop_gym.envs import WebShopEnv
    >>> env = WebShopEnv(split="test")
    >>> _ = env.reset(seed=0, options={"goal_index": 0})
    >>> snapshot = episode_snapshot(env)
    >>> _ = env.step("search[shoes]")
    >>> restore_episode(env, snapshot)
    >>> env.state.page.value, env.steps
    ('search', 0)
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import gymnasium as gym

from webshop_gym.data.model import BaseCatalog
from webshop_gym.envs import WebShopEnv
from webshop_gym.shop import SUB_PAGES, Page, PageState
from webshop_gym.web.codec import state_from_json, state_to_json

__all__ = ["SNAPSHOT_FIELDS", "episode_snapshot", "restore_episode"]

SNAPSHOT_FIELDS = frozenset({"goal_index", "state", "steps", "last_potential", "np_random", "np_random_seed"})


def episode_snapshot(env: WebShopEnv) -> dict[str, Any]:
    """The episode's state as JSON data (goal by index, page, steps, random generator).

    `restore_episode` on an env with the same arguments continues it exactly. A goal
    given with ``reset(options={"goal": ...})`` has no index and cannot be snapshot.

    Raises:
        ValueError: The episode plays a goal given to ``reset``.
    """
    parts = env._episode_parts()
    if parts["goal"] is not None and parts["goal_index"] is None:
        raise ValueError("an episode on a goal given to reset (not a split goal) has no snapshot")
    return {
        "goal_index": parts["goal_index"],
        "state": state_to_json(parts["state"]) if parts["state"] is not None else None,
        "steps": parts["steps"],
        "last_potential": parts["last_potential"],
        "np_random": parts["np_random"],
        "np_random_seed": parts["np_random_seed"],
    }


def restore_episode(env: WebShopEnv, snapshot: Mapping[str, Any]) -> None:
    """Continues the episode of an `episode_snapshot` (from any env with these arguments) in ``env``.

    Raises:
        ValueError: The snapshot is malformed or does not fit this env (its split, its
            catalogue, its step limit); the env is then unchanged.
    """
    if not isinstance(snapshot, Mapping) or set(snapshot) != SNAPSHOT_FIELDS:
        raise ValueError(f"a snapshot is an object with exactly the fields {sorted(SNAPSHOT_FIELDS)}")
    goal_index, steps = snapshot["goal_index"], snapshot["steps"]
    goals = len(env.goal_indices)
    if goal_index is not None and (
        not isinstance(goal_index, int) or isinstance(goal_index, bool) or not 0 <= goal_index < goals
    ):
        raise ValueError(f"snapshot goal_index must be null or an int in [0, {goals})")
    if not isinstance(steps, int) or isinstance(steps, bool) or not 0 <= steps <= env.max_steps:
        raise ValueError(f"snapshot steps must be an int in [0, {env.max_steps}]")
    potential = snapshot["last_potential"]
    if not isinstance(potential, (int, float)) or isinstance(potential, bool):
        raise ValueError("snapshot last_potential must be a number")
    state = _checked_state(snapshot["state"], env.catalog) if snapshot["state"] is not None else None
    if (state is None) != (goal_index is None):
        raise ValueError("a snapshot has both a goal_index and a state, or neither")
    if snapshot["np_random"] is not None:
        rng, _ = gym.utils.seeding.np_random()
        try:
            rng.bit_generator.state = snapshot["np_random"]
        except (TypeError, ValueError, KeyError) as error:
            raise ValueError(f"snapshot np_random is not a PCG64 state: {error}") from None
    seed = snapshot["np_random_seed"]
    if seed is not None and (not isinstance(seed, int) or isinstance(seed, bool)):
        raise ValueError("snapshot np_random_seed must be null or an int")
    # Checked: now change the env.
    goal = env.goal_at(goal_index) if goal_index is not None else None
    env._resume(goal_index, goal, state, steps, float(potential), snapshot["np_random"], seed)


def _checked_state(data: object, catalog: BaseCatalog) -> PageState:
    """A `PageState` from JSON that only names this catalogue's products (for `restore_episode`)."""
    fields = {
        "page", "instruction", "keywords", "result_asins", "page_number", "asin",
        "selected_options", "sub_page", "visited", "reward",
    }  # fmt: skip
    if not isinstance(data, dict) or set(data) != fields:
        raise ValueError(f"snapshot state must be an object with exactly the fields {sorted(fields)}")
    strings = lambda v: isinstance(v, list) and all(isinstance(x, str) for x in v)  # noqa: E731
    pairs = isinstance(data["selected_options"], list) and all(
        isinstance(p, list) and len(p) == 2 and all(isinstance(x, str) for x in p)
        for p in data["selected_options"]
    )
    if not (
        data["page"] in {page.value for page in Page}
        and isinstance(data["instruction"], str)
        and strings(data["keywords"])
        and strings(data["result_asins"])
        and strings(data["visited"])
        and isinstance(data["page_number"], int)
        and not isinstance(data["page_number"], bool)
        and (data["asin"] is None or isinstance(data["asin"], str))
        and pairs
        and (data["sub_page"] is None or data["sub_page"] in SUB_PAGES)
        and (data["reward"] is None or isinstance(data["reward"], (int, float)))
    ):
        raise ValueError("snapshot state has a field of the wrong type or value")
    asins = [*data["result_asins"], *data["visited"], *([data["asin"]] if data["asin"] is not None else [])]
    unknown = [asin for asin in asins if asin not in catalog]
    if unknown:
        raise ValueError(f"snapshot state names products not in catalogue {catalog.name!r}: {unknown[:3]}")
    state = state_from_json(data)
    if state.page in (Page.ITEM, Page.SUB_PAGE, Page.DONE) and state.asin is None:
        raise ValueError(f"snapshot state: a {state.page.value} page needs an asin")
    if (state.page is Page.SUB_PAGE) != (state.sub_page is not None):
        raise ValueError("snapshot state: sub_page is set on sub-pages and only there")
    return state
