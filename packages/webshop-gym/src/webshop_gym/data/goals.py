"""Goals: human and synthetic shopping instructions, their price limits and splits.

Goals are built as the original WebShop builds them (products in file order, each
product's instructions in order) and numbered as its environment numbers them (the built
list shuffled by ``random.seed(233)``), so goal ``i`` here is goal ``i`` there. The one
change: the original draws product prices and price limits from Python's global random
state, so they differ from run to run. Here every draw comes from a SHA-256 hash of what it
is for (the product's asin, the goal's instruction), so a goal reads the same in every
process, on every machine.

**The paper's numbering of human goals.** The paper's splits (test 0-499, dev 500-1499,
train 1500+) number the 12,087 human goals of the full catalogue in that shuffled order.
The official smaller product files are the leading products of the full file (checked on
the 1k set: its 13 human goals are goals 0-12 of the full build order), so a real-data
catalogue with ``k <= 12,087`` human goals holds goals ``0..k-1`` of the full build order,
and goal ``b`` sits at the place the full shuffle sends it (`paper_positions`). Each
`Goal.position` carries that number; goals are listed by it and splits are cut by it, so
on the 1k set the 13 human goals are paper goals 1195 (dev) and 2543, ..., 10170 (train),
as in the original. The bundled ``"mini"`` catalogue and catalogues with more human goals
than the real data number their goals by their own shuffle.
"""

from __future__ import annotations

import bisect
import functools
import hashlib
import itertools
import random
import weakref
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

from webshop_gym.data.instructions import option_clause, price_clause
from webshop_gym.data.model import BaseCatalog, Goal, HumanInstruction, Product, SyntheticInstruction

__all__ = [
    "NO_PRICE_LIMIT",
    "PAPER_HUMAN_GOALS",
    "PRICE_LIMITS",
    "Goal",
    "build_goals",
    "build_order_positions",
    "goal_positions",
    "goal_split",
    "paper_positions",
    "product_price",
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
# Human goals of the full catalogue: the paper numbers these.
PAPER_HUMAN_GOALS = 12_087

GoalSource = Literal["human", "synthetic"]
Split = Literal["train", "dev", "test", "all"]

# Split boundaries (start of dev, start of train): the paper's for the real data; the
# bundled catalogue has fewer goals, so smaller ones.
_SPLIT_BOUNDS = {"real": (500, 1500), "mini": (100, 200)}


def _hash_bytes(*identity: str) -> bytes:
    # A separator that never occurs in product data keeps ("ab", "c") != ("a", "bc").
    return hashlib.sha256("\x1f".join(("webshop-gym", *identity)).encode()).digest()


def _unit_interval(digest: bytes) -> float:
    """A float in [0, 1) from 53 bits of a hash, as `random.random` makes one."""
    return (int.from_bytes(digest[:8], "big") >> 11) / 9007199254740992.0


_PRICE_CACHE: weakref.WeakKeyDictionary[BaseCatalog, dict[str, float]] = weakref.WeakKeyDictionary()
_GOAL_CACHE: weakref.WeakKeyDictionary[BaseCatalog, dict[str, tuple[Goal, ...]]] = weakref.WeakKeyDictionary()


def product_price(product: Product) -> float:
    """The price a product sells at, seeded by its asin.

    One price: that price; a price range: a price drawn uniformly from the range (the
    original draws it from the global random state; here the draw is a hash of the asin);
    no price: $100.
    """
    pricing = product.pricing
    if not pricing:
        return DEFAULT_PRICE
    if len(pricing) == 1:
        return pricing[0]
    low, high = pricing[0], pricing[1]
    return low + (high - low) * _unit_interval(_hash_bytes("price", product.asin))


def product_prices(catalog: BaseCatalog) -> Mapping[str, float]:
    """The price each product sells at (`product_price`), by asin, in catalogue order.

    Args:
        catalog: The catalogue.

    Returns:
        For an in-memory catalogue, a new dict; for a prepared store, its read-only price
        table (1.18M prices are not copied into a dict).
    """
    stored = catalog.precomputed_prices()
    if stored is not None:
        return stored
    prices = _PRICE_CACHE.get(catalog)
    if prices is None:
        prices = {product.asin: product_price(product) for product in catalog}
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
    return upper, price_clause(upper)


def human_goal(product: Product, j: int, entry: HumanInstruction, price: float, position: int = -1) -> Goal:
    """The goal of a product's ``j``-th human instruction (one that names attributes)."""
    price_upper, price_text = _price_limit(price, "human", product.asin, str(j), entry.instruction)
    return Goal(
        asin=product.asin,
        instruction_text=entry.instruction.strip(".") + price_text,
        attributes=entry.instruction_attributes,
        goal_options=entry.instruction_options,
        price_upper=price_upper,
        query=product.query,
        category=product.category,
        product_category=product.product_category,
        name=product.name,
        position=position,
    )


def human_goal_sources(catalog: BaseCatalog) -> list[tuple[str, int]]:
    """``(asin, j)`` of every human goal in build order.

    The original walks products in file order, each product's instructions in order, and
    drops instructions whose annotators marked no attribute.
    """
    sources = []
    for product in catalog:
        for j, entry in enumerate(catalog.human_instructions.get(product.asin, ())):
            if entry.instruction_attributes:
                sources.append((product.asin, j))
    return sources


@functools.lru_cache(maxsize=4)
def _shuffle_positions(n: int) -> tuple[int, ...]:
    """Where the original's seeded shuffle of an ``n``-goal list puts build-order goal b."""
    order = list(range(n))
    # The original seeds the global random state with 233 right before it shuffles; a
    # private generator with that seed gives the same permutation.
    random.Random(SHUFFLE_SEED).shuffle(order)
    positions = [0] * n
    for position, built in enumerate(order):
        positions[built] = position
    return tuple(positions)


def paper_positions(n_goals: int, catalog_name: str) -> list[int]:
    """The numbers of a catalogue's human goals in build order (see the module docstring).

    Real data with at most `PAPER_HUMAN_GOALS` goals: the places of full-catalogue goals
    ``0..n_goals-1`` in the full shuffle. Otherwise (``"mini"``, larger catalogues): the
    places in the catalogue's own shuffle.

    >>> paper_positions(13, "webshop-1k")[:3]
    [4999, 3621, 4517]
    >>> sorted(paper_positions(5, "mini")) == [0, 1, 2, 3, 4]
    True
    """
    if catalog_name == "mini" or n_goals > PAPER_HUMAN_GOALS:
        return list(_shuffle_positions(n_goals))
    return list(_shuffle_positions(PAPER_HUMAN_GOALS)[:n_goals])


def build_order_positions(source: GoalSource, n_goals: int, catalog_name: str) -> Sequence[int]:
    """The number (`Goal.position`) of each goal in the order the original builds them.

    The original builds its goal list (products in file order, each product's goals in
    order) and then shuffles it; `build_goals` lists goals by number. Build-order goal ``b``
    has number ``build_order_positions(...)[b]``: for synthetic goals its place in the
    ``random.seed(233)`` shuffle, for human goals `paper_positions`. Frameworks that shuffle
    the build order their own way (verl-agent) map their goals to ours through this.

    Args:
        source: ``"human"`` or ``"synthetic"``.
        n_goals: How many goals of that source the catalogue has (``len(build_goals(...))``).
        catalog_name: The catalogue's name (`BaseCatalog.name`).

    >>> build_order_positions("synthetic", 6910, "webshop-1k")[:3]
    (352, 1303, 4154)
    >>> build_order_positions("human", 13, "webshop-1k")[:3]
    [4999, 3621, 4517]
    """
    if source == "human":
        return paper_positions(n_goals, catalog_name)
    if source == "synthetic":
        return _shuffle_positions(n_goals)
    raise ValueError(f"goal source must be 'human' or 'synthetic', got {source!r}")


def _human_goals(catalog: BaseCatalog, prices: Mapping[str, float]) -> list[Goal]:
    sources = human_goal_sources(catalog)
    positions = paper_positions(len(sources), catalog.name)
    goals = []
    for (asin, j), position in zip(sources, positions, strict=True):
        product = catalog.get(asin)
        goals.append(human_goal(product, j, catalog.human_instructions[asin][j], prices[asin], position))
    goals.sort(key=lambda goal: goal.position)
    return goals


@dataclass(frozen=True, slots=True)
class SyntheticPlan:
    """What every synthetic goal of one product shares."""

    option_names: tuple[str, ...]  # sorted, as the original orders them
    n_combinations: int  # one goal per combination of option values
    price_upper: float
    price_text: str


def synthetic_plan(product: Product, synthetic: SyntheticInstruction, price: float) -> SyntheticPlan:
    """The option names, number of goals and price limit of a product's synthetic goals."""
    # One price limit per product, shared by all its option combinations.
    price_upper, price_text = _price_limit(price, "synthetic", product.asin, synthetic.instruction)
    names = tuple(sorted(product.options))
    n = 1
    for name in names:
        n *= len(product.options[name])
    return SyntheticPlan(names, n, price_upper, price_text)


def combination_values(product: Product, plan: SyntheticPlan, index: int) -> tuple[str, ...]:
    """The ``index``-th combination of option values in `itertools.product` order.

    >>> from webshop_gym.data.model import Product
    >>> p = Product("A", "", "", "", (), "", (), {"size": ("s", "m"), "color": ("red", "blue")},
    ...             {}, (), "", "", "", "", "")
    >>> plan = SyntheticPlan(("color", "size"), 4, 0.0, "")
    >>> [combination_values(p, plan, i) for i in range(4)]
    [('red', 's'), ('red', 'm'), ('blue', 's'), ('blue', 'm')]
    """
    values = []
    for name in reversed(plan.option_names):  # the last name varies fastest
        options = product.options[name]
        index, digit = divmod(index, len(options))
        values.append(options[digit])
    return tuple(reversed(values))


def synthetic_goal(
    product: Product,
    synthetic: SyntheticInstruction,
    plan: SyntheticPlan,
    combination: Sequence[str],
    weight: float,
    position: int = -1,
) -> Goal:
    """The synthetic goal of one combination of a product's option values."""
    goal_options = tuple(zip(plan.option_names, combination, strict=True))
    option_text = option_clause(goal_options)
    return Goal(
        asin=product.asin,
        instruction_text=f"{synthetic.instruction}{option_text}{plan.price_text}",
        attributes=synthetic.instruction_attributes,
        goal_options=goal_options,
        price_upper=plan.price_upper,
        query=product.query,
        category=product.category,
        product_category=product.product_category,
        name=product.title,
        weight=weight,
        position=position,
    )


def synthetic_weight(attributes: Sequence[str], attribute_counts: Mapping[str, int]) -> float:
    """The original's sampling weight of a goal: rarer attributes weigh more."""
    return sum(1.0 / attribute_counts[a] for a in attributes) / len(attributes)


def _synthetic_goals(catalog: BaseCatalog, prices: Mapping[str, float]) -> list[Goal]:
    # First pass: the option combinations of every product with a templated instruction.
    drafts: list[tuple[Product, SyntheticInstruction, SyntheticPlan]] = []
    attribute_counts: Counter[str] = Counter()
    for product in catalog:
        synthetic = catalog.synthetic_instructions.get(product.asin)
        if synthetic is None or not synthetic.instruction_attributes:
            continue
        plan = synthetic_plan(product, synthetic, prices[product.asin])
        drafts.append((product, synthetic, plan))
        # The original counts each attribute once per goal, i.e. per combination.
        for attribute in synthetic.instruction_attributes:
            attribute_counts[attribute] += plan.n_combinations
    # Second pass: the goals, each put where the original's shuffle puts it.
    positions = _shuffle_positions(sum(plan.n_combinations for _, _, plan in drafts))
    ordered: list[Goal | None] = [None] * len(positions)
    built = 0
    for product, synthetic, plan in drafts:
        weight = synthetic_weight(synthetic.instruction_attributes, attribute_counts)
        for combination in itertools.product(*(product.options[n] for n in plan.option_names)):
            position = positions[built]
            ordered[position] = synthetic_goal(product, synthetic, plan, combination, weight, position)
            built += 1
    return ordered  # type: ignore[return-value]  # every place is filled


def build_goals(catalog: BaseCatalog, source: GoalSource) -> Sequence[Goal]:
    """All goals of a catalogue, in the original environment's order.

    Human goals: one per human instruction that names at least one attribute, its text
    followed by ``", and price lower than X.XX dollars"`` when the goal has a price
    limit, listed by their number in the original's (for real data: the paper's) list.
    Synthetic goals: for every product with a templated instruction, one per
    combination of its option values (names sorted), the text being the instruction,
    ``" with name: value, and ..."`` and the price text, shuffled as the original
    shuffles them (``random.seed(233)``). Goal ``i`` is the same in every process. Results
    are cached per catalogue; a prepared store hands out its precomputed goals lazily.

    Args:
        catalog: The catalogue.
        source: ``"human"`` or ``"synthetic"``.

    Returns:
        The goals (a tuple for in-memory catalogues).

    Raises:
        ValueError: ``source`` is neither ``"human"`` nor ``"synthetic"``.
    """
    if source not in ("human", "synthetic"):
        raise ValueError(f"goal source must be 'human' or 'synthetic', got {source!r}")
    stored = catalog.precomputed_goals(source)
    if stored is not None:
        return stored
    cached = _GOAL_CACHE.setdefault(catalog, {})
    goals = cached.get(source)
    if goals is None:
        prices = product_prices(catalog)
        built = _human_goals(catalog, prices) if source == "human" else _synthetic_goals(catalog, prices)
        goals = cached[source] = tuple(built)
    return goals


def goal_positions(goals: Sequence[Goal]) -> Sequence[int]:
    """The `Goal.position` of each goal, ascending (a stored goal list keeps them in an array)."""
    stored = getattr(goals, "positions", None)
    if stored is not None:
        return stored  # type: ignore[no-any-return]
    return [goal.position for goal in goals]


def goal_split(
    catalog_name: str, n_goals: int, split: Split, positions: Sequence[int] | None = None
) -> range:
    """The goal indices of a split.

    Real data follows the paper: test is goals 0-499, dev 500-1499, train 1500 onwards.
    The bundled ``"mini"`` catalogue: test 0-99, dev 100-199, train 200 onwards. Ranges
    are clipped to ``n_goals``. With ``positions`` (the goals' numbers, ascending, see
    `goal_positions`) the bounds apply to the numbers: on the 1k set, whose 13 human goals
    are paper goals 1195, 2543, ..., the test split is empty, dev holds one goal and train 12.

    Args:
        catalog_name: The catalogue's name (`Catalog.name`).
        n_goals: How many goals there are.
        split: ``"train"``, ``"dev"``, ``"test"`` or ``"all"``.
        positions: The goals' numbers; without them goal i is number i.

    Returns:
        The indices, as a range.

    Raises:
        ValueError: Unknown split or negative ``n_goals``.

    Example:
        >>> goal_split("webshop-1k", 6910, "dev")
        range(500, 1500)
        >>> goal_split("mini", 150, "train")
        range(150, 150)
        >>> goal_split("webshop-1k", 3, "train", positions=[20, 700, 4000])
        range(2, 3)
    """
    if n_goals < 0:
        raise ValueError(f"n_goals must be >= 0, got {n_goals}")
    dev_start, train_start = _SPLIT_BOUNDS["mini" if catalog_name == "mini" else "real"]
    if positions is not None:
        # Goals are listed by number; a split is the run of goals whose numbers fall in it.
        dev_start, train_start = (
            bisect.bisect_left(positions, dev_start),
            bisect.bisect_left(positions, train_start),
        )
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
