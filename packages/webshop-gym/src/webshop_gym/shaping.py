"""Moved to `webshop_gym.reward.shaping`; this module keeps the old import path working."""

from webshop_gym.reward.shaping import POTENTIAL_SCALE, RESULTS_PER_PAGE, ProgressPotential

__all__ = ["POTENTIAL_SCALE", "RESULTS_PER_PAGE", "ProgressPotential"]
