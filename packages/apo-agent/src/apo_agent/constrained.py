"""Moved to `apo_agent.model.constrained`; this module keeps the old import path."""

from __future__ import annotations

from apo_agent.model.constrained import (
    ActionConstraint,
    ActionVocabulary,
    Allowed,
    answer_budget,
    stop_token_ids,
)

__all__ = ["ActionConstraint", "ActionVocabulary", "Allowed", "answer_budget", "stop_token_ids"]
