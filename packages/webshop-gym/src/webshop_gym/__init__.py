"""WebShop (Yao et al. 2022) as Gymnasium environments.

Importing the package registers the environments::

    import gymnasium as gym
    import webshop_gym

    env = gym.make("WebShop-Mini-Text-v0")

The package, by concern:

- the environment: `envs` (`WebShopEnv` and its arguments), `spaces` (the unicode string
  spaces), `actions` (the action grammar), `shop` (the site as a state machine over page
  states), `render` (a page as ``text``, ``text_rich`` or HTML: `render.text`,
  `render.html`, its templates and static files), `reward` (`reward.original`, the
  original reward and its binary variant; `reward.colors` and `reward.nouns`, what it
  matches with; `reward.shaping`, the shaped variant's potential), `wrappers`
  (`DiscreteActions` for stable-baselines3), `trajectories` (episode records and replay);
- `data`: products, goals, splits, prepared stores and the world every env over one
  catalogue shares (`data.world`); `search`: the search engines;
- `agents`: what plays the env from outside: `agents.scripted` (rule and expert policies),
  `agents.pages` (readers of text pages), `agents.scheduler` (many episodes on one vector env);
- `web`: WebShop over HTTP: `web.client` (``WebShop-Remote-v0``) and `web.codec` need only
  the core; the server (`web.app`, `web.api`, ...) needs the ``web`` extra and is imported
  only when used;
- `integrations` (OpenEnv, TRL, SkyRL, verl-agent, one extra each) and `cli` (the
  ``webshop-gym`` command: `cli.data`, `cli.serve`, `cli.replay`); `demo`, `lru`.

The old module paths (`wire`, `remote`, `render_html`, `colors`, `noun_tagger`, `shaping`,
`scripted`, `vector`, `cli_web`) re-export from where their code now lives.

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
