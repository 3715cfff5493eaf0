"""A*PO (and GRPO) training of LLM shopping agents on WebShop through the Gymnasium step API."""

from __future__ import annotations

__version__ = "0.1.0"
