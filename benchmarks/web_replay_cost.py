"""Moved to `benchmarks.env.web_replay_cost`; kept only for webshop-gym's tests, which import this path."""

from benchmarks.env.web_replay_cost import main

__all__ = ["main"]
