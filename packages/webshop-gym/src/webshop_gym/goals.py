"""Goals: human and synthetic shopping instructions, their price limits and splits."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Goal:
    """One shopping instruction and what the reward checks the purchase against.

    ``goal_options`` holds option values (``"red"``) for human goals and
    ``(name, value)`` pairs for synthetic goals, exactly as the original keeps them
    (a list versus the items of a dict); the reward treats each form as the original does.
    """

    asin: str  # the product the instruction was written for
    instruction_text: str
    attributes: tuple[str, ...]
    goal_options: tuple[str, ...] | tuple[tuple[str, str], ...]
    price_upper: float
    query: str
    category: str
    product_category: str
    name: str
    weight: float = 1.0
