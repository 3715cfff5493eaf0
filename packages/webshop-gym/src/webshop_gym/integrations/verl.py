"""verl-agent's WebShop contract, on a pool of Ray actors that share one prepared store.

verl-agent (GiGPO, Feng et al. 2025) trains on WebShop through two functions of its
``agent_system/environments/env_package/webshop`` package, which this module provides
with the same names, arguments and results, over `webshop_gym.envs.WebShopEnv`; its
``make_envs`` and ``WebshopEnvironmentManager`` run on them with only that import changed:

* ``build_webshop_envs(seed, env_num, group_n, resources_per_worker, is_train, env_kwargs)``
  returns a batch of ``env_num * group_n`` envs with ``reset() -> (observations, infos)``
  and ``step(actions) -> (observations, rewards, dones, infos)``. The ``group_n``
  consecutive envs of a group play the same goal (GRPO / GiGPO groups). verl-agent before
  August 2025 called it without ``resources_per_worker``; that call works too.
* ``webshop_projection(texts) -> (actions, valids)`` reads the action out of each model
  answer ``<think>...</think><action>...</action>``.

What the batch returns, as verl-agent's WebShop workers return it:

* ``rewards``: 10.0 for a purchase that meets everything (R == 1), else 0.0;
* ``infos[i]["won"]``: that purchase; ``infos[i]["task_score"]`` (on steps): the env's own
  reward of the step (the original R at a purchase, with ``reward="original"``);
* ``infos[i]["available_actions"]``: ``{"has_search_bar": bool, "clickables": [str]}``,
  the original env's shape, which verl-agent's prompt builder reads;
* ``dones``: the episode ended (bought, or out of its ``max_steps`` actions).

The other keys of `WebShopEnv`'s ``info`` come along (``instruction``, ``goal_index``,
``page``, ``action_error``: why an action did nothing, ``steps_left``, and the reward
breakdown at a purchase). Stepping an env whose episode has ended changes nothing and
gives reward 0, so a trainer may keep stepping the whole batch, as verl-agent does.

**env_kwargs** are `WebShopEnv` arguments (``catalog``, ``goals``, ``observation_mode``,
``max_steps``, ...), or the original env's that verl-agent's ``make_envs`` passes:
``file_path`` and ``attr_path`` name an official product set (``items_shuffle_1000.json``
and ``items_ins_v2_1000.json``: ``catalog="1k"``; ``items_shuffle.json`` and
``items_ins_v2.json``: ``"full"``), played from its prepared store (`webshop-gym data
prepare`), not from those files; ``human_goals`` picks ``goals="human"`` when true, else
``"synthetic"``; ``num_products`` may be None (all products: the only setting verl-agent
uses); ``show_attrs`` is ``show_attributes``.

**Goals** follow one of two named protocols (``goal_protocol``):

* ``"webshop-gym"`` (the default): the paper's fixed splits, the train split when
  ``is_train``, else the test split; each `reset` draws ``env_num`` different goals of the
  split with a generator seeded by ``seed``, in the driver. Train, dev and test stay apart.
* ``"verl-agent"``: verl-agent's own goals, to compare with numbers published on its
  set-up. verl-agent (since its commit a64f4e0 of 2025-06-29) gives env ``i`` a worker
  seeded ``seed + i // group_n`` whose goal list is the original's build order shuffled by
  ``random.seed(worker seed)``; each reset draws ``env_num`` places with
  ``numpy.random.RandomState(seed).choice`` from ``range(500)`` (test) or ``range(500, n)``
  (train), one per group, and env ``i`` plays the goal at its group's place of its own
  list. This protocol makes the same draws and plays webshop-gym's goal of the same
  product, options and instruction (`verl_agent_goal_order`); only the price limit is
  webshop-gym's, seeded per goal, where verl-agent's comes from each worker's random state.
  Its train and test goals overlap (each list is shuffled anew, and places 500+ hold
  webshop-gym's dev and test goals): building such a batch warns so.
  `build_webshop_envs_with_verl_agent_goals` is `build_webshop_envs` with this protocol,
  for code that can only change the import.

**Actors.** The envs live in Ray actors, ``envs_per_actor`` envs each (verl-agent runs one
env per actor; steps here take well under a millisecond, so a Ray call per env would cost
more than the env). ``resources_per_worker`` are each actor's Ray resources
(``{"num_cpus": 0.1}``). Every actor opens the same prepared store
(`webshop_gym.data.store`): its arrays and index are memory-mapped and its records read
through the page cache, so N actors cost little more than one; a folder of raw JSON
files is refused with the command that prepares it (each actor would parse and hold its
own copy). ``catalog="mini"``, the bundled 497 products, loads in each actor (small).

Ray: the batch calls ``ray.init()`` (a local cluster) when Ray is not initialised yet; to
use a cluster, call ``ray.init(address=...)`` first. The catalogue is resolved to a path
in the driver and opened at that path by every actor, so on a cluster the prepared store
must exist at the same path on each node. `WebShopEnvs.close`, or the batch's garbage
collection, kills the actors (Ray stays up: other batches may use it).
"""

from __future__ import annotations

import inspect
import math
import os
import random
import re
import warnings
import weakref
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

import numpy as np

try:
    import ray
except ModuleNotFoundError as error:  # the adapter's extra is missing: say which
    if error.name != "ray":
        raise
    raise ModuleNotFoundError(
        "webshop_gym.integrations.verl runs its envs on Ray, which is not installed: "
        "pip install 'webshop-gym[ray]'",
        name="ray",
    ) from error

from webshop_gym.actions import ACTION_KINDS
from webshop_gym.data.goals import GoalSource, build_order_positions
from webshop_gym.data.locations import OFFICIAL_SETS, resolve_catalog, store_dir
from webshop_gym.data.store import is_store
from webshop_gym.envs import WebShopEnv

__all__ = [
    "ENVS_PER_ACTOR",
    "GOAL_PROTOCOLS",
    "VERL_AGENT_TEST_GOALS",
    "WIN_REWARD",
    "WebShopEnvs",
    "build_webshop_envs",
    "build_webshop_envs_with_verl_agent_goals",
    "verl_agent_goal_order",
    "verl_available_actions",
    "webshop_projection",
]

WIN_REWARD = 10.0  # verl-agent's reward for a won episode (a purchase with R == 1); 0 otherwise
ENVS_PER_ACTOR = 16
# verl-agent's WebShop set-up: the official 1,000 products with their templated goals.
DEFAULT_ENV_KWARGS: Mapping[str, Any] = {"catalog": "1k", "goals": "synthetic"}
_ENV_PARAMETERS = inspect.signature(WebShopEnv.__init__).parameters
_ENV_ARGUMENTS = tuple(name for name in _ENV_PARAMETERS if name != "self")

GoalProtocol = Literal["webshop-gym", "verl-agent"]
GOAL_PROTOCOLS: tuple[GoalProtocol, ...] = ("webshop-gym", "verl-agent")
# verl-agent tests on places 0-499 of a worker's goal list and trains on the rest.
VERL_AGENT_TEST_GOALS = 500
VERL_AGENT_GOALS_WARNING = (
    "goal_protocol='verl-agent' plays verl-agent's goals, to compare with numbers published on its "
    "set-up; they are not leak-free: each env shuffles all goals with its own seed, trains on places "
    "500 and up of its list (which hold most of webshop-gym's test goals and the paper's dev block "
    "500-1499) and tests on places 0-499, which are train goals of other envs. For held-out results "
    "keep the default goal_protocol='webshop-gym'."
)
# The original env's arguments that verl-agent's make_envs passes in env_kwargs (see the module doc).
VERL_AGENT_ENV_KWARGS = ("file_path", "attr_path", "num_products", "human_goals", "show_attrs")

# -- projection: model answers -> actions ----------------------------------------------------

_ACTION_OPEN, _ACTION_CLOSE = "<action>", "</action>"
_THINK_OPEN, _THINK_CLOSE = "<think>", "</think>"
_CJK = re.compile("[\u4e00-\u9fff]")  # verl-agent counts an answer with Chinese characters as invalid
_FALLBACK_CHARS = 20  # without an action block the env gets the answer's tail (and reports it)


def webshop_projection(texts: Sequence[str]) -> tuple[list[str], list[int]]:
    """The action of each model answer, and whether the answer kept verl-agent's format.

    verl-agent's rules: the answer is lower-cased; the action is the text between
    ``<action>`` and the ``</action>`` after it, stripped. The format is valid (1) when
    that block exists, ``<think>`` and ``</think>`` both appear, and no Chinese character
    (U+4E00-U+9FFF) does; else 0. Without an action block the action is the answer's last
    20 characters, which the env then reports as invalid (or plays, if they happen to be
    an action). Where verl-agent would take an empty action from ``</action>...<action>``,
    this looks for the closing tag after the opening one.

    Args:
        texts: The model's answers, one per env.

    Returns:
        ``(actions, valids)``: the action strings for `WebShopEnvs.step` and 1 / 0 per answer.

    Raises:
        TypeError: an answer is not a string.

    Example:
        >>> webshop_projection(["<think>a red mug</think><action>search[Red Mug]</action>"])
        (['search[red mug]'], [1])
        >>> webshop_projection(["<action>click[buy now]</action>", "click[buy now]"])
        (['click[buy now]', 'click[buy now]'], [0, 0])
    """
    actions: list[str] = []
    valids: list[int] = []
    for position, text in enumerate(texts):
        if not isinstance(text, str):
            raise TypeError(f"answer {position} is a {type(text).__name__}; webshop_projection reads strings")
        lowered = text.lower()
        start = lowered.find(_ACTION_OPEN)
        end = lowered.find(_ACTION_CLOSE, start + len(_ACTION_OPEN)) if start != -1 else -1
        if end == -1:
            actions.append(lowered[-_FALLBACK_CHARS:])
            valids.append(0)
            continue
        actions.append(lowered[start + len(_ACTION_OPEN) : end].strip())
        thought = _THINK_OPEN in text and _THINK_CLOSE in text
        valids.append(int(thought and _CJK.search(text) is None))
    return actions, valids


# -- one actor: several envs -------------------------------------------------------------------


def verl_available_actions(actions: Sequence[str]) -> dict[str, Any]:
    """`WebShopEnv`'s ``available_actions`` in the original env's shape, as verl-agent reads it.

    >>> verl_available_actions(["search[<query>]"])
    {'has_search_bar': True, 'clickables': []}
    >>> verl_available_actions(["click[back to search]", "click[b0ab12cd34]"])
    {'has_search_bar': False, 'clickables': ['back to search', 'b0ab12cd34']}
    """
    search, click = (f"{kind}[" for kind in ACTION_KINDS)
    return {
        "has_search_bar": any(action.startswith(search) for action in actions),
        "clickables": [action[len(click) : -1] for action in actions if action.startswith(click)],
    }


def _verl_info(info: Mapping[str, Any]) -> dict[str, Any]:
    return {**info, "available_actions": verl_available_actions(info["available_actions"])}


class EnvShard:
    """Several `WebShopEnv` in one process: the body of one Ray actor.

    The envs are made by `open`, not in ``__init__``: Ray hands a method's exception to the
    caller (a bad argument stays a ValueError), but reports a failed ``__init__`` only as a
    dead actor.
    """

    def __init__(self) -> None:
        self.envs: list[WebShopEnv] = []

    def open(self, env_kwargs: Mapping[str, Any], count: int) -> tuple[int, str]:
        """Makes ``count`` envs; returns how many goals their split has and the catalogue's name."""
        self.envs = [WebShopEnv(**env_kwargs) for _ in range(count)]
        return len(self.envs[0].goal_indices), self.envs[0].catalog.name

    def pid(self) -> int:
        """This actor's process id (for memory measurements)."""
        return os.getpid()

    def reset(self, starts: Sequence[tuple[int, int]]) -> list[tuple[str, dict[str, Any]]]:
        """Starts each env on its ``(seed, goal_index)``."""
        results = []
        for env, (seed, goal_index) in zip(self.envs, starts, strict=True):
            observation, info = env.reset(seed=seed, options={"goal_index": goal_index})
            results.append((observation, {**_verl_info(info), "won": False}))
        return results

    def step(self, actions: Sequence[str]) -> list[tuple[str, float, bool, dict[str, Any]]]:
        """Steps each env with its action; rewards, dones and infos as verl-agent's."""
        results = []
        for env, action in zip(self.envs, actions, strict=True):
            observation, reward, terminated, truncated, info = env.step(action)
            won = bool(terminated and info.get("success", False))
            verl_info = {**_verl_info(info), "won": won, "task_score": float(reward)}
            results.append((observation, WIN_REWARD if won else 0.0, terminated or truncated, verl_info))
        return results


_RemoteShard = ray.remote(EnvShard)


# -- verl-agent's goals ------------------------------------------------------------------------


def verl_agent_goal_order(
    source: GoalSource, n_goals: int, catalog_name: str, worker_seed: int
) -> np.ndarray:
    """Which of webshop-gym's goals sits at each place of a verl-agent worker's goal list.

    A verl-agent worker builds the original's goal list (products in file order, each
    product's goals in order) and shuffles it after ``random.seed(worker_seed)``. Place
    ``j`` of that list holds build-order goal ``b``, which webshop-gym lists at the place
    of its number (`webshop_gym.data.goals.build_order_positions`) among all numbers.

    Args:
        source: ``"human"`` or ``"synthetic"`` (verl-agent's ``human_goals``).
        n_goals: How many goals of that source the catalogue has.
        catalog_name: The catalogue's name (`BaseCatalog.name`).
        worker_seed: The worker's seed (verl-agent: ``seed + i // group_n`` for env ``i``).

    Returns:
        ``order[j]``: the index in `webshop_gym.data.goals.build_goals` (the ``"all"`` split)
        of the goal at place ``j`` (int64, ``n_goals`` entries).

    Example:
        >>> order = verl_agent_goal_order("synthetic", 6910, "webshop-1k", worker_seed=0)
        >>> order[:3].tolist(), sorted(order.tolist()) == list(range(6910))
        ([5162, 144, 2021], True)
    """
    positions = np.asarray(build_order_positions(source, n_goals, catalog_name), dtype=np.int64)
    listed_at = np.empty(n_goals, dtype=np.int64)
    listed_at[np.argsort(positions, kind="stable")] = np.arange(n_goals)
    built = list(range(n_goals))
    # random.seed(s) then random.shuffle, as verl-agent's worker does, on a private generator:
    # the same Mersenne Twister state, so the same permutation.
    random.Random(worker_seed).shuffle(built)
    return listed_at[np.asarray(built, dtype=np.int64)]


# -- the batch ---------------------------------------------------------------------------------


class WebShopEnvs:
    """``env_num * group_n`` WebShop envs on Ray actors, stepped as one batch (see the module doc).

    Made by `build_webshop_envs`; close it (or use it as a context manager, or drop it) to
    kill its actors.
    """

    def __init__(
        self,
        seed: int,
        env_num: int,
        group_n: int,
        resources_per_worker: Mapping[str, Any] | None,
        is_train: bool,
        env_kwargs: Mapping[str, Any] | None,
        envs_per_actor: int,
        goal_protocol: GoalProtocol = "webshop-gym",
    ) -> None:
        for name, value in (("env_num", env_num), ("group_n", group_n), ("envs_per_actor", envs_per_actor)):
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise ValueError(f"{name} must be a positive int, got {value!r}")
        if not isinstance(seed, int) or isinstance(seed, bool):
            raise ValueError(f"seed must be an int, got {seed!r}")
        if resources_per_worker is not None and not isinstance(resources_per_worker, Mapping):
            raise ValueError(
                f"resources_per_worker must be a dict of Ray actor options such as {{'num_cpus': 0.1}}, "
                f"got {resources_per_worker!r}"
            )
        if goal_protocol not in GOAL_PROTOCOLS:
            raise ValueError(
                f"goal_protocol must be one of {', '.join(map(repr, GOAL_PROTOCOLS))}, got {goal_protocol!r}"
            )
        self.env_num, self.group_n, self.seed = env_num, group_n, seed
        self.goal_protocol = goal_protocol
        verl_agent = goal_protocol == "verl-agent"
        self.split = "all" if verl_agent else "train" if is_train else "test"
        # verl-agent draws with numpy's legacy generator; ours with a Generator.
        self._rng: Any = np.random.RandomState(seed) if verl_agent else np.random.default_rng(seed)
        kwargs = _actor_env_kwargs(env_kwargs, self.split)
        self.goal_source: GoalSource = kwargs.get("goals", _ENV_PARAMETERS["goals"].default)
        if not ray.is_initialized():
            ray.init()
        counts = _shard_sizes(env_num * group_n, envs_per_actor)
        remote = _RemoteShard.options(**(resources_per_worker or {}))
        self._actors: list[Any] = [remote.remote() for _ in counts]
        # Kills the actors when the batch is closed or garbage-collected, whichever comes first.
        self._finalizer = weakref.finalize(self, _kill_actors, self._actors)
        self._finalizer.atexit = False  # at exit Ray ends the driver's actors itself
        self._counts = counts
        try:
            opened = [actor.open.remote(kwargs, n) for actor, n in zip(self._actors, counts, strict=True)]
            self.split_size, self.catalog_name = ray.get(opened)[0]
        except ray.exceptions.RayTaskError as error:  # the env's own error (e.g. a bad argument)
            self.close()
            raise error.cause from None
        except BaseException:
            self.close()
            raise
        if verl_agent:
            test, n = VERL_AGENT_TEST_GOALS, self.split_size
            self._places = range(test) if not is_train else range(test, n)
            self._goal_orders: dict[int, np.ndarray] = {}
            if n < test or env_num > len(self._places):
                self.close()
                raise ValueError(
                    f"goal_protocol='verl-agent' draws env_num={env_num} places of {self._places} of a "
                    f"list of the catalogue's {n} {self.goal_source} goals: too few; lower env_num or use "
                    f"more goals"
                )
        elif env_num > self.split_size:
            self.close()
            raise ValueError(
                f"env_num={env_num} goals per reset, but the {self.split!r} split has {self.split_size}: "
                f"each reset draws env_num different goals; lower env_num"
            )
        self.goal_indices: list[int] = []  # the goal of each env since the last reset

    def __len__(self) -> int:
        return self.env_num * self.group_n

    def reset(self) -> tuple[list[str], list[dict[str, Any]]]:
        """Starts every env: ``env_num`` different goals, each played by ``group_n`` envs in a row."""
        self._check_open()
        starts = self._verl_agent_starts() if self.goal_protocol == "verl-agent" else self._split_starts()
        self.goal_indices = [goal for _, goal in starts]
        results = self._call("reset", starts)
        return [observation for observation, _ in results], [info for _, info in results]

    def _split_starts(self) -> list[tuple[int, int]]:
        goals = self._rng.choice(self.split_size, size=self.env_num, replace=False)
        seeds = self._rng.integers(2**31, size=self.env_num)
        return [(int(s), int(g)) for s, g in zip(seeds, goals, strict=True) for _ in range(self.group_n)]

    def _verl_agent_starts(self) -> list[tuple[int, int]]:
        places = self._rng.choice(self._places, size=self.env_num, replace=False)
        starts = []
        for i in range(len(self)):
            worker_seed = self.seed + i // self.group_n
            order = self._goal_orders.get(worker_seed)
            if order is None:
                order = verl_agent_goal_order(
                    self.goal_source, self.split_size, self.catalog_name, worker_seed
                )
                self._goal_orders[worker_seed] = order
            starts.append((worker_seed, int(order[places[i // self.group_n]])))
        return starts

    def step(self, actions: Sequence[str]) -> tuple[list[str], list[float], list[bool], list[dict[str, Any]]]:
        """One action per env, in env order (env i of group g is ``g * group_n + i``)."""
        self._check_open()
        if isinstance(actions, str) or len(actions) != len(self):
            got = "a string" if isinstance(actions, str) else f"{len(actions)} actions"
            raise ValueError(f"step takes a list of {len(self)} actions (one per env), got {got}")
        results = self._call("step", list(actions))
        observations, rewards, dones, infos = (list(column) for column in zip(*results, strict=True))
        return observations, rewards, dones, infos

    def actor_pids(self) -> list[int]:
        """The process id of each actor (to measure their memory)."""
        self._check_open()
        return ray.get([actor.pid.remote() for actor in self._actors])  # type: ignore[no-any-return]

    def close(self) -> None:
        """Kills the actors (idempotent). Ray itself stays up."""
        self._finalizer()

    def __enter__(self) -> WebShopEnvs:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def _check_open(self) -> None:
        if not self._finalizer.alive:
            raise RuntimeError("these envs are closed (their actors are gone); build_webshop_envs makes more")

    def _call(self, method: str, per_env: list[Any]) -> list[Any]:
        """Sends each actor its slice of ``per_env``; the results in env order."""
        futures, start = [], 0
        for actor, count in zip(self._actors, self._counts, strict=True):
            futures.append(getattr(actor, method).remote(per_env[start : start + count]))
            start += count
        return [result for results in ray.get(futures) for result in results]


def _kill_actors(actors: Sequence[Any]) -> None:
    if not ray.is_initialized():  # Ray was shut down: the actors went with it
        return
    for actor in actors:
        ray.kill(actor)


def build_webshop_envs(
    seed: int = 0,
    env_num: int = 1,
    group_n: int = 1,
    resources_per_worker: Mapping[str, Any] | None = None,
    is_train: bool = True,
    env_kwargs: Mapping[str, Any] | None = None,
    *,
    envs_per_actor: int = ENVS_PER_ACTOR,
    goal_protocol: GoalProtocol = "webshop-gym",
) -> WebShopEnvs:
    """verl-agent's ``build_webshop_envs``: ``env_num * group_n`` envs on Ray actors.

    Takes verl-agent's call since August 2025, ``(seed, env_num, group_n,
    resources_per_worker, is_train, env_kwargs)``, and its earlier one without
    ``resources_per_worker``, by keyword or by position (``(seed, env_num, group_n,
    is_train, env_kwargs)``: a bool in the fourth place is ``is_train``).

    Args:
        seed: Seeds the goal draws (and the envs' resets).
        env_num: Different goals per reset (verl-agent's batch size).
        group_n: Envs per goal (verl-agent's ``env.rollout.n``); a group's envs are adjacent.
        resources_per_worker: Ray options of each actor, e.g. ``{"num_cpus": 0.1}``; None: Ray's defaults.
        is_train: Train goals if True, else test goals (of the goal protocol).
        env_kwargs: `WebShopEnv` arguments (``catalog``, ``goals``, ``observation_mode``,
            ``reward``, ``max_steps``, ...), all but ``split``, or the original env's that
            verl-agent passes (``file_path``, ``attr_path``, ``num_products``,
            ``human_goals``; see the module doc). Default: ``{"catalog": "1k", "goals":
            "synthetic"}``, verl-agent's set-up.
        envs_per_actor: Envs each actor holds (not in verl-agent, which has one per actor).
        goal_protocol: ``"webshop-gym"`` (the paper's splits, leak-free) or ``"verl-agent"``
            (verl-agent's goals and draws, to compare with its published numbers; warns
            that its train and test goals overlap).

    Raises:
        ValueError: a bad argument, a raw catalogue folder (the message says how to prepare
            it), or more goals per reset than the split has.
        FileNotFoundError: the catalogue is not there (the message says how to get it).
    """
    envs = _build(
        seed, env_num, group_n, resources_per_worker, is_train, env_kwargs, envs_per_actor, goal_protocol
    )
    if goal_protocol == "verl-agent":
        warnings.warn(VERL_AGENT_GOALS_WARNING, UserWarning, stacklevel=2)
    return envs


def build_webshop_envs_with_verl_agent_goals(
    seed: int = 0,
    env_num: int = 1,
    group_n: int = 1,
    resources_per_worker: Mapping[str, Any] | None = None,
    is_train: bool = True,
    env_kwargs: Mapping[str, Any] | None = None,
    *,
    envs_per_actor: int = ENVS_PER_ACTOR,
) -> WebShopEnvs:
    """`build_webshop_envs` with ``goal_protocol="verl-agent"``, for code that can only change an import.

    In verl-agent's ``make_envs``: ``from webshop_gym.integrations.verl import
    build_webshop_envs_with_verl_agent_goals as build_webshop_envs, webshop_projection``.
    """
    envs = _build(
        seed, env_num, group_n, resources_per_worker, is_train, env_kwargs, envs_per_actor, "verl-agent"
    )
    warnings.warn(VERL_AGENT_GOALS_WARNING, UserWarning, stacklevel=2)
    return envs


def _build(
    seed: int,
    env_num: int,
    group_n: int,
    resources_per_worker: Any,
    is_train: Any,
    env_kwargs: Mapping[str, Any] | None,
    envs_per_actor: int,
    goal_protocol: GoalProtocol,
) -> WebShopEnvs:
    """The batch, from either of verl-agent's calls (see `build_webshop_envs`)."""
    if isinstance(resources_per_worker, bool):  # verl-agent's earlier positional call
        if env_kwargs is not None or not (is_train is None or isinstance(is_train, (bool, Mapping))):
            raise ValueError(
                "a bool fourth argument is is_train, as in verl-agent's earlier build_webshop_envs(seed, "
                "env_num, group_n, is_train, env_kwargs); pass resources_per_worker by keyword with it"
            )
        is_train, env_kwargs = resources_per_worker, is_train if isinstance(is_train, Mapping) else None
        resources_per_worker = None
    return WebShopEnvs(
        seed, env_num, group_n, resources_per_worker, is_train, env_kwargs, envs_per_actor, goal_protocol
    )


def _actor_env_kwargs(env_kwargs: Mapping[str, Any] | None, split: str) -> dict[str, Any]:
    """The `WebShopEnv` arguments every actor gets; the catalogue as an absolute store path."""
    if env_kwargs is None:
        env_kwargs = DEFAULT_ENV_KWARGS
    if not isinstance(env_kwargs, Mapping):
        raise ValueError(f"env_kwargs must be a dict of WebShopEnv arguments, got {env_kwargs!r}")
    if "split" in env_kwargs:
        raise ValueError("env_kwargs may not set the split: is_train picks it (train if True, else test)")
    verl_agent_file = env_kwargs.get("file_path")
    if any(name in env_kwargs for name in VERL_AGENT_ENV_KWARGS):
        env_kwargs = _from_original_env_kwargs(env_kwargs)
    unknown = [name for name in env_kwargs if name not in _ENV_ARGUMENTS]
    if unknown:
        allowed = ", ".join(name for name in (*_ENV_ARGUMENTS, *VERL_AGENT_ENV_KWARGS) if name != "split")
        raise ValueError(f"unknown env_kwargs {', '.join(map(repr, unknown))}; this takes {allowed}")
    kwargs = {**env_kwargs, "split": split}
    try:
        catalog = resolve_catalog(kwargs.get("catalog", "mini"))
    except FileNotFoundError as error:
        if verl_agent_file is None or not Path(verl_agent_file).is_file():
            raise
        folder, store = Path(verl_agent_file).parent, store_dir(kwargs["catalog"])
        raise FileNotFoundError(
            f"{error} The official files are in {folder}: `webshop-gym data prepare --from {folder} --out "
            f"{store}` builds the store from them."
        ) from None
    if isinstance(catalog, Path):
        if not is_store(catalog):
            raise ValueError(
                f"catalog {str(catalog)!r} is a folder of raw WebShop files, which every actor would parse "
                f"and hold in its own memory; prepare it once with `webshop-gym data prepare --from "
                f"{catalog} --out STORE` and pass catalog=STORE (actors share a prepared store)"
            )
        catalog = str(catalog.resolve())
    kwargs["catalog"] = catalog
    return kwargs


def _from_original_env_kwargs(env_kwargs: Mapping[str, Any]) -> dict[str, Any]:
    """`WebShopEnv` arguments for env_kwargs in the original env's terms (verl-agent's make_envs)."""
    clash = [name for name in ("catalog", "goals", "show_attributes") if name in env_kwargs]
    if clash:
        original = ", ".join(name for name in VERL_AGENT_ENV_KWARGS if name in env_kwargs)
        raise ValueError(
            f"env_kwargs mix the original env's {original} with webshop-gym's {', '.join(clash)}; "
            f"pass one or the other"
        )
    kwargs = {name: value for name, value in env_kwargs.items() if name not in VERL_AGENT_ENV_KWARGS}
    kwargs["goals"] = "human" if env_kwargs.get("human_goals") else "synthetic"
    if "show_attrs" in env_kwargs:
        kwargs["show_attributes"] = bool(env_kwargs["show_attrs"])
    # The original's defaults are the 1,000-product files.
    products = Path(env_kwargs.get("file_path") or OFFICIAL_SETS["1k"].products).name
    attributes = Path(env_kwargs.get("attr_path") or OFFICIAL_SETS["1k"].attributes).name
    for name, official in OFFICIAL_SETS.items():
        if (products, attributes) == (official.products, official.attributes):
            kwargs["catalog"] = name
            break
    else:
        sets = "; ".join(f"{o.products} with {o.attributes}" for o in OFFICIAL_SETS.values())
        raise ValueError(
            f"file_path {products!r} with attr_path {attributes!r} is not an official WebShop set ({sets}); "
            f"for other files pass catalog=STORE, a store made by `webshop-gym data prepare --from FOLDER`"
        )
    num_products = env_kwargs.get("num_products")
    if num_products is not None:
        raise ValueError(
            f"num_products={num_products!r} would keep the first products of the file; webshop-gym plays "
            f"whole catalogues: pass num_products=None (as verl-agent does) and pick the set by file_path"
        )
    return kwargs


def _shard_sizes(total: int, per_actor: int) -> list[int]:
    """``total`` envs over as few actors as hold ``per_actor`` each, as evenly as possible.

    >>> _shard_sizes(10, 4)
    [4, 3, 3]
    """
    actors = math.ceil(total / per_actor)
    return [total // actors + (i < total % actors) for i in range(actors)]
