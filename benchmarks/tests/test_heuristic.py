"""The heuristic's reading of instructions and pages (it never sees the goal)."""

from __future__ import annotations

import inspect

from benchmarks.harness.agents import heuristic
from benchmarks.harness.agents.heuristic import (
    HeuristicAgent,
    choose_option,
    item_score,
    price_fit,
    read_wants,
)
from webshop_gym.agents.pages import ItemPage


def test_reads_human_instructions():
    wants = read_wants(
        "i would like a set of exercise bands that are latex free, in heavy, and price lower than 50 dollars"
    )
    assert wants.limit == 50.0 and wants.spelled == {}
    assert {"exercise", "band", "latex", "free", "heavy"} <= wants.words
    assert "would" not in wants.words and "price" not in wants.words
    assert "price" not in wants.query and "i would like" not in wants.query


def test_reads_spelled_out_options_of_synthetic_instructions():
    wants = read_wants(
        "Find me butt lifting, light weight women's shorts with high waist, tummy control with "
        "color: black, and size: 3x-large, and price lower than 40.00 dollars"
    )
    assert wants.spelled == {"color": "black", "size": "3x-large"}
    assert "high" in wants.words and "3x" not in wants.words
    assert wants.query.endswith("black 3x-large")


def test_chooses_the_option_value_the_instruction_names():
    wants = read_wants(
        "i need a tumbler in 30 oz and in sage green please, and price lower than 60.00 dollars"
    )
    assert choose_option("size", ("20 oz", "30 oz", "40 oz"), wants).value == "30 oz"
    assert choose_option("color", ("black", "sage green", "green"), wants).value == "sage green"
    assert choose_option("color", ("navy", "grey"), wants).strength == 0
    spelled = read_wants("Find me shorts with color: a4-black, and size: large")
    choice = choose_option("color", ("a1-black", "a4-black"), spelled)
    assert (choice.value, choice.strength) == ("a4-black", 3)


def test_item_with_all_spelled_options_within_budget_is_complete():
    wants = read_wants("Find me shorts with color: navy, and size: large, and price lower than 40.00 dollars")
    good = ItemPage("Men's Shorts", "$20.0", {"color": ("navy", "black"), "size": ("large",)})
    pricey = ItemPage("Men's Shorts", "$50.0", {"color": ("navy",), "size": ("large",)})
    missing = ItemPage("Men's Shorts", "$20.0", {"color": ("black",), "size": ("large",)})
    assert (
        item_score(good, wants)[1] and not item_score(pricey, wants)[1] and not item_score(missing, wants)[1]
    )
    assert item_score(good, wants)[0] > item_score(missing, wants)[0] > item_score(pricey, wants)[0]
    assert price_fit("$30.0 to $50.0", 40.0) == 0.5


def test_the_agent_is_built_without_the_env():
    """Nothing the heuristic is given can reach the goal: its constructor takes no env."""
    assert list(inspect.signature(HeuristicAgent).parameters) == ["max_visits", "margin"]
    assert "unwrapped" not in inspect.getsource(heuristic)
