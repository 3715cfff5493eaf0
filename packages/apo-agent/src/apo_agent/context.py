"""Moved to `apo_agent.rollout.tokens`; this module keeps the old import path."""

from __future__ import annotations

from apo_agent.model.sequences import TokenSequence
from apo_agent.rollout.tokens import EpisodeContext, PromptEncoder

__all__ = ["EpisodeContext", "PromptEncoder", "TokenSequence"]
