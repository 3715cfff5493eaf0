"""One session of WebShop on openenv-core's server (typed steps and the MCP tools ``search``, ``click``).

Defined in `webshop_gym.integrations.openenv`, with the settings every session gets
(`SessionConfig`) and the app factory that bounds sessions (`create_webshop_app`).
"""

from webshop_gym.integrations.openenv import SessionConfig, WebShopEnvironment, create_webshop_app

__all__ = ["SessionConfig", "WebShopEnvironment", "create_webshop_app"]
