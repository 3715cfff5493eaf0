"""The WebShop reward: the original's, its binary and shaped variants, and what they are built of.

- `original`: the original reward R of a purchase as plain typed functions (`original_reward`,
  `binary_reward` and the parts: `type_reward`, `attribute_matches`, `option_matches`,
  `price_reward`, the fuzzy matching);
- `colors`: the original's colour normalisation of option values;
- `nouns`: the nouns of product names for r_type (spaCy when a model is installed, else
  `nouns.NounTagger`, distilled from spaCy; its data is ``noun_tagger.json.gz`` beside it);
- `shaping`: the potential of potential-based shaping (``reward="shaped"``).

The names of `original` and `nouns` import from here, as they did when the reward was one module.

Example:
    >>> from webshop_gym.reward import fuzzy_match
    >>> fuzzy_match("Gluten-Free", "gluten free")
    True
"""

from __future__ import annotations

from webshop_gym.reward.nouns import (
    APPROX_NOUN_EXTRACTOR,
    NOUNS_ENV,
    SPACY_MODELS,
    NounExtractor,
    NounExtractorKind,
    approx_nouns,
    get_noun_extractor,
    load_spacy_nouns,
    spacy_noun_extractor,
)
from webshop_gym.reward.original import (
    FUZZY_THRESHOLD,
    SUCCESS_TOLERANCE,
    RewardBreakdown,
    TypeMatch,
    attribute_matches,
    binary_reward,
    fuzzy_match,
    option_matches,
    original_reward,
    price_reward,
    token_set_score,
    type_reward,
)

__all__ = [
    "APPROX_NOUN_EXTRACTOR",
    "FUZZY_THRESHOLD",
    "NOUNS_ENV",
    "SPACY_MODELS",
    "SUCCESS_TOLERANCE",
    "NounExtractor",
    "NounExtractorKind",
    "RewardBreakdown",
    "TypeMatch",
    "approx_nouns",
    "attribute_matches",
    "binary_reward",
    "fuzzy_match",
    "get_noun_extractor",
    "load_spacy_nouns",
    "option_matches",
    "original_reward",
    "price_reward",
    "spacy_noun_extractor",
    "token_set_score",
    "type_reward",
]
