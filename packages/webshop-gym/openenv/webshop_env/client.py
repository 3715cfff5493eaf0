"""The client of a WebShop OpenEnv server: ``WebShopEnv``."""

from webshop_gym.integrations.openenv import WebShopClient

from .models import WebShopAction, WebShopObservation, WebShopState

__all__ = ["WebShopAction", "WebShopEnv", "WebShopObservation", "WebShopState", "WebshopEnv"]


class WebShopEnv(WebShopClient):
    """A session on a WebShop server: typed steps, the MCP tools, the episode's state.

    ``reset(split=..., goal_index=..., seed=...)``, ``step(WebShopAction(action="search[...]"))``,
    ``state()``, and ``list_tools()`` / ``call_tool("search", query=...)`` on the same episode;
    see ``webshop_gym.integrations.openenv.WebShopClient`` for errors and dropped connections.
    """


# AutoEnv names the client of the env "webshop" by capitalising it: WebshopEnv.
WebshopEnv = WebShopEnv
