"""Goals: human and synthetic shopping instructions, their price limits and splits.

Goals are built as the original WebShop builds them and put in the order its
environment uses (built in catalogue order, then shuffled by ``random.seed(233)``), so
goal ``i`` here is goal ``i`` there. The one change: the original draws product prices
and price limits from Python's global random state, so they differ from run to run.
Here every draw comes from a SHA-256 hash of what it is for (the product's asin, the
goal's instruction), so a goal reads the same in every process, on every machine.
"""

from __future__ import annotations

import bisect
import hashlib
import itertools
import random
import weakref
from collections import Counter
from dataclasses import dataclass
from typing import Literal

from webshop_gym.catalog import Catalog, Product

__all__ = [
    "NO_PRICE_LIMIT",
    "PRICE_LIMITS",
    "Goal",
    "build_goals",
    "goal_split",
    "product_prices",
]

# The price limits an instruction may name: $10, $20, ..., $990.
PRICE_LIMITS: tuple[float, ...] = tuple(10.0 * i for i in range(1, 100))
# The price limit of a goal whose instruction names none (the product costs $980+).
NO_PRICE_LIMIT = 1000000.0
# What the original env seeds its goal shuffle with.
SHUFFLE_SEED = 233
# The original prices a product without any price at $100.
DEFAULT_PRICE = 100.0

GoalSource = Literal["human", "synthetic"]
Split = Literal["train", "dev", "test", "all"]

# Split boundaries (start of dev, start of train): the paper's for the real data; the
# bundled catalogue has fewer goals, so smaller ones.
_SPLIT_BOUNDS = {"real": (500, 1500), "mini": (100, 200)}


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


def _hash_bytes(*identity: str) -> bytes:
    # A separator that never occurs in product data keeps ("ab", "c") != ("a", "bc").
    return hashlib.sha256("\x1f".join(("webshop-gym", *identity)).encode()).digest()


def _unit_interval(digest: bytes) -> float:
    """A float in [0, 1) from 53 bits of a hash, as `random.random` makes one."""
    return (int.from_bytes(digest[:8], "big") >> 11) / 9007199254740992.0


_PRICE_CACHE: weakref.WeakKeyDictionary[Catalog, dict[str, float]] = weakref.WeakKeyDictionary()
_GOAL_CACHE: weakref.WeakKeyDictionary[Catalog, dict[str, tuple[Goal, ...]]] = weakref.WeakKeyDictionary()


def product_prices(catalog: Catalog) -> dict[str, float]:
    """The price each product sells at, seeded per asin.

    A product with one price sells at it; one with a price range at a price drawn
    uniformly from the range (the original draws it from the global random state; here
    the draw is a hash of the asin); one without a price at $100.

    Args:
        catalog: The catalogue.

    Returns:
        A new dict asin -> price, in catalogue order.
    """
    prices = _PRICE_CACHE.get(catalog)
    if prices is None:
        prices = {}
        for product in catalog.products:
            pricing = product.pricing
            if not pricing:
                price = DEFAULT_PRICE
            elif len(pricing) == 1:
                price = pricing[0]
            else:
                low, high = pricing[0], pricing[1]
                price = low + (high - low) * _unit_interval(_hash_bytes("price", product.asin))
            prices[product.asin] = price
        _PRICE_CACHE[catalog] = prices
    return dict(prices)


def _price_limit(price: float, *identity: str) -> tuple[float, str]:
    """The goal's price limit and the text that states it, as the original picks them.

    The candidates are the (up to) four limits in `PRICE_LIMITS` above the price; the
    limit is the larger of two distinct candidates drawn at random (here: from a hash of
    ``identity``). With fewer than two candidates the goal has no limit and no text.
    """
    first = bisect.bisect_right(PRICE_LIMITS, price)
    candidates = PRICE_LIMITS[first : first + 4]
    n = len(candidates)
    if n < 2:
        return NO_PRICE_LIMIT, ""
    digest = _hash_bytes("price-limit", *identity)
    i = int.from_bytes(digest[:8], "big") % n
    j = (i + 1 + int.from_bytes(digest[8:16], "big") % (n - 1)) % n
    upper = max(candidates[i], candidates[j])
    return upper, f", and price lower than {upper:.2f} dollars"


def _human_goals(catalog: Catalog, prices: dict[str, float]) -> list[Goal]:
    goals = []
    for product in catalog.products:
        for j, entry in enumerate(catalog.human_instructions.get(product.asin, ())):
            # The original drops instructions whose annotators marked no attribute.
            if not entry.instruction_attributes:
                continue
            price_upper, price_text = _price_limit(
                prices[product.asin], "human", product.asin, str(j), entry.instruction
            )
            goals.append(
                Goal(
                    asin=product.asin,
                    instruction_text=entry.instruction.strip(".") + price_text,
                    attributes=entry.instruction_attributes,
                    goal_options=entry.instruction_options,
                    price_upper=price_upper,
                    query=product.query,
                    category=product.category,
                    product_category=product.product_category,
                    name=product.name,
                )
            )
    return goals


def _synthetic_goals(catalog: Catalog, prices: dict[str, float]) -> list[Goal]:
    # First pass: the option combinations of every product with a templated instruction.
    drafts: list[tuple[Product, tuple[str, ...], str, float, list[tuple[str, ...]]]] = []
    attribute_counts: Counter[str] = Counter()
    for product in catalog.products:
        synthetic = catalog.synthetic_instructions.get(product.asin)
        if synthetic is None or not synthetic.instruction_attributes:
            continue
        attributes = synthetic.instruction_attributes
        # One price limit per product, shared by all its option combinations.
        price_upper, price_text = _price_limit(
            prices[product.asin], "synthetic", product.asin, synthetic.instruction
        )
        names = tuple(sorted(product.options))
        combinations = list(itertools.product(*(product.options[n] for n in names)))
        drafts.append((product, names, price_text, price_upper, combinations))
        # The original counts each attribute once per goal, i.e. per combination.
        for attribute in attributes:
            attribute_counts[attribute] += len(combinations)
    # Second pass: the goals; rarer attributes weigh more in the original's goal sampling.
    goals = []
    for product, names, price_text, price_upper, combinations in drafts:
        synthetic = catalog.synthetic_instructions[product.asin]
        attributes = synthetic.instruction_attributes
        weight = sum(1.0 / attribute_counts[a] for a in attributes) / len(attributes)
        for combination in combinations:
            goal_options = tuple(zip(names, combination, strict=True))
            option_text = ", and ".join([f"{k}: {v}" for k, v in goal_options])
            if option_text:
                option_text = " with " + option_text
            goals.append(
                Goal(
                    asin=product.asin,
                    instruction_text=f"{synthetic.instruction}{option_text}{price_text}",
                    attributes=attributes,
                    goal_options=goal_options,
                    price_upper=price_upper,
                    query=product.query,
                    category=product.category,
                    product_category=product.product_category,
                    name=product.title,
                    weight=weight,
                )
            )
    return goals


def build_goals(catalog: Catalog, source: GoalSource) -> tuple[Goal, ...]:
    """All goals of a catalogue, in the original environment's order.

    Human goals: one per human instruction that names at least one attribute, its text
    followed by ``", and price lower than X.XX dollars"`` when the goal has a price
    limit. Synthetic goals: for every product with a templated instruction, one per
    combination of its option values (names sorted), the text being the instruction,
    ``" with name: value, and ..."`` and the price text. Either list is then shuffled as
    the original shuffles it (``random.seed(233)``), and goal ``i`` is the same in every
    process. Results are cached per catalogue.

    Args:
        catalog: The catalogue.
        source: ``"human"`` or ``"synthetic"``.

    Returns:
        The goals.

    Raises:
        ValueError: ``source`` is neither ``"human"`` nor ``"synthetic"``.
    """
    if source not in ("human", "synthetic"):
        raise ValueError(f"goal source must be 'human' or 'synthetic', got {source!r}")
    cached = _GOAL_CACHE.setdefault(catalog, {})
    goals = cached.get(source)
    if goals is None:
        prices = product_prices(catalog)
        built = _human_goals(catalog, prices) if source == "human" else _synthetic_goals(catalog, prices)
        # The original env seeds the global random state with 233 right before it
        # shuffles; a private generator with that seed gives the same permutation.
        random.Random(SHUFFLE_SEED).shuffle(built)
        goals = cached[source] = tuple(built)
    return goals


def goal_split(catalog_name: str, n_goals: int, split: Split) -> range:
    """The goal indices of a split.

    Real data follows the paper: test is goals 0-499, dev 500-1499, train 1500 onwards.
    The bundled ``"mini"`` catalogue: test 0-99, dev 100-199, train 200 onwards. Ranges
    are clipped to ``n_goals``.

    Args:
        catalog_name: The catalogue's name (`Catalog.name`).
        n_goals: How many goals there are.
        split: ``"train"``, ``"dev"``, ``"test"`` or ``"all"``.

    Returns:
        The indices, as a range.

    Raises:
        ValueError: Unknown split or negative ``n_goals``.

    Example:
        >>> goal_split("webshop-1k", 6910, "dev")
        range(500, 1500)
        >>> goal_split("mini", 150, "train")
        range(150, 150)
    """
    if n_goals < 0:
        raise ValueError(f"n_goals must be >= 0, got {n_goals}")
    dev_start, train_start = _SPLIT_BOUNDS["mini" if catalog_name == "mini" else "real"]
    dev_start, train_start = min(dev_start, n_goals), min(train_start, n_goals)
    bounds = {
        "test": (0, dev_start),
        "dev": (dev_start, train_start),
        "train": (train_start, n_goals),
        "all": (0, n_goals),
    }
    if split not in bounds:
        raise ValueError(f"split must be one of train, dev, test, all; got {split!r}")
    return range(*bounds[split])
