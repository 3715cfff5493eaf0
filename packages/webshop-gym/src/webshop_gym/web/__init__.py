"""The web shop: WebShop as a site people shop in and a JSON API agents step through.

`create_app` builds the Flask app (`webshop_gym.web.app`: the pages; `webshop_gym.web.api`:
the JSON API); `webshop_gym.web.server` runs it under waitress (``webshop-gym serve``).
Needs the ``web`` extra: ``pip install 'webshop-gym[web]'``.
"""

from __future__ import annotations

try:
    import flask  # noqa: F401
except ImportError as error:  # pragma: no cover - exercised only without the extra
    raise ImportError("the web shop needs Flask and waitress: pip install 'webshop-gym[web]'") from error

from webshop_gym.web.app import create_app
from webshop_gym.web.config import ServerConfig

__all__ = ["ServerConfig", "create_app"]
