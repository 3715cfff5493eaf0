"""Moved to `apo_agent.model.tiny`; this module keeps the old import path."""

from __future__ import annotations

from apo_agent.model.tiny import (
    CHAT_TEMPLATE,
    SPECIAL_TOKENS,
    build_tiny_model,
    product_ids,
    shop_texts,
    train_tokenizer,
)

__all__ = [
    "CHAT_TEMPLATE",
    "SPECIAL_TOKENS",
    "build_tiny_model",
    "product_ids",
    "shop_texts",
    "train_tokenizer",
]
