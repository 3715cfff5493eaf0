"""Moved to `webshop_gym.agents.protocol`; this module keeps the old import path working."""

from webshop_gym.agents.protocol import Agent, AgentFactory, BatchActing, Info

__all__ = ["Agent", "AgentFactory", "BatchActing", "Info"]
