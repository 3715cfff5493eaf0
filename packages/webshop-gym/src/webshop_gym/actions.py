"""The action grammar, defined once: ``search[keywords]`` and ``click[button text]``.

An action is a kind (``search`` or ``click``, lower case, exactly as the original spells
them) followed by its argument in square brackets::

    search[3 ounce bright citrus deodorant]
    click[B078GWRC1J]
    click[< Prev]

How text is read, and where that differs from the original (whose parser is the regular
expression ``(.+)\\[(.+)\\]`` matched at the start of the string):

- Whitespace around the whole action and around the argument is ignored. The original
  kept it, so ``click[ buy now]`` failed there; no button text starts or ends with a
  space, so ignoring it only turns failures into the evident intent.
- The kind is case-sensitive (``Click[...]`` is an error, as in the original); the
  argument is case-insensitive, which the shop implements by lower-casing both sides,
  as the original lower-cased the argument.
- The argument runs from the first ``[`` to the last ``]``, and the action must end with
  that ``]``. Brackets inside the argument are therefore fine (``click[pack [2]]``);
  the original's greedy expression split such strings at the last ``[`` and failed.
  Text after the closing bracket is an error here; the original silently dropped it.
- Anything else (empty text, no brackets, an empty argument, an unknown kind) gives an
  error message, never an exception.

Example:
    >>> parse_action("click[Buy Now]")
    Action(kind='click', arg='Buy Now')
    >>> parse_action("  search[ red shoes ] ")
    Action(kind='search', arg='red shoes')
    >>> parse_action("buy it")
    "Malformed action 'buy it': expected search[keywords] or click[button text]."
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal, cast

__all__ = [
    "ACTION_KINDS",
    "GRAMMAR",
    "SEARCH_PLACEHOLDER",
    "Action",
    "ActionKind",
    "click_action",
    "clicked_product",
    "parse_action",
    "search_action",
]

ActionKind = Literal["search", "click"]
ACTION_KINDS: tuple[ActionKind, ...] = ("search", "click")

# What `available_actions` lists when the page has a search bar: the query is free text.
SEARCH_PLACEHOLDER = "search[<query>]"

# One description of the grammar for prompts and error messages.
GRAMMAR = "search[keywords] or click[button text]"

# Product ids as the shop lists them in `available_actions`: ten lower-case letters and digits.
_PRODUCT_CLICK = re.compile(r"click\[([a-z0-9]{10})\]")

# Error messages quote the offending action; a 100 KB action should not make a 100 KB
# error message.
_PREVIEW_CHARS = 80


@dataclass(frozen=True, slots=True)
class Action:
    """A parsed action: its kind and its argument, stripped of surrounding whitespace."""

    kind: ActionKind
    arg: str

    def __str__(self) -> str:
        return f"{self.kind}[{self.arg}]"


def search_action(query: str) -> str:
    """The action string that searches for ``query``.

    >>> search_action("red shoes")
    'search[red shoes]'
    """
    return f"search[{query}]"


def click_action(text: str) -> str:
    """The action string that clicks the button, option or product named ``text``.

    >>> click_action("buy now")
    'click[buy now]'
    """
    return f"click[{text}]"


def clicked_product(action: str) -> str | None:
    """The product id an available click opens, or ``None`` for any other action.

    Reads actions as `available_actions` spells them (lower case, no padding).

    >>> clicked_product("click[b078gwrc1j]"), clicked_product("click[buy now]")
    ('b078gwrc1j', None)
    """
    match = _PRODUCT_CLICK.fullmatch(action)
    return match.group(1) if match else None


def _preview(text: str) -> str:
    if len(text) <= _PREVIEW_CHARS:
        return repr(text)
    return repr(text[:_PREVIEW_CHARS]) + f"... ({len(text)} characters)"


def parse_action(text: str) -> Action | str:
    """Parses an action string.

    Args:
        text: The action, e.g. ``"search[red shoes]"`` or ``"click[buy now]"``.

    Returns:
        The `Action`, or a message saying why ``text`` is not an action. Never raises,
        whatever ``text`` holds (non-strings included).

    >>> parse_action("click[]")
    "Empty argument in 'click[]': expected search[keywords] or click[button text]."
    >>> parse_action("jump[high]")
    "Unknown action kind 'jump' in 'jump[high]': expected search[keywords] or click[button text]."
    """
    if not isinstance(text, str):
        return f"An action must be a string, not {type(text).__name__}: expected {GRAMMAR}."
    stripped = text.strip()
    if not stripped:
        return f"Empty action: expected {GRAMMAR}."
    open_at = stripped.find("[")
    if open_at == -1 or not stripped.endswith("]") or open_at == len(stripped) - 1:
        return f"Malformed action {_preview(text)}: expected {GRAMMAR}."
    kind = stripped[:open_at]
    if kind not in ACTION_KINDS:
        return f"Unknown action kind {_preview(kind)} in {_preview(text)}: expected {GRAMMAR}."
    arg = stripped[open_at + 1 : -1].strip()
    if not arg:
        return f"Empty argument in {_preview(text)}: expected {GRAMMAR}."
    return Action(cast(ActionKind, kind), arg)
