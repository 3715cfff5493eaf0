"""The typed action, observation and state of WebShop (defined in `webshop_gym.integrations.openenv`)."""

from webshop_gym.integrations.openenv import WebShopAction, WebShopObservation, WebShopState

__all__ = ["WebShopAction", "WebShopObservation", "WebShopState"]
