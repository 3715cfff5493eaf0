"""What every env over the same catalogue shares in a process: products, goals, prices, the index.

A catalogue loads in milliseconds from a prepared store, but the official files, a synthetic
goal set or an in-memory search index take longer, and a trainer makes dozens of envs over one
catalogue. `shared_world` builds each (catalogue, goal source, search engine) once per process
and hands every env the same objects, read-only.

It lives with the data it loads, not in `webshop_gym.envs`: the env asks for a world and
plays in it; the web server and the integrations' env pools get theirs through the env.

Example:
    >>> world = shared_world("mini", "human", "bm25")
    >>> world is shared_world("mini", "human", "bm25"), world.catalog.name
    (True, 'mini')
"""

from __future__ import annotations

import threading
from collections.abc import Mapping, Sequence
from functools import lru_cache
from typing import NamedTuple

from webshop_gym.data.catalog import load_catalog
from webshop_gym.data.goals import GoalSource, build_goals, product_prices
from webshop_gym.data.locations import resolve_catalog
from webshop_gym.data.model import BaseCatalog, Goal
from webshop_gym.search.engines import build_engine

__all__ = ["World", "shared_world"]


class World(NamedTuple):
    """A loaded catalogue with its goals and its products' prices (its search index is built too)."""

    catalog: BaseCatalog
    goals: Sequence[Goal]
    prices: Mapping[str, float]


# Trainers (SkyRL, rLLM, OpenRLHF) make envs from thread pools. `lru_cache` does not hold
# back a caller while another computes the same key, so without this lock 32 envs made at
# once would each load the catalogue and build its search index (measured on the 1k set:
# 2 catalogues, 26 indexes) instead of sharing one.
_WORLD_LOCK = threading.Lock()


def shared_world(catalog: str, goal_source: GoalSource, engine_name: str) -> World:
    """The world of ``catalog`` (a name or a folder), built on first use and then shared.

    Args:
        catalog: ``"mini"``, ``"1k"``, ``"full"`` or a folder (`webshop_gym.data.locations.resolve_catalog`).
        goal_source: ``"human"`` or ``"synthetic"``.
        engine_name: The search engine whose index is built before the first reset.
    """
    with _WORLD_LOCK:
        return _build_world(catalog, goal_source, engine_name)


@lru_cache(maxsize=8)
def _build_world(catalog: str, goal_source: GoalSource, engine_name: str) -> World:
    loaded = load_catalog(resolve_catalog(catalog))
    build_engine(loaded, engine_name)  # build the index once, before the first reset
    return World(loaded, build_goals(loaded, goal_source), product_prices(loaded))
