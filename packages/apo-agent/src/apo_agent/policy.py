"""Moved to `apo_agent.model.policy`; this module keeps the old import path."""

from __future__ import annotations

from apo_agent.model.policy import (
    LOGIT_CHUNK,
    MAX_BATCH_TOKENS,
    PEFT_MISSING,
    LMPolicy,
    add_lora,
    resolve_device,
)

__all__ = ["LOGIT_CHUNK", "MAX_BATCH_TOKENS", "PEFT_MISSING", "LMPolicy", "add_lora", "resolve_device"]
