"""The records of a catalogue: products, their instructions, catalogues and goals.

Plain frozen dataclasses with no behaviour beyond lookups, so that every other module
(loaders, the on-disk store, goal building, the shop, the reward) can share them without
importing each other.
"""

from __future__ import annotations

import abc
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field

__all__ = [
    "BaseCatalog",
    "Catalog",
    "Goal",
    "HumanInstruction",
    "Product",
    "Review",
    "SyntheticInstruction",
]


@dataclass(frozen=True, slots=True)
class Review:
    """One customer review as the item page's Reviews tab shows it."""

    title: str
    body: str
    score: str


@dataclass(frozen=True, slots=True)
class Product:
    """A cleaned product, as the original loader (`load_products`) makes it.

    Field names are snake_case versions of the original's keys (``Title`` -> ``title``).
    """

    asin: str
    name: str  # raw product name (used by r_type through goals/products)
    title: str
    description: str
    bullet_points: tuple[str, ...]
    price: str  # display string, e.g. "$10.99" or "$10.99 to $15.99"
    pricing: tuple[float, ...]  # one price, or the low/high of a range
    options: dict[str, tuple[str, ...]]  # option name -> values, in page order
    option_to_image: dict[str, str | None]  # option value -> image url (None: no image)
    attributes: tuple[str, ...]
    category: str
    product_category: str
    query: str
    main_image: str
    rating: str
    reviews: tuple[Review, ...] = field(default_factory=tuple)


@dataclass(frozen=True, slots=True)
class HumanInstruction:
    """One entry of the human-instruction file for a product."""

    instruction: str
    instruction_attributes: tuple[str, ...]
    instruction_options: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class SyntheticInstruction:
    """The templated instruction the attribute file holds for a product."""

    instruction: str
    instruction_attributes: tuple[str, ...]


class BaseCatalog(abc.ABC):
    """What every catalogue offers: products by asin and in file order, and instruction data.

    Two implementations: `Catalog` holds every product in memory (the bundled catalogue,
    a folder of official files); `webshop_gym.store.StoredCatalog` reads them lazily from a
    prepared on-disk store (the 1.18M-product catalogue) and also hands out precomputed
    goals and prices, so nothing needs to walk all products at start-up.
    """

    name: str
    human_instructions: Mapping[str, tuple[HumanInstruction, ...]]
    synthetic_instructions: Mapping[str, SyntheticInstruction]

    @abc.abstractmethod
    def get(self, asin: str) -> Product:
        """The product with this asin; `KeyError` if the catalogue has none."""

    def __getitem__(self, asin: str) -> Product:
        return self.get(asin)

    @abc.abstractmethod
    def __contains__(self, asin: object) -> bool: ...

    @abc.abstractmethod
    def __len__(self) -> int: ...

    @abc.abstractmethod
    def __iter__(self) -> Iterator[Product]:
        """The products in file order."""

    def precomputed_goals(self, source: str) -> Sequence[Goal] | None:
        """Goals prepared ahead of time (`webshop_gym.goals.build_goals` uses them), or None."""
        return None

    def precomputed_prices(self) -> Mapping[str, float] | None:
        """Seeded prices prepared ahead of time (`webshop_gym.goals.product_prices`), or None."""
        return None


# eq=False keeps identity hashing, so goal builders can memoise per catalogue.
@dataclass(frozen=True, eq=False, repr=False)
class Catalog(BaseCatalog):
    """The products of one catalogue, in file order, plus their instruction data.

    Example:
        >>> catalog = Catalog("tiny", (), {}, {})
        >>> len(catalog), "B000000000" in catalog
        (0, False)
    """

    name: str
    products: tuple[Product, ...]
    human_instructions: dict[str, tuple[HumanInstruction, ...]]
    synthetic_instructions: dict[str, SyntheticInstruction]
    _by_asin: dict[str, Product] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_by_asin", {p.asin: p for p in self.products})

    def get(self, asin: str) -> Product:
        """The product with this asin; `KeyError` if the catalogue has none."""
        return self._by_asin[asin]

    def __getitem__(self, asin: str) -> Product:
        return self._by_asin[asin]

    def __contains__(self, asin: object) -> bool:
        return asin in self._by_asin

    def __len__(self) -> int:
        return len(self.products)

    def __repr__(self) -> str:
        return f"Catalog(name={self.name!r}, products={len(self.products)})"

    def __iter__(self) -> Iterator[Product]:
        return iter(self.products)


@dataclass(frozen=True, slots=True)
class Goal:
    """One shopping instruction and what the reward checks the purchase against.

    ``goal_options`` holds option values (``"red"``) for human goals and
    ``(name, value)`` pairs for synthetic goals, exactly as the original keeps them
    (a list versus the items of a dict); the reward treats each form as the original does.
    ``position`` is the goal's number in the original's goal list (for human goals of the
    real data: the paper's number over the full catalogue, see the module docstring);
    splits are cut by it. Goals made by hand have -1.
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
    position: int = -1
