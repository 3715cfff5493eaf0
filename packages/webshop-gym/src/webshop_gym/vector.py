"""Moved to `webshop_gym.agents.scheduler`; this module keeps the old import path working."""

from webshop_gym.agents.scheduler import EpisodeStart, SlotEnv, Step, Turn, play_episodes, slot_vector_env

__all__ = ["EpisodeStart", "SlotEnv", "Step", "Turn", "play_episodes", "slot_vector_env"]
