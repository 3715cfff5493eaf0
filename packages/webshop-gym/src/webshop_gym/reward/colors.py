"""Colour normalisation for option matching, as the original WebShop reward does it.

The original reward (``web_agent_site/engine/normalize.py``) maps an option value to the
first entry of a fixed colour list that occurs in it, so ``"navy blue"`` and
``"dark blue"`` both become ``"blue"`` before the fuzzy comparison. The list is
alphabetical and the *first list entry* wins, not the first colour in the text:
``"violet lavender"`` becomes ``"lavender"`` and ``"dark blue"`` becomes ``"blue"``.
The test is a plain, case-sensitive substring test, so ``"fashion black"`` becomes
``"ash"`` (f-ash-ion) and ``"rectangular"`` becomes ``"tan"``; we keep those quirks
because rewards must equal the original's.
"""

from __future__ import annotations

from typing import overload

# The original's colour list, in its order (the order decides which colour wins).
COLOR_SET: tuple[str, ...] = (
    "alabaster", "apricot", "aqua", "ash", "asphalt", "azure", "banana", "beige", "black",
    "blue", "blush", "bordeaux", "bronze", "brown", "burgundy", "camel", "camo", "caramel",
    "champagne", "charcoal", "cheetah", "chestnut", "chocolate", "christmas", "coffee",
    "cognac", "copper", "coral", "cranberry", "cream", "crystal", "dark", "denim",
    "eggplant", "elephant", "espresso", "fuchsia", "gold", "granite", "grape", "graphite",
    "grass", "gray", "green", "grey", "heather", "indigo", "ivory", "ivy", "khaki",
    "lavender", "lemon", "leopard", "light", "lilac", "lime", "magenta", "maroon", "mauve",
    "merlot", "midnight", "mint", "mocha", "multicolor", "mushroom", "mustard", "natural",
    "navy", "nude", "olive", "orange", "peach", "pewter", "pink", "plum", "purple",
    "rainbow", "red", "rose", "royal", "rust", "sand", "sapphire", "seashell", "silver",
    "skull", "slate", "steel", "stone", "stonewash", "sunflower", "tan", "taupe", "teal",
    "tiger", "turquoise", "violet", "walnut", "wheat", "white", "wine", "yellow",
)  # fmt: skip


@overload
def normalize_color(value: str) -> str: ...
@overload
def normalize_color(value: tuple[str, ...]) -> str | tuple[str, ...]: ...
def normalize_color(value: str | tuple[str, ...]) -> str | tuple[str, ...]:
    """Maps an option value to its base colour, exactly as the original does.

    Args:
        value: An option value (``"navy blue"``) or, for synthetic goals, a
            ``(name, value)`` pair: the original handed it the items of a dict.

    Returns:
        For a string: the first entry of `COLOR_SET` that is a substring of it, or the
        string unchanged. For a tuple: the original's ``colour in value`` test is then
        element membership, not a substring test, so a pair becomes the first colour
        equal to one of its elements (``("color", "black")`` -> ``"black"``) and any
        other pair (``("color", "navy blue")``) comes back unchanged, still a tuple.

    Examples:
        >>> normalize_color("navy blue"), normalize_color("dark blue")
        ('blue', 'blue')
        >>> normalize_color("16 x 24 inch")
        '16 x 24 inch'
        >>> normalize_color(("color", "black")), normalize_color(("color", "navy blue"))
        ('black', ('color', 'navy blue'))
    """
    for color in COLOR_SET:
        if color in value:  # substring for str, membership for tuple: both as the original
            return color
    return value
