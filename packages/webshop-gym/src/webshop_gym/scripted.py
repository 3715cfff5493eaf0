"""Moved to `webshop_gym.agents.scripted`; this module keeps the old import path working."""

from webshop_gym.agents.scripted import RESULT_PAGES_TO_SCAN, ExpertPolicy, Policy, RulePolicy, run_episode

__all__ = ["RESULT_PAGES_TO_SCAN", "ExpertPolicy", "Policy", "RulePolicy", "run_episode"]
