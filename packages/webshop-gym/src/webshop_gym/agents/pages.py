"""Readers of the ``"text"`` observation: what a results or item page lists, what an instruction asks.

Hand-written agents (the benchmarks' heuristic) and the features of
`webshop_gym.wrappers.DiscreteActions` read pages the same way, with these pure functions of
the observation string and ``info["available_actions"]``: `read_results` and `read_item`
split a page on `webshop_gym.render.text.SEPARATOR`, the one separator the text mode joins
with; `price_limit`, `instruction_query` and `without_price_clause` read an instruction (with
`webshop_gym.data.instructions`, the inverse of what writes its clauses);
`price_bounds` and `price_fit` read a price text; `tokens` and `FILLER_WORDS` compare words.

Example:
    >>> instruction_query("i need red running shoes, and price lower than 40.00 dollars")
    'red running shoes'
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from webshop_gym.actions import click_action, clicked_product
from webshop_gym.data.instructions import split_price_clause
from webshop_gym.render.text import SEPARATOR

__all__ = [
    "FILLER_WORDS",
    "ItemPage",
    "ResultEntry",
    "instruction_query",
    "price_bounds",
    "price_fit",
    "price_limit",
    "read_item",
    "read_results",
    "tokens",
    "without_price_clause",
]

_PRICE_NUMBER = re.compile(r"\$\s*([\d,]+(?:\.\d+)?)")
_TOKEN = re.compile(r"[a-z0-9]+")

# Words that say nothing about the product: dropped from queries and from overlap scores.
FILLER_WORDS = frozenset(
    """
    a an the i i'm im me my we our you your it its is are am be been being was were this that these
    those there here what which who whom please find need want looking look search searching get
    buy purchase shop shopping would like love can could will should must may might also just some
    any for of in on at to from with and or but by as so if into about than then too very really
    only one ones something thing things item items product products do does did have has had
    hi hello hey help show give go going got make sure needs wants wanted prefer preferably
    """.split()
)


def tokens(text: str) -> list[str]:
    """Lower-case alphanumeric tokens, a trailing plural ``s`` dropped from longer words.

    >>> tokens("Women's Running Shoes, 2-Pack")
    ['women', 's', 'running', 'shoe', '2', 'pack']
    """
    words = _TOKEN.findall(text.lower())
    return [w[:-1] if len(w) > 3 and w.endswith("s") and not w.endswith("ss") else w for w in words]


def price_limit(instruction: str) -> float | None:
    """The price limit an instruction states, if any.

    >>> price_limit("red shoes, and price lower than 40.00 dollars")
    40.0
    >>> price_limit("red shoes") is None
    True
    """
    return split_price_clause(instruction)[1]


def without_price_clause(instruction: str) -> str:
    """The instruction without its closing ``and price lower than N dollars`` clause.

    >>> without_price_clause("red shoes, and price lower than 40.00 dollars")
    'red shoes'
    """
    return split_price_clause(instruction)[0]


def instruction_query(instruction: str) -> str:
    """Search keywords from an instruction: no price clause, no filler words.

    >>> instruction_query("i need a pair of red running shoes, and price lower than 40.00 dollars")
    'pair red running shoes'
    """
    text = without_price_clause(instruction).lower()
    words = [w.strip(".,;:!?") for w in text.split()]
    kept = [w for w in words if w and w not in FILLER_WORDS]
    return " ".join(kept) or text.strip() or instruction


def price_bounds(price_text: str) -> tuple[float, float] | None:
    """The lowest and highest price in a price text such as ``"$38.49 to $51.99"``.

    >>> price_bounds("Price: $38.49 to $51.99")
    (38.49, 51.99)
    >>> price_bounds("$1,299.0")
    (1299.0, 1299.0)
    >>> price_bounds("N.A.") is None
    True
    """
    numbers = [float(n.replace(",", "")) for n in _PRICE_NUMBER.findall(price_text)]
    if not numbers:
        return None
    return min(numbers), max(numbers)


@dataclass(frozen=True)
class ResultEntry:
    """One product on a results page.

    Attributes:
        asin: The product id, lower case, as its click action names it.
        title: The product title ("" when the product has none).
        price: The price text (``"$30.49"``, ``"$38.49 to $51.99"``; "" when none).
        rank: Position on the page, from 0.
    """

    asin: str
    title: str
    price: str
    rank: int


@dataclass(frozen=True)
class ItemPage:
    """What an item page shows.

    Attributes:
        title: The product title.
        price: The price text after ``"Price: "``.
        options: Option name -> its values in page order (name "" for unnamed options).
    """

    title: str
    price: str
    options: dict[str, tuple[str, ...]] = field(default_factory=dict)


def _click_targets(available_actions: Sequence[str]) -> set[str]:
    return {a[len("click[") : -1].lower() for a in available_actions if a.startswith("click[")}


def read_results(observation: str, available_actions: Sequence[str]) -> list[ResultEntry]:
    """The products a results page lists (``"text"`` observation mode).

    >>> page = ("Instruction: [SEP] red shoes [SEP] Back to Search [SEP] Page 1 (Total results: 2) "
    ...         "[SEP] Next > [SEP] B000000001 [SEP] Red Shoe [SEP] $10.0 [SEP] B000000002 [SEP] $5.0")
    >>> read_results(page, ["click[b000000001]", "click[b000000002]"])[1]
    ResultEntry(asin='b000000002', title='', price='$5.0', rank=1)
    """
    products = {asin for a in available_actions if (asin := clicked_product(a))}
    parts = observation.split(SEPARATOR)
    try:
        start = parts.index("Next >") + 1
    except ValueError:
        return []
    entries: list[ResultEntry] = []
    asin, title, price = None, "", ""
    for part in parts[start:]:
        if part.lower() in products:
            if asin is not None:
                entries.append(ResultEntry(asin, title, price, len(entries)))
            asin, title, price = part.lower(), "", ""
        elif asin is not None:
            if not price and part.startswith("$") and price_bounds(part) is not None:
                price = part
            elif not title:
                title = part
    if asin is not None:
        entries.append(ResultEntry(asin, title, price, len(entries)))
    return entries


def read_item(observation: str, available_actions: Sequence[str]) -> ItemPage | None:
    """Title, price and options of an item page (``"text"`` mode); None on other pages.

    >>> page = ("Instruction: [SEP] x [SEP] Back to Search [SEP] < Prev [SEP] size [SEP] 9 [SEP] 10 "
    ...         "[SEP] Trail Shoe [SEP] Price: $40.0 [SEP] Rating: N.A. [SEP] Description [SEP] Buy Now")
    >>> read_item(page, ["click[< prev]", "click[9]", "click[10]", "click[buy now]"])
    ItemPage(title='Trail Shoe', price='$40.0', options={'size': ('9', '10')})
    """
    if click_action("buy now") not in available_actions:
        return None
    parts = observation.split(SEPARATOR)
    try:
        start = parts.index("< Prev") + 1
        price_at = next(i for i in range(start, len(parts)) if parts[i].startswith("Price: "))
    except (ValueError, StopIteration):
        return None
    clickable = _click_targets(available_actions)
    body = parts[start:price_at]
    title = ""
    if body and body[-1].lower() not in clickable:
        title = body.pop()
    options: dict[str, list[str]] = {}
    name = ""
    for part in body:
        if part.lower() in clickable:
            options.setdefault(name, []).append(part)
        else:
            name = part
            options.setdefault(name, [])
    return ItemPage(
        title=title,
        price=parts[price_at][len("Price: ") :],
        options={k: tuple(v) for k, v in options.items() if v},
    )


def price_fit(price_text: str, limit: float | None, unknown: float = 0.5) -> float:
    """1 within the limit, 0 over it, the chance of fitting for a price range; ``unknown``
    when there is no limit or no readable price.

    >>> price_fit("$30.0 to $50.0", 40.0), price_fit("$12.99", None, unknown=1.0)
    (0.5, 1.0)
    """
    bounds = price_bounds(price_text)
    if limit is None or bounds is None:
        return unknown
    low, high = bounds
    if high <= limit:
        return 1.0
    if low > limit:
        return 0.0
    return (limit - low) / (high - low)
