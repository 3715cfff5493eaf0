"""The action grammar: what parses, what does not, and that nothing raises."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from webshop_gym.actions import (
    ACTION_KINDS,
    GRAMMAR,
    SEARCH_PLACEHOLDER,
    Action,
    click_action,
    clicked_product,
    parse_action,
    search_action,
)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("search[red shoes]", Action("search", "red shoes")),
        ("click[Buy Now]", Action("click", "Buy Now")),  # case kept; the shop ignores it
        ("click[< Prev]", Action("click", "< Prev")),
        ("click[Next >]", Action("click", "Next >")),
        ("click[B078GWRC1J]", Action("click", "B078GWRC1J")),
        # Whitespace around the action and inside the brackets is ignored.
        ("  click[buy now]\n", Action("click", "buy now")),
        ("search[  3 ounce deodorant  ]", Action("search", "3 ounce deodorant")),
        # Inner whitespace is kept as typed.
        ("search[a  b]", Action("search", "a  b")),
        # The argument runs from the first "[" to the last "]".
        ("click[pack [2]]", Action("click", "pack [2]")),
        ("search[a[b]c]", Action("search", "a[b]c")),
        ("click[]]", Action("click", "]")),
        ("search[[x]", Action("search", "[x")),
        ('search[café ü 20"x20" ✓]', Action("search", 'café ü 20"x20" ✓')),
        ("search[a\nb]", Action("search", "a\nb")),
    ],
)
def test_valid_actions_parse(text: str, expected: Action) -> None:
    assert parse_action(text) == expected


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("", "Empty action"),
        ("   \n\t", "Empty action"),
        ("buy now", "Malformed action"),
        ("click", "Malformed action"),
        ("click[buy now", "Malformed action"),
        ("click]buy now[", "Malformed action"),
        ("click[", "Malformed action"),
        ("click[buy now] please", "Malformed action"),  # the original dropped the tail
        ("click[]", "Empty argument"),
        ("search[   ]", "Empty argument"),
        ("[buy now]", "Unknown action kind ''"),
        ("Click[buy now]", "Unknown action kind 'Click'"),  # the kind is case-sensitive
        ("SEARCH[shoes]", "Unknown action kind 'SEARCH'"),
        ("click [buy now]", "Unknown action kind 'click '"),
        ("type[hello]", "Unknown action kind 'type'"),
        ("think[i should search]", "Unknown action kind 'think'"),
    ],
)
def test_invalid_actions_explain_why(text: str, reason: str) -> None:
    message = parse_action(text)
    assert isinstance(message, str)
    assert message.startswith(reason)
    assert GRAMMAR in message


@pytest.mark.parametrize("value", [None, 3, b"click[x]", ["click[x]"]])
def test_non_strings_are_errors_not_exceptions(value: object) -> None:
    message = parse_action(value)  # type: ignore[arg-type]
    assert isinstance(message, str)
    assert message.startswith("An action must be a string")


def test_huge_actions_parse_and_errors_stay_short() -> None:
    huge = "x" * 100_000
    assert parse_action(f"search[{huge}]") == Action("search", huge)
    message = parse_action(huge)
    assert isinstance(message, str)
    assert len(message) < 300
    assert "100000 characters" in message
    assert isinstance(parse_action("[" * 100_000), str)
    assert isinstance(parse_action("click[" + "]" * 100_000), Action)


def test_format_helpers_round_trip() -> None:
    assert search_action("red shoes") == "search[red shoes]"
    assert click_action("buy now") == "click[buy now]"
    assert parse_action(search_action("red shoes")) == Action("search", "red shoes")
    assert parse_action(click_action("< prev")) == Action("click", "< prev")
    assert str(Action("click", "buy now")) == "click[buy now]"
    # The placeholder itself is a well-formed search action.
    assert parse_action(SEARCH_PLACEHOLDER) == Action("search", "<query>")


@pytest.mark.parametrize(
    ("action", "product"),
    [
        ("click[b078gwrc1j]", "b078gwrc1j"),
        ("click[buy now]", None),
        ("click[x-large]", None),
        ("click[b078gwrc1j2]", None),  # eleven characters: an option value, not an id
        ("search[b078gwrc1j]", None),
        ("click[b078gwrc1j] ", None),  # available actions are never padded
    ],
)
def test_clicked_product_reads_product_clicks_only(action: str, product: str | None) -> None:
    assert clicked_product(action) == product


@given(st.text())
def test_parse_never_raises(text: str) -> None:
    result = parse_action(text)
    assert isinstance(result, Action | str)
    if isinstance(result, Action):
        assert result.kind in ACTION_KINDS
        assert result.arg and result.arg == result.arg.strip()


@given(st.sampled_from(ACTION_KINDS), st.text(min_size=1).filter(lambda s: s.strip() == s))
def test_every_formatted_action_parses_back(kind: str, arg: str) -> None:
    text = search_action(arg) if kind == "search" else click_action(arg)
    assert parse_action(text) == Action(kind, arg)  # type: ignore[arg-type]
