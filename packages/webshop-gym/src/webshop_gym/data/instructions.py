"""The clauses `webshop_gym.data.goals` appends to an instruction, written and read back in one place.

A goal's instruction is the product's instruction text, then for a synthetic goal its
options spelled out (`option_clause`: ``" with color: black, and size: large"``), then
when the goal has a price limit the price clause (`price_clause`: ``", and price lower
than 40.00 dollars"``). `split_price_clause` and `split_option_clause` read them back: the
agents (`webshop_gym.agents`: the expert's query, the page readers' price limit, the
benchmarks' heuristic) see only the text, so they parse it with these functions, the
inverses of what wrote it.

Example:
    >>> text = "washable pillows" + option_clause([("size", "28 x 28")]) + price_clause(40.0)
    >>> text
    'washable pillows with size: 28 x 28, and price lower than 40.00 dollars'
    >>> body, limit = split_price_clause(text)
    >>> split_option_clause(body), limit
    (('washable pillows', {'size': '28 x 28'}), 40.0)
"""

from __future__ import annotations

import re
from collections.abc import Iterable

__all__ = ["option_clause", "price_clause", "split_option_clause", "split_price_clause"]

# Lenient on case, spacing and thousands separators: agents also read instructions people type.
_PRICE_CLAUSE = re.compile(r",?\s*and price lower than\s*([\d.,]+)\s*dollars\s*$", re.I)
# Where spelled-out options begin: the " with " right before the first "name: ". A name holds
# no " with " itself, so a product instruction's own " with " ("shorts with drawstring closure
# with size: medium") stays in the request.
_OPTION_CLAUSE = re.compile(r"\swith (?=[a-z](?:(?! with )[\w ])*: )", re.I)
_OPTION_SEPARATOR = ", and "


def price_clause(limit: float) -> str:
    """The text that states a goal's price limit.

    >>> price_clause(40)
    ', and price lower than 40.00 dollars'
    """
    return f", and price lower than {limit:.2f} dollars"


def option_clause(goal_options: Iterable[tuple[str, str]]) -> str:
    """The text that spells out a synthetic goal's options ("" without options).

    >>> option_clause([("color", "black"), ("size", "large")])
    ' with color: black, and size: large'
    """
    text = _OPTION_SEPARATOR.join(f"{name}: {value}" for name, value in goal_options)
    return f" with {text}" if text else ""


def split_price_clause(instruction: str) -> tuple[str, float | None]:
    """The instruction without its closing price clause, and the limit the clause states.

    The limit is None without a clause, and also where the clause's number does not read
    as one (the clause is still cut off).

    >>> split_price_clause("red shoes, and price lower than 1,040.00 dollars")
    ('red shoes', 1040.0)
    >>> split_price_clause("red shoes")
    ('red shoes', None)
    """
    found = _PRICE_CLAUSE.search(instruction)
    if found is None:
        return instruction, None
    try:
        limit: float | None = float(found.group(1).replace(",", ""))
    except ValueError:
        limit = None
    return instruction[: found.start()] + instruction[found.end() :], limit


def split_option_clause(text: str) -> tuple[str, dict[str, str]]:
    """Text (without price clause) split into what comes before its spelled-out options, and
    the options, name (lower case) -> value; no options: the text and ``{}``.

    The clause starts at the " with " right before the first ``name:``, so a product
    instruction that holds " with " itself keeps it:

    >>> split_option_clause("a hoodie with color: black, and size: x-large")
    ('a hoodie', {'color': 'black', 'size': 'x-large'})
    >>> split_option_clause("shorts with drawstring closure with size: medium")
    ('shorts with drawstring closure', {'size': 'medium'})
    """
    found = _OPTION_CLAUSE.search(text)
    if found is None:
        return text, {}
    options: dict[str, str] = {}
    for part in text[found.end() :].split(_OPTION_SEPARATOR):
        name, _, value = part.partition(": ")
        if value:
            options[name.strip().lower()] = value.strip()
    return text[: found.start()], options
