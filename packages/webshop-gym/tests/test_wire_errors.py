"""`webshop_gym.web.codec` reading JSON that is not a goal or a page state (issue 40): a ValueError."""

from __future__ import annotations

from typing import Any

import pytest

from webshop_gym.envs import WebShopEnv
from webshop_gym.web.codec import goal_from_json, goal_to_json, state_from_json, state_to_json


@pytest.fixture(scope="module")
def played() -> WebShopEnv:
    env = WebShopEnv(split="test")
    env.reset(seed=0, options={"goal_index": 0})
    env.step("search[shoes]")
    return env


def test_round_trips_stay_exact(played: WebShopEnv) -> None:
    assert played.goal is not None and played.state is not None
    assert goal_from_json(goal_to_json(played.goal)) == played.goal
    assert state_from_json(state_to_json(played.state)) == played.state


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda data: [data], "is an object, got list"),
        (lambda data: {k: v for k, v in data.items() if k != "page"}, "lacks the field 'page'"),
        (lambda data: {**data, "page": "checkout"}, "wrong shape: 'checkout' is not a valid Page"),
        (lambda data: {**data, "selected_options": [1]}, "wrong shape"),
    ],
)
def test_a_bad_page_state_is_a_value_error(played: WebShopEnv, change: Any, message: str) -> None:
    assert played.state is not None
    with pytest.raises(ValueError, match=message):
        state_from_json(change(state_to_json(played.state)))


def test_a_bad_goal_is_a_value_error(played: WebShopEnv) -> None:
    assert played.goal is not None
    data = goal_to_json(played.goal)
    with pytest.raises(ValueError, match="a goal in JSON lacks the field 'asin'"):
        goal_from_json({k: v for k, v in data.items() if k != "asin"})
    with pytest.raises(ValueError, match="a goal in JSON has a field of the wrong shape"):
        goal_from_json({**data, "options": 3})
