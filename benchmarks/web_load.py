"""Moved to `benchmarks.env.web_load`; kept only for webshop-gym's tests, which import this path."""

from benchmarks.env.web_load import main

__all__ = ["main"]
