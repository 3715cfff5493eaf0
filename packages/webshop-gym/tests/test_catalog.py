"""The catalogue loader against the original loader's output on the real 1k products."""

from __future__ import annotations

import json
import os
import pickle
import shutil
from pathlib import Path
from typing import Any

import pytest

from webshop_gym.data import catalog as catalog_module
from webshop_gym.data.catalog import load_catalog, load_products
from webshop_gym.data.locations import OFFICIAL_SETS
from webshop_gym.data.model import Catalog, HumanInstruction, Product, SyntheticInstruction

# Product field -> how to read the same value from the original loader's product dict.
ORACLE_FIELDS: dict[str, Any] = {
    "asin": lambda p: p["asin"],
    "name": lambda p: p["name"],
    "title": lambda p: p["Title"],
    "description": lambda p: p["Description"],
    "bullet_points": lambda p: tuple(p["BulletPoints"]),
    "price": lambda p: p["Price"],
    "pricing": lambda p: tuple(p["pricing"]),
    # Lists of pairs, so that the order of option names is compared too.
    "options": lambda p: [(k, tuple(v)) for k, v in p["options"].items()],
    "option_to_image": lambda p: list(p["option_to_image"].items()),
    "attributes": lambda p: tuple(p["Attributes"]),
    "category": lambda p: p["category"],
    "product_category": lambda p: p["product_category"],
    "query": lambda p: p["query"],
    "main_image": lambda p: p["MainImage"],
    "rating": lambda p: p["Rating"],
    "reviews": lambda p: tuple(p["Reviews"]),
}


def _ours(product: Product, name: str) -> Any:
    value = getattr(product, name)
    return list(value.items()) if isinstance(value, dict) else value


@pytest.fixture(scope="module")
def reference(webshop_1k_references: Path) -> list[dict[str, Any]]:
    with (webshop_1k_references / "reference_loaded_products_1000.json").open() as f:
        return json.load(f)


@pytest.fixture(scope="module")
def real(webshop_1k: Path) -> Catalog:
    return load_catalog(webshop_1k)


def test_products_in_the_original_order(real: Catalog, reference: list[dict[str, Any]]) -> None:
    assert len(real) == 1000
    assert [p.asin for p in real] == [p["asin"] for p in reference]


@pytest.mark.parametrize("field_name", sorted(ORACLE_FIELDS))
def test_every_product_matches_the_original_loader(
    real: Catalog, reference: list[dict[str, Any]], field_name: str
) -> None:
    read = ORACLE_FIELDS[field_name]
    mismatches = [
        (ours.asin, _ours(ours, field_name), read(theirs))
        for ours, theirs in zip(real.products, reference, strict=True)
        if _ours(ours, field_name) != read(theirs)
    ]
    assert mismatches == []


def test_price_ranges_keep_low_and_high(real: Catalog) -> None:
    ranged = [p for p in real if len(p.pricing) == 2]
    assert len(ranged) == 93
    for product in ranged:
        low, high = product.pricing
        assert product.price == f"${low} to ${high}"


def test_human_instructions_match_the_original(real: Catalog, reference: list[dict[str, Any]]) -> None:
    expected = {
        p["asin"]: tuple(
            HumanInstruction(
                e["instruction"],
                tuple(e["instruction_attributes"]),
                tuple(e["instruction_options"]),
            )
            for e in p["instructions"]
        )
        for p in reference
        if "instructions" in p
    }
    assert len(expected) == 13
    assert real.human_instructions == expected


def test_synthetic_instructions_come_from_the_attribute_file(real: Catalog, webshop_1k: Path) -> None:
    with (webshop_1k / "items_ins_v2_1000.json").open() as f:
        attributes = json.load(f)
    expected = {
        asin: SyntheticInstruction(entry["instruction"], tuple(entry["instruction_attributes"]))
        for asin, entry in attributes.items()
        if "instruction" in entry
    }
    assert len(expected) == 415
    assert real.synthetic_instructions == expected


def test_catalog_lookup(real: Catalog) -> None:
    first = real.products[0]
    assert real.get(first.asin) is first
    assert real[first.asin] is first
    assert first.asin in real
    assert "NOT-AN-ASIN" not in real
    assert list(real)[:3] == list(real.products[:3])
    assert real.name == "webshop-1k"
    with pytest.raises(KeyError):
        real.get("NOT-AN-ASIN")


def _copy_1k(webshop_1k: Path, target: Path) -> Path:
    target.mkdir()
    for name in ("items_shuffle_1000.json", "items_ins_v2_1000.json"):
        shutil.copyfile(webshop_1k / name, target / name)
    # Under the subset's name, whichever human file the 1k folder has (the full one or the subset).
    shutil.copyfile(OFFICIAL_SETS["1k"].human_file(webshop_1k), target / "items_human_ins_1000.json")
    return target


def test_load_catalog_shares_one_copy_until_a_file_changes(webshop_1k: Path, tmp_path: Path) -> None:
    directory = _copy_1k(webshop_1k, tmp_path / "data")
    first = load_catalog(directory)
    assert load_catalog(str(directory)) is first
    attributes = directory / "items_ins_v2_1000.json"
    stat = attributes.stat()
    os.utime(attributes, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000_000))
    reloaded = load_catalog(directory)
    assert reloaded is not first
    assert [p.asin for p in reloaded] == [p.asin for p in first]


def test_human_instruction_file_is_optional(webshop_1k: Path, tmp_path: Path) -> None:
    directory = _copy_1k(webshop_1k, tmp_path / "data")
    (directory / "items_human_ins_1000.json").unlink()
    loaded = load_catalog(directory)
    assert len(loaded) == 1000
    assert loaded.human_instructions == {}
    assert len(loaded.synthetic_instructions) == 415


# --- cleaning rules on small hand-written files ------------------------------------


def _raw(asin: str, **overrides: Any) -> dict[str, Any]:
    product = {
        "asin": asin,
        "name": f"Product {asin}",
        "full_description": "Some Description.",
        "small_description": ["First Bullet", "Second"],
        "pricing": "$10.99",
        "images": ["https://img/main.jpg", "https://img/2.jpg"],
        "product_category": "A › B › C",
        "category": "beauty",
        "query": "  Face Cream ",
        "customization_options": "",
    }
    product.update(overrides)
    return product


def _write(directory: Path, products: Any, attributes: Any, human: Any = None) -> Path:
    directory.mkdir(exist_ok=True)
    (directory / "items_shuffle_t.json").write_text(json.dumps(products))
    (directory / "items_ins_v2_t.json").write_text(json.dumps(attributes))
    if human is not None:
        (directory / "items_human_ins_t.json").write_text(json.dumps(human))
    return directory


def _load(directory: Path) -> Catalog:
    human = directory / "items_human_ins_t.json"
    return load_products(
        directory / "items_shuffle_t.json",
        directory / "items_ins_v2_t.json",
        human if human.exists() else None,
    )


def test_skips_bad_and_repeated_asins(tmp_path: Path) -> None:
    products = [
        _raw("A1", name="first"),
        _raw("nan"),
        _raw("TOOLONGASIN1"),
        _raw("A1", name="second"),
        _raw("A2"),
    ]
    loaded = _load(_write(tmp_path, products, {}))
    assert [p.asin for p in loaded] == ["A1", "A2"]
    assert loaded["A1"].name == "first"


def test_cleans_fields_like_the_original(tmp_path: Path) -> None:
    options = {
        "Color": [
            {"value": " Navy/Blue ", "image": "https://img/navy.jpg"},
            {"value": "RED"},
            {"value": "red"},
        ],
        "Style": None,
        "Size": [{"value": "X-Large", "image": None}],
    }
    products = [
        _raw("A1", customization_options=options, pricing="$1,299.00 - $1,499.50"),
        _raw("A2", small_description="One Bullet", pricing="", images=[]),
    ]
    attributes = {"A1": {"attributes": ["face cream"]}, "A2": {}}
    loaded = _load(_write(tmp_path, products, attributes))
    first, second = loaded.products
    assert first.options == {"color": ("navy | blue", "red", "red"), "size": ("x-large",)}
    assert first.option_to_image == {
        "navy | blue": "https://img/navy.jpg",
        "red": None,
        "x-large": None,
    }
    assert first.pricing == (1299.0, 1499.5)
    assert first.price == "$1299.0 to $1499.5"
    assert first.title == first.name == "Product A1"
    assert first.bullet_points == ("First Bullet", "Second")
    assert first.query == "face cream"
    assert first.main_image == "https://img/main.jpg"
    assert first.attributes == ("face cream",)
    assert first.rating == "N.A." and first.reviews == ()
    assert second.bullet_points == ("One Bullet",)
    assert second.pricing == (100.0,) and second.price == "$100.0"
    assert second.attributes == ("DUMMY_ATTR",)
    assert second.main_image == ""


def test_three_prices_keep_the_first_two(tmp_path: Path) -> None:
    loaded = _load(_write(tmp_path, [_raw("A1", pricing="$5 - $7.5 - $9")], {}))
    assert loaded["A1"].pricing == (5.0, 7.5)
    assert loaded["A1"].price == "$5.0 to $7.5"


def test_instructions_only_for_products_in_the_catalogue(tmp_path: Path) -> None:
    attributes = {
        "A1": {"attributes": ["x"], "instruction": "Find x", "instruction_attributes": ["x"]},
        "A2": {"attributes": ["y"]},
        "ZZ": {"attributes": [], "instruction": "Find z", "instruction_attributes": ["z"]},
    }
    human = {
        "A2": [{"instruction": "i want y.", "instruction_attributes": ["y"], "instruction_options": []}],
        "ZZ": [{"instruction": "i want z", "instruction_attributes": [], "instruction_options": []}],
    }
    loaded = _load(_write(tmp_path, [_raw("A1"), _raw("A2")], attributes, human))
    assert loaded.synthetic_instructions == {"A1": SyntheticInstruction("Find x", ("x",))}
    assert loaded.human_instructions == {"A2": (HumanInstruction("i want y.", ("y",), ()),)}


# --- errors ------------------------------------------------------------------------


def test_missing_directory_says_how_to_get_data(tmp_path: Path) -> None:
    missing = tmp_path / "nowhere"
    with pytest.raises(FileNotFoundError) as info:
        load_catalog(missing)
    message = str(info.value)
    assert str(missing) in message
    assert "webshop-gym data download" in message
    assert "webshop-1k" in message


def test_missing_attribute_file_is_named(tmp_path: Path) -> None:
    (tmp_path / "items_shuffle_1000.json").write_text("[]")
    with pytest.raises(FileNotFoundError, match=r"items_ins_v2\*\.json"):
        load_catalog(tmp_path)


def test_missing_file_in_load_products_is_named(tmp_path: Path) -> None:
    products = tmp_path / "items_shuffle_x.json"
    products.write_text("[]")
    with pytest.raises(FileNotFoundError, match=r"items_ins_v2_x\.json") as info:
        load_products(products, tmp_path / "items_ins_v2_x.json")
    assert "webshop-gym data download" in str(info.value)


def test_truncated_json_names_the_file(webshop_1k: Path, tmp_path: Path) -> None:
    data = (webshop_1k / "items_shuffle_1000.json").read_bytes()
    _write(tmp_path, [], {})
    (tmp_path / "items_shuffle_t.json").write_bytes(data[: len(data) // 2])
    with pytest.raises(ValueError, match=r"items_shuffle_t\.json") as info:
        load_catalog(tmp_path)
    assert "not valid JSON" in str(info.value)
    assert "truncated" in str(info.value)


def test_corrupt_json_in_attribute_file(tmp_path: Path) -> None:
    _write(tmp_path, [_raw("A1")], {})
    (tmp_path / "items_ins_v2_t.json").write_text('{"A1": {"attributes": [}')
    with pytest.raises(ValueError, match=r"items_ins_v2_t\.json: not valid JSON"):
        _load(tmp_path)


@pytest.mark.parametrize(
    ("products", "attributes", "human", "expected"),
    [
        ({"A1": {}}, {}, None, r"items_shuffle_t\.json: expected a list of products"),
        ([_raw("A1")], [], None, r"items_ins_v2_t\.json: expected an object"),
        (["A1"], {}, None, r"product 0: expected an object"),
        ([{"asin": "A1"}], {}, None, r"product 0: missing key\(s\) name, full_description"),
        ([_raw("A1", pricing="$abc")], {}, None, r"product 0 \(A1\): cannot read a price"),
        ([_raw("A1", pricing=12)], {}, None, r"'pricing' must be a string"),
        ([_raw("A1", customization_options={"c": [{"v": 1}]})], {}, None, "customization"),
        ([_raw("A1", query=None)], {}, None, r"product 0 \(A1\): a field has the wrong type"),
        ([_raw("A1")], {}, [], r"items_human_ins_t\.json: expected an object"),
        ([_raw("A1")], {}, {"A1": [{"instruction": "x"}]}, r"missing key\(s\) instruction_attr"),
    ],
)
def test_wrong_structure_is_a_value_error(
    tmp_path: Path, products: Any, attributes: Any, human: Any, expected: str
) -> None:
    with pytest.raises(ValueError, match=expected):
        _load(_write(tmp_path, products, attributes, human))


def test_ambiguous_directory_is_refused(tmp_path: Path) -> None:
    _write(tmp_path, [], {})
    (tmp_path / "items_shuffle_other.json").write_text("[]")
    with pytest.raises(ValueError, match="several items_shuffle"):
        load_catalog(tmp_path)


def test_a_file_instead_of_a_directory(tmp_path: Path) -> None:
    path = tmp_path / "items_shuffle_1000.json"
    path.write_text("[]")
    with pytest.raises(FileNotFoundError, match="not a directory"):
        load_catalog(path)


def test_mini_without_its_files_says_how_to_get_data(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(catalog_module, "MINI_DIR", tmp_path / "mini")
    with pytest.raises(FileNotFoundError, match="webshop-gym data download"):
        load_catalog("mini")


def test_catalog_pickles(real: Catalog) -> None:
    # Vector envs in subprocesses may carry the catalogue across a pickle.
    copy = pickle.loads(pickle.dumps(real))
    assert copy.products == real.products
    assert copy[real.products[-1].asin] == real.products[-1]
    assert copy.human_instructions == real.human_instructions
    assert repr(copy) == "Catalog(name='webshop-1k', products=1000)"


def test_an_empty_file_is_called_empty(webshop_1k: Path, tmp_path: Path) -> None:
    """Issue 28.17: not "Expecting value at line 1, column 1"."""
    shutil.copy(webshop_1k / "items_ins_v2_1000.json", tmp_path / "items_ins_v2_1000.json")
    for content in ("", "  \n"):
        (tmp_path / "items_shuffle_1000.json").write_text(content)
        with pytest.raises(ValueError, match=r"items_shuffle_1000\.json: the file is empty") as info:
            load_catalog(tmp_path)
        assert "Expecting value" not in str(info.value)


def test_a_missing_folder_says_what_to_run(tmp_path: Path) -> None:
    """Issue 28.17: not "...or a prepared store, which does not exist"."""
    import gymnasium as gym

    import webshop_gym  # noqa: F401

    missing = tmp_path / "nowhere"
    with pytest.raises(FileNotFoundError) as info:
        gym.make("WebShop-Mini-Text-v0", catalog=str(missing))
    message = str(info.value)
    assert f"{missing} does not exist" in message and "which does not exist" not in message
    assert "webshop-gym data prepare --from FOLDER" in message
    assert "webshop-gym data download --set 1k" in message
