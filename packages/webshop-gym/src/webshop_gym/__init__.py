"""WebShop (Yao et al. 2022) as Gymnasium environments.

Importing the package registers the environments::

    import gymnasium as gym
    import webshop_gym

    env = gym.make("WebShop-Mini-Text-v0")

The package, by concern:

- the environment core, pure functions over one page description: `actions` (the action
  grammar), `shop` (the site as a state machine), `render` / `render_html` (a page as text
  or HTML), `reward` and `shaping` (the original reward and its variants), `envs` (the
  Gymnasium env and its registered ids), `wrappers`, `vector` (many episodes side by side,
  each slot on its own goal);
- `data`: products, goals and prepared stores; `search`: the search engines;
- around the core: `scripted` (rule and expert policies), `trajectories` (episode records),
  `wire` (goals and pages as JSON), `remote` (the client env of a served shop), `web` (the
  Flask shop and JSON API, extra ``web``), `cli`.

The names most code needs are importable from here: `WebShopEnv`, `Goal`, `Product`,
`load_catalog`, `build_goals`, `goal_split`.
"""

from __future__ import annotations

from gymnasium.envs.registration import register, registry

from webshop_gym.data.catalog import load_catalog
from webshop_gym.data.goals import build_goals, goal_split
from webshop_gym.data.model import Goal, Product
from webshop_gym.envs import WebShopEnv

__version__ = "0.1.0"

ENTRY_POINT = "webshop_gym.envs:WebShopEnv"

# id -> the arguments that make it; every other argument can still be passed to gym.make.
ENV_IDS: dict[str, dict[str, object]] = {
    "WebShop-Mini-Text-v0": {"catalog": "mini", "observation_mode": "text"},
    "WebShop-Text-v0": {"catalog": "full", "observation_mode": "text"},
    "WebShop-Mini-HTML-v0": {"catalog": "mini", "observation_mode": "html"},
    "WebShop-HTML-v0": {"catalog": "full", "observation_mode": "html"},
    # A client of a `webshop-gym serve` server (server_url=..., default $WEBSHOP_GYM_SERVER).
    "WebShop-Remote-v0": {"observation_mode": "text"},
}
# Ids whose class is not `WebShopEnv`.
ENTRY_POINTS: dict[str, str] = {"WebShop-Remote-v0": "webshop_gym.web.client:RemoteWebShopEnv"}


def register_envs() -> None:
    """Registers every WebShop id (idempotent: safe to call after import)."""
    for env_id, kwargs in ENV_IDS.items():
        if env_id not in registry:
            register(id=env_id, entry_point=ENTRY_POINTS.get(env_id, ENTRY_POINT), kwargs=dict(kwargs))


register_envs()

__all__ = [
    "ENV_IDS",
    "Goal",
    "Product",
    "WebShopEnv",
    "__version__",
    "build_goals",
    "goal_split",
    "load_catalog",
    "register_envs",
]
