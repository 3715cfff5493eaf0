"""The bundled "mini" catalogue: reproducible, in the official formats, every goal solvable."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from webshop_gym.data.catalog import MINI_DIR, load_catalog
from webshop_gym.data.goals import NO_PRICE_LIMIT, build_goals, product_prices
from webshop_gym.data.model import Catalog, Goal
from webshop_gym.reward import binary_reward, original_reward
from webshop_gym.search.engines import build_engine

GENERATOR = Path(__file__).resolve().parents[1] / "scripts" / "make_mini_catalog.py"
FILES = ("items_shuffle_mini.json", "items_ins_v2_mini.json", "items_human_ins_mini.json")
CATEGORIES = {"shoes", "electronics", "apparel", "fitness", "home", "accessories", "kitchen", "books"}
PRODUCT_KEYS = {
    "asin",
    "name",
    "full_description",
    "small_description",
    "pricing",
    "images",
    "product_category",
    "category",
    "query",
    "page",
    "average_rating",
    "customization_options",
}
HUMAN_KEYS = {
    "asin",
    "instruction",
    "attributes",
    "options",
    "instruction_attributes",
    "instruction_options",
    "assignment_id",
    "worker_id",
}
PRICE = re.compile(r"\$\d+\.\d\d( - \$\d+\.\d\d)?")
ASIN = re.compile(r"B0[0-9A-Z]{8}")
TOP_K = 10


def _read(name: str) -> Any:
    return json.loads((MINI_DIR / name).read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def products() -> list[dict[str, Any]]:
    return _read("items_shuffle_mini.json")


@pytest.fixture(scope="module")
def attributes() -> dict[str, Any]:
    return _read("items_ins_v2_mini.json")


@pytest.fixture(scope="module")
def human() -> dict[str, list[dict[str, Any]]]:
    return _read("items_human_ins_mini.json")


@pytest.fixture(scope="module")
def catalog() -> Catalog:
    return load_catalog("mini")


def _option_values(product: dict[str, Any]) -> dict[str, list[str]]:
    """Option name -> values, lower-cased as the loader and the instructions write them."""
    options = product["customization_options"] or {}
    return {name.lower(): [c["value"].lower() for c in contents] for name, contents in options.items()}


def test_regenerating_gives_the_committed_files_byte_for_byte(tmp_path: Path) -> None:
    subprocess.run([sys.executable, str(GENERATOR), "--out", str(tmp_path)], check=True, capture_output=True)
    for name in FILES:
        assert (tmp_path / name).read_bytes() == (MINI_DIR / name).read_bytes(), f"{name} differs"


def test_files_stay_small() -> None:
    assert sum((MINI_DIR / name).stat().st_size for name in FILES) < 1_500_000


def test_497_products_with_unique_amazon_like_asins_over_8_categories(products: list[dict[str, Any]]) -> None:
    asins = [p["asin"] for p in products]
    assert len(products) == 497
    assert len(set(asins)) == 497
    assert all(ASIN.fullmatch(a) for a in asins)
    assert {p["category"] for p in products} == CATEGORIES
    assert min(Counter(p["category"] for p in products).values()) >= 60


def test_products_are_in_the_official_raw_format(products: list[dict[str, Any]], webshop_1k: Path) -> None:
    real = json.loads((webshop_1k / "items_shuffle_1000.json").read_text(encoding="utf-8"))
    real_keys = {k for p in real for k in p} - {"model"}  # "model" is on some real products only
    assert real_keys == PRODUCT_KEYS
    for p in products:
        assert set(p) == PRODUCT_KEYS, p["asin"]
        assert PRICE.fullmatch(p["pricing"]), p["pricing"]
        assert 3 <= len(p["small_description"]) <= 6
        assert all(isinstance(b, str) and b for b in p["small_description"])
        assert p["images"] and all(isinstance(i, str) for i in p["images"])
        assert len(p["product_category"].split(" › ")) >= 3
        assert p["query"] == p["query"].lower().strip()
        assert isinstance(p["page"], int)
        assert p["average_rating"] == "" or 1 <= p["average_rating"] <= 5
        options = p["customization_options"]
        if options == "":
            continue
        for contents in options.values():
            assert contents and all(set(c) <= {"value", "image"} and "value" in c for c in contents)
            values = [c["value"].lower() for c in contents]
            assert len(values) == len(set(values))
            assert all("/" not in v for v in values)  # the loader would rewrite it to " | "


def test_some_products_have_no_options_and_some_a_price_range(products: list[dict[str, Any]]) -> None:
    assert any(p["customization_options"] == "" for p in products)
    assert any(" - " in p["pricing"] for p in products)


def test_attribute_file_is_in_the_official_format(
    products: list[dict[str, Any]], attributes: dict[str, Any]
) -> None:
    assert list(attributes) == [p["asin"] for p in products]
    for entry in attributes.values():
        assert set(entry) == {"attributes", "instruction", "instruction_attributes"}
        assert 2 <= len(entry["attributes"]) <= 5
        assert len(set(entry["attributes"])) == len(entry["attributes"])
        assert entry["instruction"].startswith("Find me ")
        assert sorted(entry["instruction_attributes"]) == sorted(entry["attributes"])


def test_human_instructions_ask_only_for_what_their_product_has(
    products: list[dict[str, Any]], attributes: dict[str, Any], human: dict[str, list[dict[str, Any]]]
) -> None:
    by_asin = {p["asin"]: p for p in products}
    assert set(human) == set(by_asin)
    entries = [e for es in human.values() for e in es]
    assert 700 <= len(entries) <= 900
    assert len({e["instruction"] for e in entries}) == len(entries)
    for asin, es in human.items():
        assert 1 <= len(es) <= 2
        for e in es:
            assert set(e) == HUMAN_KEYS
            assert e["asin"] == asin
            assert e["instruction"] == e["instruction"].lower()
            assert "price" not in e["instruction"]  # the goal builder appends the price limit
            assert e["attributes"] == attributes[asin]["attributes"]
            assert 1 <= len(e["instruction_attributes"]) <= 3
            assert set(e["instruction_attributes"]) <= set(e["attributes"])
            options = _option_values(by_asin[asin])
            assert len(e["instruction_options"]) <= 3
            names = []
            for value in e["instruction_options"]:
                owners = [name for name, values in options.items() if value in values]
                assert len(owners) == 1, f"{asin}: {value!r} is not the value of exactly one option"
                names += owners
            assert len(names) == len(set(names)), f"{asin}: two values of one option"
            wanted = [f"{n}: {v}" for n, v in zip(names, e["instruction_options"], strict=True)]
            assert e["options"] == (wanted or [""])


def test_human_instructions_match_the_real_files_structure(
    human: dict[str, list[dict[str, Any]]], webshop_1k_human: Path
) -> None:
    real = json.loads(webshop_1k_human.read_text(encoding="utf-8"))
    assert {k for es in real.values() for e in es for k in e} == HUMAN_KEYS
    assert {k for es in human.values() for e in es for k in e} == HUMAN_KEYS


def test_every_price_leaves_room_for_a_price_limit(catalog: Catalog) -> None:
    assert max(max(p.pricing) for p in catalog) < 900
    for goal in build_goals(catalog, "human"):
        assert goal.price_upper < NO_PRICE_LIMIT
        assert goal.instruction_text.endswith(f", and price lower than {goal.price_upper:.2f} dollars")


def test_loader_reads_every_product_and_instruction(catalog: Catalog, human: dict[str, Any]) -> None:
    assert catalog.name == "mini"
    assert len(catalog) == 497
    assert sum(len(v) for v in catalog.human_instructions.values()) == sum(len(v) for v in human.values())
    assert len(catalog.synthetic_instructions) == 497
    assert all("DUMMY_ATTR" not in p.attributes for p in catalog)


def _purchase(catalog: Catalog, goal: Goal) -> dict[str, str]:
    """The options a buyer clicks: each goal option under the option name that offers it."""
    product = catalog[goal.asin]
    chosen: dict[str, str] = {}
    for option in goal.goal_options:
        if isinstance(option, tuple):
            name, value = option
        else:
            value = option
            name = next(n for n, values in product.options.items() if value in values)
        chosen[name] = value
    return chosen


@pytest.mark.parametrize("source", ["human", "synthetic"])
def test_buying_the_target_with_the_goal_options_earns_full_reward(catalog: Catalog, source: str) -> None:
    prices = product_prices(catalog)
    failures = []
    for goal in build_goals(catalog, source):  # type: ignore[arg-type]
        breakdown = original_reward(catalog[goal.asin], goal, prices[goal.asin], _purchase(catalog, goal))
        if binary_reward(breakdown) != 1.0:
            failures.append((goal.instruction_text, breakdown.as_dict()))
    assert not failures, failures[:5]


# rank-bm25 is pure Python: its 5,714 synthetic searches would take ~10 s, the human ones do.
@pytest.mark.parametrize(
    ("source", "engine_name"), [("human", "bm25s"), ("synthetic", "bm25s"), ("human", "rank_bm25")]
)
def test_searching_the_instruction_finds_the_target_in_the_top_10(
    catalog: Catalog, source: str, engine_name: str
) -> None:
    if engine_name == "rank_bm25":
        pytest.importorskip("rank_bm25")
    engine = build_engine(catalog, engine_name)
    misses = []
    for goal in build_goals(catalog, source):  # type: ignore[arg-type]
        hits = engine.search(goal.instruction_text, k=TOP_K)
        if goal.asin not in hits:
            misses.append(goal.instruction_text)
    assert not misses, misses[:5]


def test_search_is_needed_and_choice_matters(catalog: Catalog) -> None:
    """The target is often but not always the first hit: same-type products compete."""
    engine = build_engine(catalog, "bm25s")
    goals = build_goals(catalog, "human")
    first = sum(engine.search(g.instruction_text, k=1) == [g.asin] for g in goals) / len(goals)
    assert 0.3 < first < 0.9
