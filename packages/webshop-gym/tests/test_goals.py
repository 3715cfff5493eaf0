"""Goals: the original's goals and order, with prices seeded per goal."""

from __future__ import annotations

import hashlib
import itertools
import json
import os
import random
import subprocess
import sys
from collections import Counter
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from webshop_gym.data.catalog import load_catalog, load_products
from webshop_gym.data.goals import (
    NO_PRICE_LIMIT,
    PRICE_LIMITS,
    build_goals,
    goal_positions,
    goal_split,
    paper_positions,
    product_prices,
)
from webshop_gym.data.model import Catalog, Goal, HumanInstruction, Product, SyntheticInstruction


@pytest.fixture(scope="module")
def real(webshop_1k: Path) -> Catalog:
    return load_catalog(webshop_1k)


@pytest.fixture(scope="module")
def reference(webshop_1k_references: Path) -> list[dict[str, Any]]:
    with (webshop_1k_references / "reference_loaded_products_1000.json").open() as f:
        return json.load(f)


def _price_text(goal: Goal) -> str:
    if goal.price_upper == NO_PRICE_LIMIT:
        return ""
    return f", and price lower than {goal.price_upper:.2f} dollars"


def _without_price(goal: Goal) -> str:
    text = goal.instruction_text
    suffix = _price_text(goal)
    assert text.endswith(suffix)
    return text[: len(text) - len(suffix)]


def _shuffled(items: list[Any]) -> list[Any]:
    # What the original env does to its goal list: random.seed(233); random.shuffle(...)
    state = random.getstate()
    random.seed(233)
    random.shuffle(items)
    random.setstate(state)
    return items


def test_goal_counts(real: Catalog) -> None:
    assert len(build_goals(real, "human")) == 13
    assert len(build_goals(real, "synthetic")) == 6910


# Where the 1k set's 13 human goals sit in the paper's list of 12,087 (human_goals.json).
PAPER_POSITIONS_1K = [1195, 2543, 3018, 3621, 4058, 4517, 4999, 5624, 6682, 7902, 9122, 9380, 10170]


def _paper_text(text: str) -> str:
    # human_goals.json lists the instructions without apostrophes ("i'm" -> "im").
    return text.replace("'", "").replace("’", "")


def test_human_goals_in_the_original_order(real: Catalog, reference: list[dict[str, Any]]) -> None:
    # The original walks products in file order, each product's instructions in order,
    # skips those without instruction attributes; the 1k file is the head of the full
    # file, so these are goals 0..12 of the full build order, numbered by the full shuffle.
    built = [
        (p["asin"], e["instruction"].strip("."), tuple(e["instruction_options"]))
        for p in reference
        for e in p.get("instructions", ())
        if e["instruction_attributes"]
    ]
    assert len(built) == 13
    full_order = _shuffled(list(range(12087)))
    expected = sorted((full_order.index(b), goal) for b, goal in enumerate(built))
    goals = build_goals(real, "human")
    assert [(g.position, (g.asin, _without_price(g), g.goal_options)) for g in goals] == expected
    for goal in goals:
        product = real[goal.asin]
        assert goal.name == product.name
        assert (goal.query, goal.category) == (product.query, product.category)
        assert goal.product_category == product.product_category
        assert goal.weight == 1.0


def test_human_goals_sit_at_the_papers_positions(real: Catalog, webshop_1k_references: Path) -> None:
    paper = json.loads((webshop_1k_references / "human_goals.json").read_text())
    assert len(paper) == 12087
    goals = build_goals(real, "human")
    assert [g.position for g in goals] == PAPER_POSITIONS_1K
    for goal in goals:
        assert _paper_text(_without_price(goal)) == paper[goal.position]


def test_paper_splits_of_the_1k_human_goals(real: Catalog) -> None:
    goals = build_goals(real, "human")
    positions = goal_positions(goals)
    assert goal_split(real.name, len(goals), "test", positions) == range(0, 0)
    assert [goals[i].position for i in goal_split(real.name, len(goals), "dev", positions)] == [1195]
    assert len(goal_split(real.name, len(goals), "train", positions)) == 12


def test_paper_positions_are_the_full_shuffle() -> None:
    full = paper_positions(12087, "full")
    assert sorted(full) == list(range(12087))
    assert paper_positions(13, "webshop-1k") == full[:13]
    assert sorted(paper_positions(13, "webshop-1k")) == PAPER_POSITIONS_1K
    # More goals than the real data, or the bundled catalogue: numbered by their own shuffle.
    assert sorted(paper_positions(13000, "big")) == list(range(13000))
    assert sorted(paper_positions(830, "mini")) == list(range(830))


def test_synthetic_goals_in_the_original_order(
    real: Catalog, reference: list[dict[str, Any]], webshop_1k: Path
) -> None:
    with (webshop_1k / "items_ins_v2_1000.json").open() as f:
        instructions = json.load(f)
    expected = []
    for product in reference:
        entry = instructions[product["asin"]]
        if entry.get("instruction") is None:
            continue
        names = sorted(product["options"])
        for values in itertools.product(*(product["options"][n] for n in names)):
            pairs = tuple(zip(names, values, strict=True))
            text = entry["instruction"]
            if pairs:
                text += " with " + ", and ".join(f"{k}: {v}" for k, v in pairs)
            expected.append((product["asin"], text, pairs, tuple(entry["instruction_attributes"])))
    goals = build_goals(real, "synthetic")
    got = [(g.asin, _without_price(g), g.goal_options, g.attributes) for g in goals]
    assert got == _shuffled(expected)


def test_synthetic_weights_favour_rare_attributes(real: Catalog) -> None:
    goals = build_goals(real, "synthetic")
    counts = Counter(a for g in goals for a in g.attributes)
    for goal in goals:
        expected = sum(1.0 / counts[a] for a in goal.attributes) / len(goal.attributes)
        assert goal.weight == expected
    assert build_goals(real, "synthetic")[0].name == real[goals[0].asin].title


def test_spot_values_are_stable(real: Catalog) -> None:
    # Fixed so that a change of seeding or order shows up as a failure.
    synthetic = build_goals(real, "synthetic")
    assert synthetic[0].asin == "B0743JKHBV"
    assert synthetic[0].instruction_text == (
        "Find me double sided, machine washable decorative pillows with printing "
        'technology with size: 28" x 28", and price lower than 40.00 dollars'
    )
    assert synthetic[6909].asin == "B09NPML43M"
    human = build_goals(real, "human")
    assert human[12].position == 10170
    assert human[12].instruction_text == (
        "i am looking for blue color toothbrushes that helps to maintain my oral hygiene, "
        "and price lower than 60.00 dollars"
    )
    assert human[12].goal_options == ("blue",)
    assert human[12].attributes == ("oral hygiene",)


def test_price_limits_follow_the_original_rule(real: Catalog) -> None:
    prices = product_prices(real)
    goals = build_goals(real, "human") + build_goals(real, "synthetic")
    branches: Counter[str] = Counter()
    for goal in goals:
        price = prices[goal.asin]
        candidates = [p for p in PRICE_LIMITS if p > price][:4]
        if len(candidates) >= 2:
            # The larger of two distinct candidates: never the smallest one.
            assert goal.price_upper in candidates[1:]
            assert goal.instruction_text.endswith(f", and price lower than {goal.price_upper:.2f} dollars")
            branches["limit"] += 1
        else:
            assert goal.price_upper == NO_PRICE_LIMIT
            assert "price lower than" not in goal.instruction_text
            branches["none"] += 1
    assert branches["limit"] > 6000 and branches["none"] > 0


def test_goals_of_one_product_share_its_price_limit(real: Catalog) -> None:
    limits: dict[str, set[float]] = {}
    for goal in build_goals(real, "synthetic"):
        limits.setdefault(goal.asin, set()).add(goal.price_upper)
    assert all(len(values) == 1 for values in limits.values())


def _digest_script(path: Path) -> str:
    return (
        "import hashlib, sys\n"
        "from webshop_gym.data.catalog import load_catalog\n"
        "from webshop_gym.data.goals import build_goals, product_prices\n"
        f"c = load_catalog({str(path)!r})\n"
        "text = repr((build_goals(c, 'human'), build_goals(c, 'synthetic'), product_prices(c)))\n"
        "print(hashlib.sha256(text.encode()).hexdigest())\n"
    )


def test_goals_are_identical_in_every_process(real: Catalog, webshop_1k: Path) -> None:
    digests = []
    for hash_seed in ("1", "2"):
        env = {**os.environ, "PYTHONHASHSEED": hash_seed}
        result = subprocess.run(
            [sys.executable, "-c", _digest_script(webshop_1k)],
            capture_output=True,
            text=True,
            env=env,
            check=True,
        )
        digests.append(result.stdout.strip())
    here = repr((build_goals(real, "human"), build_goals(real, "synthetic"), product_prices(real)))
    assert digests[0] == digests[1] == hashlib.sha256(here.encode()).hexdigest()


def test_goals_do_not_touch_the_global_random_state(webshop_1k: Path, webshop_1k_human: Path) -> None:
    fresh = load_products(
        webshop_1k / "items_shuffle_1000.json", webshop_1k / "items_ins_v2_1000.json", webshop_1k_human
    )
    random.seed(7)
    state = random.getstate()
    build_goals(fresh, "synthetic")
    product_prices(fresh)
    assert random.getstate() == state


def test_building_goals_is_cached(webshop_1k: Path, webshop_1k_human: Path) -> None:
    # (How long building takes is benchmarks.env.env_speed's to measure, not a unit test's.)
    fresh = load_products(
        webshop_1k / "items_shuffle_1000.json", webshop_1k / "items_ins_v2_1000.json", webshop_1k_human
    )
    goals = build_goals(fresh, "synthetic")
    assert build_goals(fresh, "synthetic") is goals


def test_unknown_goal_source(real: Catalog) -> None:
    with pytest.raises(ValueError, match="'human' or 'synthetic'"):
        build_goals(real, "expert")  # type: ignore[arg-type]


# --- prices and limits on hand-made catalogues --------------------------------------


def _product(asin: str, pricing: tuple[float, ...], options: dict[str, tuple[str, ...]]) -> Product:
    return Product(
        asin=asin,
        name=f"Product {asin}",
        title=f"Product {asin}",
        description="",
        bullet_points=("",),
        price="",
        pricing=pricing,
        options=options,
        option_to_image={},
        attributes=("a",),
        category="c",
        product_category="x › y",
        query="q",
        main_image="",
        rating="N.A.",
    )


def _catalog(products: list[Product], human: Mapping[str, tuple[HumanInstruction, ...]]) -> Catalog:
    synthetic = {p.asin: SyntheticInstruction(f"Find {p.asin}", ("a",)) for p in products}
    return Catalog("hand-made", tuple(products), dict(human), synthetic)


def test_product_prices_are_seeded_and_in_range(real: Catalog) -> None:
    prices = product_prices(real)
    assert list(prices) == [p.asin for p in real]
    for product in real:
        if len(product.pricing) == 1:
            assert prices[product.asin] == product.pricing[0]
        else:
            # A few real ranges run high to low ("$44.99 to $33.98"); both ends bound.
            assert min(product.pricing) <= prices[product.asin] <= max(product.pricing)
    ranged = [prices[p.asin] for p in real if len(p.pricing) == 2]
    assert len(set(ranged)) == len(ranged)  # drawn, not all the low end
    prices["B06Y3VLDFB"] = -1.0
    assert product_prices(real)["B06Y3VLDFB"] == 877.8  # callers get their own copy


def test_product_without_price_costs_100() -> None:
    catalog = _catalog([_product("P1", (), {})], {})
    assert product_prices(catalog) == {"P1": 100.0}


@pytest.mark.parametrize(
    ("price", "allowed"),
    [
        (5.0, {20.0, 30.0, 40.0}),
        (10.0, {30.0, 40.0, 50.0}),  # limits must be strictly above the price
        (975.0, {990.0}),
        (985.0, {NO_PRICE_LIMIT}),  # one candidate only: no limit, no text
        (2000.0, {NO_PRICE_LIMIT}),
    ],
)
def test_price_limit_candidates(price: float, allowed: set[float]) -> None:
    products = [_product(f"P{i}", (price,), {"size": ("s", "m")}) for i in range(40)]
    human = {p.asin: (HumanInstruction(f"i want {p.asin}.", ("a",), ("s",)),) for p in products}
    catalog = _catalog(products, human)
    goals = build_goals(catalog, "human") + build_goals(catalog, "synthetic")
    seen = {g.price_upper for g in goals}
    assert seen <= allowed
    if len(allowed) > 1:
        assert seen == allowed  # every candidate pair can be drawn
    for goal in goals:
        assert goal.instruction_text.endswith(_price_text(goal))
        assert ("price lower than" in goal.instruction_text) == (goal.price_upper != NO_PRICE_LIMIT)


def test_synthetic_goal_text_and_options() -> None:
    product = _product("P1", (12.0,), {"size": ("s", "m"), "color": ("red",)})
    catalog = _catalog([product], {})
    goals = sorted(build_goals(catalog, "synthetic"), key=lambda g: g.goal_options)
    assert [g.goal_options for g in goals] == [
        (("color", "red"), ("size", "m")),
        (("color", "red"), ("size", "s")),
    ]
    assert _without_price(goals[0]) == "Find P1 with color: red, and size: m"
    no_options = _catalog([_product("P2", (12.0,), {})], {})
    (goal,) = build_goals(no_options, "synthetic")
    assert goal.goal_options == ()
    assert _without_price(goal) == "Find P2"


def test_human_instructions_without_attributes_are_skipped() -> None:
    product = _product("P1", (12.0,), {})
    human = {
        "P1": (
            HumanInstruction("...i want a thing...", ("a",), ("red",)),
            HumanInstruction("i want nothing in particular", (), ()),
        )
    }
    (goal,) = build_goals(_catalog([product], human), "human")
    assert _without_price(goal) == "i want a thing"  # dots stripped at both ends
    assert goal.goal_options == ("red",)


# --- splits ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "n_goals", "split", "expected"),
    [
        ("webshop-1k", 6910, "test", range(0, 500)),
        ("webshop-1k", 6910, "dev", range(500, 1500)),
        ("webshop-1k", 6910, "train", range(1500, 6910)),
        ("webshop-1k", 6910, "all", range(0, 6910)),
        ("full", 12087, "train", range(1500, 12087)),
        ("webshop-1k", 13, "test", range(0, 13)),
        ("webshop-1k", 13, "dev", range(13, 13)),
        ("webshop-1k", 13, "train", range(13, 13)),
        ("webshop-1k", 700, "dev", range(500, 700)),
        ("mini", 1000, "test", range(0, 100)),
        ("mini", 1000, "dev", range(100, 200)),
        ("mini", 1000, "train", range(200, 1000)),
        ("mini", 150, "dev", range(100, 150)),
        ("mini", 0, "all", range(0, 0)),
    ],
)
def test_goal_split(name: str, n_goals: int, split: str, expected: range) -> None:
    assert goal_split(name, n_goals, split) == expected  # type: ignore[arg-type]


def test_splits_partition_all_goals() -> None:
    for name in ("mini", "webshop-1k"):
        for n in (0, 50, 150, 499, 500, 1499, 1500, 6910):
            parts = [goal_split(name, n, s) for s in ("test", "dev", "train")]
            assert [i for part in parts for i in part] == list(goal_split(name, n, "all"))


def test_bad_split_arguments() -> None:
    with pytest.raises(ValueError, match="split must be one of"):
        goal_split("mini", 10, "validation")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="n_goals"):
        goal_split("mini", -1, "all")
