"""JSON forms of goals and page states: the HTTP API, its Gymnasium client and episode records.

The codec both sides of `webshop_gym.web` share (and `webshop_gym.trajectories`): standard
library only, no Flask.

Round trips are exact: ``goal_from_json(goal_to_json(g)) == g`` and the same for page
states, so a remote privileged policy sees the very objects a local one would. Reading
JSON that is not such an object (a field missing, of another shape) raises ``ValueError``
naming the field, never ``KeyError`` or ``TypeError`` from deep inside.

Example:
    >>> from webshop_gym.shop import Page, PageState
    >>> state = PageState(Page.ITEM, "red shoes", ("red",), ("B000000001",), 1, "B000000001",
    ...                   (("color", "red"),), None, frozenset({"B000000001"}))
    >>> state_from_json(state_to_json(state)) == state
    True
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from webshop_gym.data.model import Goal
from webshop_gym.shop import Page, PageState

__all__ = ["goal_from_json", "goal_to_json", "state_from_json", "state_to_json"]


def goal_to_json(goal: Goal) -> dict[str, Any]:
    """The goal as JSON: the one form every record and the API use (``options`` as lists)."""
    return {
        "asin": goal.asin,
        "instruction": goal.instruction_text,
        "attributes": list(goal.attributes),
        "options": [list(o) if isinstance(o, tuple) else o for o in goal.goal_options],
        "price_upper": goal.price_upper,
        "query": goal.query,
        "category": goal.category,
        "product_category": goal.product_category,
        "name": goal.name,
        "weight": goal.weight,
        "position": goal.position,
    }


def goal_from_json(data: dict[str, Any]) -> Goal:
    """The goal `goal_to_json` wrote; ``ValueError`` if ``data`` is not one."""
    with _reading("a goal", data):
        return _goal_from_json(data)


def _goal_from_json(data: dict[str, Any]) -> Goal:
    options = tuple(tuple(o) if isinstance(o, list) else o for o in data["options"])
    return Goal(
        asin=data["asin"],
        instruction_text=data["instruction"],
        attributes=tuple(data["attributes"]),
        goal_options=options,  # type: ignore[arg-type]
        price_upper=data["price_upper"],
        query=data["query"],
        category=data["category"],
        product_category=data["product_category"],
        name=data["name"],
        weight=data["weight"],
        position=data["position"],
    )


def state_to_json(state: PageState) -> dict[str, Any]:
    return {
        "page": state.page.value,
        "instruction": state.instruction,
        "keywords": list(state.keywords),
        "result_asins": list(state.result_asins),
        "page_number": state.page_number,
        "asin": state.asin,
        "selected_options": [list(pair) for pair in state.selected_options],
        "sub_page": state.sub_page,
        "visited": sorted(state.visited),
        "reward": state.reward,
    }


def state_from_json(data: dict[str, Any]) -> PageState:
    """The page state `state_to_json` wrote; ``ValueError`` if ``data`` is not one."""
    with _reading("a page state", data):
        return _state_from_json(data)


def _state_from_json(data: dict[str, Any]) -> PageState:
    return PageState(
        page=Page(data["page"]),
        instruction=data["instruction"],
        keywords=tuple(data["keywords"]),
        result_asins=tuple(data["result_asins"]),
        page_number=data["page_number"],
        asin=data["asin"],
        selected_options=tuple((name, value) for name, value in data["selected_options"]),
        sub_page=data["sub_page"],
        visited=frozenset(data["visited"]),
        reward=data["reward"],
    )


@contextmanager
def _reading(what: str, data: Any) -> Iterator[None]:
    if not isinstance(data, dict):
        raise ValueError(f"{what} in JSON is an object, got {type(data).__name__}")
    try:
        yield
    except KeyError as error:
        raise ValueError(f"{what} in JSON lacks the field {error.args[0]!r}") from None
    except (TypeError, ValueError) as error:
        raise ValueError(f"{what} in JSON has a field of the wrong shape: {str(error)[:200]}") from None
