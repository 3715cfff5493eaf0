"""Moved to `webshop_gym.web.client`; this module keeps the old import path working."""

from webshop_gym.web.client import (
    API_PREFIX,
    DEFAULT_SERVER_URL,
    MAX_RESPONSE_BYTES,
    SERVER_URL_ENV,
    RemoteEnvError,
    RemoteEnvWarning,
    RemoteWebShopEnv,
)

__all__ = [
    "API_PREFIX",
    "DEFAULT_SERVER_URL",
    "MAX_RESPONSE_BYTES",
    "SERVER_URL_ENV",
    "RemoteEnvError",
    "RemoteEnvWarning",
    "RemoteWebShopEnv",
]
