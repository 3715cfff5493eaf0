"""The WebShop server: ``WebShopEnvironment`` and the app (``server.app:app``)."""

from .webshop_environment import WebShopEnvironment

__all__ = ["WebShopEnvironment"]
