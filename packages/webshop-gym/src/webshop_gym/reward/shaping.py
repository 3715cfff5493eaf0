"""The potential behind the shaped reward: how good is the best product in view?

Potential-based shaping (Ng, Harada & Russell 1999) adds ``gamma * Phi(s') - Phi(s)`` to
each step's reward. Whatever ``Phi`` is, it cannot change which policy is optimal, and a
loop that returns to a state returns its potential: nothing to farm. ``Phi`` here is half
the original reward that the best product on screen would earn if bought as it stands.
"""

from __future__ import annotations

from collections.abc import Mapping

from webshop_gym.data.model import BaseCatalog, Goal
from webshop_gym.reward.original import original_reward
from webshop_gym.shop import RESULTS_PER_PAGE, Page, PageState

POTENTIAL_SCALE = 0.5  # below the final reward, so buying stays what pays


class ProgressPotential:
    """``Phi(state)`` for one goal, with the rewards it has computed kept for the episode."""

    def __init__(self, catalog: BaseCatalog, goal: Goal, prices: Mapping[str, float]) -> None:
        self.catalog = catalog
        self.goal = goal
        self.prices = prices
        self._cache: dict[tuple[str, tuple[tuple[str, str], ...]], float] = {}

    def __call__(self, state: PageState) -> float:
        if state.page is Page.RESULTS:
            first = (state.page_number - 1) * RESULTS_PER_PAGE
            shown = state.result_asins[first : first + RESULTS_PER_PAGE]
            return POTENTIAL_SCALE * max((self._value(asin, ()) for asin in shown), default=0.0)
        if state.page in (Page.ITEM, Page.SUB_PAGE) and state.asin is not None:
            return POTENTIAL_SCALE * self._value(state.asin, tuple(sorted(state.selected_options)))
        return 0.0

    def _value(self, asin: str, options: tuple[tuple[str, str], ...]) -> float:
        key = (asin, options)
        if key not in self._cache:
            product = self.catalog[asin]
            self._cache[key] = original_reward(product, self.goal, self.prices[asin], dict(options)).total
        return self._cache[key]
