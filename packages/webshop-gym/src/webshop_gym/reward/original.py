"""The WebShop reward (Yao et al. 2022) as plain typed functions, plus the binary variant.

The original (``web_agent_site/engine/goal.py``, ``get_reward``) scores a purchase as

    R = r_type * (N_att + N_opt + [price <= price_upper]) / (|attributes| + |options| + 1)

where

- ``N_att`` counts goal attributes that fuzzy-match a product attribute (token-set
  ratio > 85) or, failing that, occur in the lower-cased title, bullet points or
  description;
- ``N_opt`` counts goal options that fuzzy-match a purchased option value after colour
  normalisation (`webshop_gym.reward.colors.normalize_color`);
- ``r_type`` is 1, 0.5, 0.1 or 0 from the query match, >= 2 shared category levels and
  the overlap of the nouns of the two product names.

Every rule, threshold and quirk here is the original's; where the original would crash
(a goal without attributes, a price limit <= 0) this module documents what it does
instead.

Fuzzy matching. The original called ``thefuzz.fuzz.token_set_ratio`` from thefuzz 0.19.0,
which first processes each argument: ``str()`` of it (so a tuple is compared as its
repr), characters U+0080..U+00FF deleted, every non-word character (``\\W``; the
underscore counts as a word character) replaced by a space, lower-cased, stripped. We do
the same processing and let rapidfuzz compute the ratio (identical to thefuzz >= 0.20,
which is rapidfuzz inside, and to 0.19 with python-Levenshtein). thefuzz >= 0.20 keeps
underscores out of tokens and lower-cases a handful of exotic letters differently; we
follow 0.19 there. thefuzz 0.19 *without* python-Levenshtein (the original's
requirements did not ask for it) fell back to ``difflib``, whose ratio can be a few
points lower than the Levenshtein one when both token sets have words the other lacks;
over 306k attribute and option pairs of the 1k catalogue that never moved a score across
the threshold.

Nouns (for r_type) come from `webshop_gym.reward.nouns`: spaCy's, as the original, when
spaCy and a model are installed, else a documented approximation.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, fields

from rapidfuzz.fuzz import token_set_ratio as _rapidfuzz_token_set_ratio
from rapidfuzz.process import extractOne as _extract_one

from webshop_gym.data.model import Goal, Product
from webshop_gym.lru import LRUCache
from webshop_gym.reward.colors import normalize_color
from webshop_gym.reward.nouns import NounExtractor, get_noun_extractor

FUZZY_THRESHOLD = 85
"""A pair matches when its (integer) token-set ratio is strictly above this."""

SUCCESS_TOLERANCE = 1e-9
"""`binary_reward` counts a total within this distance of 1 as a success."""

# ---------------------------------------------------------------------------------------
# Fuzzy matching (thefuzz 0.19 semantics on rapidfuzz speed)
# ---------------------------------------------------------------------------------------

_LATIN1_HIGH = dict.fromkeys(range(128, 256))  # thefuzz's "ascii dammit" deletes these
_NON_WORD = re.compile(r"(?ui)\W")


@functools.lru_cache(maxsize=1 << 16)
def _fuzzy_process(text: str) -> str:
    # The order (delete, replace, lower, strip) is thefuzz 0.19's; lower() runs last.
    return _NON_WORD.sub(" ", text.translate(_LATIN1_HIGH)).lower().strip()


def _fuzzy_text(value: str | tuple[str, ...]) -> str:
    # thefuzz turned any non-string into str(value): a (name, value) pair is compared as
    # "('color', 'navy blue')", whose tokens are the name's and the value's words.
    return _fuzzy_process(value if isinstance(value, str) else str(value))


def token_set_score(a: str | tuple[str, ...], b: str | tuple[str, ...]) -> int:
    """Token-set ratio of two values as the original's ``fuzz.token_set_ratio`` gives it.

    Args:
        a: A string, or a tuple (compared as its ``str()``, as thefuzz did).
        b: Same as `a`.

    Returns:
        An integer in 0..100.

    Examples:
        >>> token_set_score("Gluten-Free", "gluten free")
        100
        >>> token_set_score("x-large", ("size", "x-large"))
        100
    """
    return round(_rapidfuzz_token_set_ratio(_fuzzy_text(a), _fuzzy_text(b)))


def fuzzy_match(a: str | tuple[str, ...], b: str | tuple[str, ...]) -> bool:
    """Whether the original counts the pair as a match (token-set ratio > 85)."""
    return token_set_score(a, b) > FUZZY_THRESHOLD


# round(score) > 85 exactly when score >= 85.5 (round(85.5) is 86), so a cutoff of 85.5
# lets rapidfuzz scan all candidates in one C call. The ratio is symmetric, so the
# argument order (the original put the product's side first) does not matter.
_MATCH_CUTOFF = FUZZY_THRESHOLD + 0.5


def _any_match(processed: list[str], wanted: str) -> bool:
    # The hot loop of the reward, on already processed strings.
    found = _extract_one(wanted, processed, scorer=_rapidfuzz_token_set_ratio, score_cutoff=_MATCH_CUTOFF)
    return found is not None


# The colour table is scanned entry by entry; option values repeat, so remember them.
_cached_normalize_color = functools.lru_cache(maxsize=1 << 16)(normalize_color)


# ---------------------------------------------------------------------------------------
# The reward components
# ---------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class TypeMatch:
    """The parts of r_type.

    Attributes:
        r_type: 1.0, 0.5, 0.1 or 0.0.
        query_match: The two products came from the same scraping query.
        category_match: Their category paths share at least two levels.
        title_score: Share of the goal name's nouns found among the purchased name's.
    """

    r_type: float
    query_match: bool
    category_match: bool
    title_score: float


@functools.lru_cache(maxsize=1 << 14)
def _category_levels(product_category: str) -> frozenset[str]:
    return frozenset(level.strip() for level in product_category.split("›"))


def type_reward(product: Product, goal: Goal, nouns: NounExtractor | None = None) -> TypeMatch:
    """Whether the purchased product is the kind of product the goal asks for.

    Args:
        product: The purchased product.
        goal: The goal.
        nouns: The noun extractor; default `get_noun_extractor()`.

    Returns:
        r_type is 0 when no goal noun is in the purchased name, 0.1 when under a tenth
        are, else 0.5 unless the query matches, two category levels match or more than a
        fifth of the goal nouns are present, in which case 1. A goal name without nouns
        scores a title_score of 0.2, as in the original.
    """
    extractor = nouns if nouns is not None else get_noun_extractor()
    query_match = product.query == goal.query
    shared_levels = _category_levels(product.product_category) & _category_levels(goal.product_category)
    category_match = len(shared_levels) >= 2

    desired = extractor.nouns(goal.name)
    if desired:
        purchased = extractor.nouns(product.name)
        title_score = len(set(purchased) & set(desired)) / len(desired)
    else:
        title_score = 0.2

    r_type = 1.0
    if not (query_match or category_match or title_score > 0.2):
        r_type = 0.5
    if title_score < 0.1:
        r_type = 0.1
    if title_score == 0.0:
        r_type = 0.0
    return TypeMatch(r_type, query_match, category_match, title_score)


@dataclass(frozen=True, slots=True)
class _LoweredText:
    product: Product  # the object the texts were made from (asins can be reused in tests)
    title: str
    bullet_points: str
    description: str


_TEXT_CACHE: LRUCache[str, _LoweredText] = LRUCache(maxsize=4096)


def _lowered_text(product: Product) -> _LoweredText:
    # Purchases repeat the same few products (the expert buys the goal's), so keep the
    # lower-cased texts of recently bought products instead of lower-casing every time.
    entry = _TEXT_CACHE.get(product.asin)
    if entry is not None and entry.product is product:
        return entry
    entry = _LoweredText(
        product=product,
        title=product.title.lower(),
        bullet_points=" ".join(product.bullet_points).lower(),
        description=product.description.lower(),
    )
    _TEXT_CACHE.put(product.asin, entry)
    return entry


def attribute_matches(product: Product, goal_attributes: Iterable[str]) -> int:
    """How many goal attributes the product has (the original's N_att).

    A goal attribute counts when its token-set ratio with some product attribute is
    above 85, or else when it is a substring of the lower-cased title, of the bullet
    points joined by spaces, or of the description. The goal attribute itself is not
    lower-cased (as in the original; goal attributes are lower case in the data).
    """
    matches = 0
    text: _LoweredText | None = None
    attributes = [_fuzzy_process(attribute) for attribute in product.attributes]
    for goal_attribute in goal_attributes:
        if _any_match(attributes, _fuzzy_process(goal_attribute)):
            matches += 1
            continue
        if text is None:
            text = _lowered_text(product)
        if (
            goal_attribute in text.title
            or goal_attribute in text.bullet_points
            or goal_attribute in text.description
        ):
            matches += 1
    return matches


def option_matches(goal_options: Iterable[str | tuple[str, str]], purchased_values: Iterable[str]) -> int:
    """How many goal options the purchase satisfies (the original's N_opt).

    Both sides go through `normalize_color`; a goal option counts when some purchased
    value has a token-set ratio above 85 with it. A purchased value may satisfy several
    goal options.

    Synthetic goals keep ``(name, value)`` pairs, as the original passed the items of its
    goal-options dict. The pair reaches the fuzzy matcher as ``str(pair)``, so its tokens
    are the name's plus the value's, and a purchased value whose tokens are all among
    them scores 100: clicking the right value matches. But colour normalisation treats a
    pair by membership: only a pair with an element equal to a colour is normalised,
    while the clicked value is normalised by substring. So ``("color", "r.brown2060")``
    stays a pair while a click on ``"r.brown2060"`` becomes ``"brown"``, and the right
    click does not match; the original has the same flaw and we keep it.

    Examples:
        >>> option_matches(["dark blue", "large"], ["navy blue", "x-large"])  # blue ~ blue
        2
        >>> option_matches(["navy"], ["dark blue"])  # navy vs blue
        0
        >>> option_matches([("color", "navy blue"), ("size", "x-large")], ["navy blue", "x-large"])
        2
        >>> option_matches([("color", "r.brown2060")], ["r.brown2060"])
        0
    """
    purchased = [_fuzzy_text(_cached_normalize_color(value)) for value in purchased_values]
    matches = 0
    for goal_option in goal_options:
        if _any_match(purchased, _fuzzy_text(_cached_normalize_color(goal_option))):
            matches += 1
    return matches


def price_reward(price: float, price_upper: float) -> bool | None:
    """Whether the price is within the limit; None when there is no limit (``<= 0``)."""
    return price <= price_upper if price_upper > 0 else None


# ---------------------------------------------------------------------------------------
# The reward
# ---------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class RewardBreakdown:
    """The reward of one purchase and its parts (the original's verbose ``info``).

    Attributes:
        total: The reward R in [0, 1].
        r_type: Product-type factor, 1.0 / 0.5 / 0.1 / 0.0.
        r_att: Share of goal attributes matched (1.0 for a goal without attributes).
        r_option: Share of goal options matched; None when the goal has no options.
        r_price: Price within the limit; None when the goal has no limit.
        query_match: Same scraping query as the goal's product.
        category_match: At least two category levels shared with the goal's product.
        title_score: Share of the goal name's nouns in the purchased product's name.
        num_attr_matches: N_att.
        num_option_matches: N_opt.
        noun_extractor: ``"spacy:<model>"`` or ``"approx"``.
    """

    total: float
    r_type: float
    r_att: float
    r_option: float | None
    r_price: bool | None
    query_match: bool
    category_match: bool
    title_score: float
    num_attr_matches: int
    num_option_matches: int
    noun_extractor: str

    def as_dict(self) -> dict[str, float | bool | int | str | None]:
        """The fields as a plain dict (for ``info``)."""
        return {field.name: getattr(self, field.name) for field in fields(self)}


def original_reward(
    product: Product,
    goal: Goal,
    price: float,
    options: Mapping[str, str],
    *,
    nouns: NounExtractor | None = None,
) -> RewardBreakdown:
    """The original WebShop reward of buying `product` at `price` with `options`.

    Args:
        product: The purchased product.
        goal: The goal of the episode.
        price: The price paid.
        options: The selected options, name -> value (only the values are compared).
        nouns: The noun extractor for r_type; default `get_noun_extractor()`.

    Returns:
        The total and its parts. Where the original would fail we extend it: without a
        price limit (``price_upper <= 0``) the price term leaves both the numerator and
        the denominator; a goal without attributes has r_att 1.0.
    """
    extractor = nouns if nouns is not None else get_noun_extractor()
    type_match = type_reward(product, goal, extractor)
    r_price = price_reward(price, goal.price_upper)
    num_attr_matches = attribute_matches(product, goal.attributes)
    num_option_matches = option_matches(goal.goal_options, options.values())

    num_attributes = len(goal.attributes)
    num_options = len(goal.goal_options)
    r_att = num_attr_matches / num_attributes if num_attributes else 1.0
    r_option = num_option_matches / num_options if num_options else None

    checks = num_attributes + num_options + (0 if r_price is None else 1)
    satisfied = num_attr_matches + num_option_matches + (1 if r_price else 0)
    # Same operations in the same order as the original, so totals are bit-identical.
    total = satisfied / checks if checks else 1.0
    total *= type_match.r_type

    return RewardBreakdown(
        total=total,
        r_type=type_match.r_type,
        r_att=r_att,
        r_option=r_option,
        r_price=r_price,
        query_match=type_match.query_match,
        category_match=type_match.category_match,
        title_score=type_match.title_score,
        num_attr_matches=num_attr_matches,
        num_option_matches=num_option_matches,
        noun_extractor=extractor.name,
    )


def binary_reward(breakdown: RewardBreakdown) -> float:
    """1.0 when the purchase is a full success (total == 1 within 1e-9), else 0.0."""
    return 1.0 if abs(breakdown.total - 1.0) <= SUCCESS_TOLERANCE else 0.0
