"""Moved to `webshop_gym.web.codec`; this module keeps the old import path working."""

from webshop_gym.web.codec import goal_from_json, goal_to_json, state_from_json, state_to_json

__all__ = ["goal_from_json", "goal_to_json", "state_from_json", "state_to_json"]
