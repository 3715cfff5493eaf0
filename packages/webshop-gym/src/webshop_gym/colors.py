"""Moved to `webshop_gym.reward.colors`; this module keeps the old import path working."""

from webshop_gym.reward.colors import COLOR_SET, normalize_color

__all__ = ["COLOR_SET", "normalize_color"]
