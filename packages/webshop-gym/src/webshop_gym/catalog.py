"""Products: the `Product` model and the loaders for WebShop's official file formats.

Filled in by the catalogue work; the dataclasses below are the contract every other
module reads.
"""

from __future__ import annotations

from dataclasses import dataclass, field


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
    option_to_image: dict[str, str]
    attributes: tuple[str, ...]
    category: str
    product_category: str
    query: str
    main_image: str
    rating: str
    reviews: tuple[Review, ...] = field(default_factory=tuple)
