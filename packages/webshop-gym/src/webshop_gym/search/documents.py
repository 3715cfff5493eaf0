"""The text the original WebShop search index holds for each product."""

from __future__ import annotations

from webshop_gym.data.model import Product

__all__ = ["search_document"]


def search_document(product: Product) -> str:
    """The lower-cased document the original indexes for a product.

    It joins, with single spaces, the title, the description, the first bullet point and
    the options written as ``"name: v1, v2, and name2: v3"`` (empty when the product has
    none, which leaves a trailing space, as in the original index).

    Args:
        product: A cleaned product.

    Returns:
        The document text.

    Example:
        >>> from webshop_gym.data.model import Product
        >>> product = Product(
        ...     asin="B000000001", name="Red Mug", title="Red Mug",
        ...     description="A Mug.", bullet_points=("Holds Tea", "Dishwasher safe"),
        ...     price="$5.0", pricing=(5.0,), options={"color": ("red", "blue")},
        ...     option_to_image={}, attributes=(), category="", product_category="",
        ...     query="", main_image="", rating="N.A.",
        ... )
        >>> search_document(product)
        'red mug a mug. holds tea color: red, blue'
    """
    option_text = ", and ".join(f"{name}: {', '.join(values)}" for name, values in product.options.items())
    # The original indexes the first bullet point; a product without any has none to add.
    first_bullet = product.bullet_points[0] if product.bullet_points else ""
    return " ".join((product.title, product.description, first_bullet, option_text)).lower()
