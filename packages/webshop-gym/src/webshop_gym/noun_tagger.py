"""Moved to `webshop_gym.reward.nouns`; this module keeps the old import path working."""

from webshop_gym.reward.nouns import DATA_FILE, NOUN_TAGS, NounTagger, features

__all__ = ["DATA_FILE", "NOUN_TAGS", "NounTagger", "features"]
