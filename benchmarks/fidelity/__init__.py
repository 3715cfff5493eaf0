"""Fidelity to the original WebShop: how often our search backends return the original's Lucene
hits, and how often the reward with the noun approximation equals the reward with spaCy's nouns.
"""
