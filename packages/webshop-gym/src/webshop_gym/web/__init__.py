"""WebShop over HTTP: the web shop and JSON API (the server), and the Gymnasium env that calls it.

The client side needs nothing beyond the core package, and imports no Flask:

- `client`: `RemoteWebShopEnv`, registered as ``WebShop-Remote-v0``, an env that lives on a
  `webshop-gym serve` server;
- `codec`: goals and page states as JSON (also what episode records hold);

The server needs the ``web`` extra (``pip install 'webshop-gym[web]'``: Flask and waitress):

- `app` (`create_app`: the Flask app; the pages people shop in), `api` (the JSON API agents
  step through), `server` (runs the app under waitress: ``webshop-gym serve``);
- beside them, Flask-free: `config` (`ServerConfig`), `sessions` (visitor sessions and API
  envs, their limits), `visits` (each page of a visit at its own address), `pages` (what a
  page shows people), `snapshots` (an env's episode as JSON, for the API and Back),
  `context` (the server object a request reaches).

Importing this package imports neither side: ``create_app`` imports the server (and Flask)
when first asked for, ``ServerConfig`` its module, so ``import webshop_gym.web.client`` works without
the extra.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from webshop_gym.web.app import create_app
    from webshop_gym.web.config import ServerConfig

__all__ = ["ServerConfig", "create_app"]


def __getattr__(name: str) -> Any:
    # PEP 562: the server is imported on first use, so the client never pulls in Flask.
    if name == "ServerConfig":
        from webshop_gym.web.config import ServerConfig

        return ServerConfig
    if name == "create_app":
        try:
            import flask  # noqa: F401
        except ImportError as error:
            message = "the web shop needs Flask and waitress: pip install 'webshop-gym[web]'"
            raise ImportError(message) from error
        from webshop_gym.web.app import create_app

        return create_app
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
