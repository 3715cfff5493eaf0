"""A uniformly random agent: the floor every other agent must clear."""

from __future__ import annotations

import random

from webshop_gym.actions import SEARCH_PLACEHOLDER, search_action
from webshop_gym.agents.pages import FILLER_WORDS
from webshop_gym.agents.protocol import AgentFactory, Info

QUERY_WORDS = (2, 5)  # how many words a random query has (inclusive range)


class RandomAgent:
    """Picks one of the available actions uniformly at random.

    The search bar is filled with a few words drawn from the page (the instruction, on
    the search page) so that a search leads somewhere; the placeholder itself would search
    for the literal text ``<query>``.

    Example:
        >>> agent = RandomAgent()
        >>> agent.reset(seed=0)
        >>> info = {"available_actions": ["search[<query>]"], "instruction": "red running shoes"}
        >>> page = "WebShop [SEP] Instruction: [SEP] red running shoes [SEP] Search"
        >>> agent.act(page, info).startswith("search[")
        True
    """

    def __init__(self) -> None:
        self._random = random.Random()

    def reset(self, seed: int | None = None) -> None:
        self._random = random.Random(seed)

    def act(self, observation: str, info: Info) -> str:
        action = self._random.choice(list(info["available_actions"]))
        if action != SEARCH_PLACEHOLDER:
            return action
        words = [w for w in observation.lower().replace("[sep]", " ").split() if w.isalnum()]
        words = [w for w in words if w not in FILLER_WORDS and w not in ("webshop", "instruction", "search")]
        if not words:
            words = ["product"]
        low, high = QUERY_WORDS
        count = min(len(words), self._random.randint(low, high))
        return search_action(" ".join(self._random.sample(words, count)))


def factory() -> AgentFactory:
    """Random agents (no options)."""
    return RandomAgent
