"""Products: the loaders for WebShop's official file formats.

The official data comes as three JSON files:

- ``items_shuffle*.json``: a list of raw products (``asin``, ``name``, ``pricing``,
  ``customization_options``, ...);
- ``items_ins_v2*.json``: ``{asin: {"attributes": [...], "instruction"?: str,
  "instruction_attributes"?: [...]}}``, the product attributes and the templated
  (synthetic) instructions;
- ``items_human_ins*.json`` (optional): ``{asin: [{"instruction": str,
  "instruction_attributes": [...], "instruction_options": [...], ...}, ...]}``, the
  instructions people wrote.

`load_products` cleans them exactly as the original WebShop loader does, so titles,
prices, options and attributes read the same as in every published WebShop result.
`load_catalog` finds the files in a directory (or the bundled ``"mini"`` catalogue) and
caches the result per file version, so many environments in one process share one
catalogue.
"""

from __future__ import annotations

import functools
import json
import os
import re
from pathlib import Path
from typing import Any

from webshop_gym.data import store
from webshop_gym.data.model import (
    BaseCatalog,
    Catalog,
    HumanInstruction,
    Product,
    SyntheticInstruction,
)

__all__ = ["MINI_DIR", "load_catalog", "load_products"]

MINI_DIR = Path(__file__).resolve().parent / "mini"

# The original gives products without a price this price, and their Rating when no
# review file holds one.
DEFAULT_PRICE = 100.0
NO_RATING = "N.A."
# Products without an entry in the attribute file get this single attribute.
DUMMY_ATTRIBUTE = "DUMMY_ATTR"

_GET_DATA_HINT = (
    "Get the official WebShop data with `webshop-gym data download`, or pass a directory "
    "that holds the official files (for example ../shared/webshop-1k)."
)
_NOT_PRICE_CHARS = re.compile(r"[^\d.]")


def _read_json(path: Path, what: str) -> Any:
    """Parse one data file, turning every failure into an error that names the file."""
    try:
        with path.open("rb") as f:
            raw = f.read()
    except FileNotFoundError:
        raise FileNotFoundError(f"WebShop {what} not found: {path}. {_GET_DATA_HINT}") from None
    if not raw.strip():
        raise ValueError(
            f"{path}: the file is empty ({len(raw)} bytes): an interrupted download or copy? "
            f"Fetch it again. {_GET_DATA_HINT}"
        )
    try:
        return json.loads(raw)
    except json.JSONDecodeError as exc:
        raise ValueError(
            f"{path}: not valid JSON ({exc.msg} at line {exc.lineno}, column {exc.colno}); "
            f"the file is corrupt or truncated. {_GET_DATA_HINT}"
        ) from None
    except UnicodeDecodeError as exc:
        raise ValueError(f"{path}: not UTF-8 text ({exc.reason}). {_GET_DATA_HINT}") from None


def _parse_pricing(pricing: Any, where: str) -> tuple[tuple[float, ...], str]:
    """The price floats and the display string, as the original derives them.

    Every ``$`` starts one amount; characters other than digits and dots are dropped
    (``"$1,299.00 - $1,499.00"`` -> 1299.0 and 1499.0). A range keeps its first two
    amounts. The display string prints the floats with Python's repr (``$877.8``).
    """
    if not pricing:
        return (DEFAULT_PRICE,), f"${DEFAULT_PRICE}"
    if not isinstance(pricing, str):
        raise ValueError(f"{where}: 'pricing' must be a string like '$9.99', got {pricing!r}")
    amounts = []
    for part in pricing.split("$")[1:]:
        digits = _NOT_PRICE_CHARS.sub("", part)
        try:
            amounts.append(float(digits))
        except ValueError:
            raise ValueError(f"{where}: cannot read a price from {pricing!r}") from None
    if not amounts:
        raise ValueError(f"{where}: cannot read a price from {pricing!r}")
    if len(amounts) == 1:
        return (amounts[0],), f"${amounts[0]}"
    return (amounts[0], amounts[1]), f"${amounts[0]} to ${amounts[1]}"


def _parse_options(
    customization_options: Any, where: str
) -> tuple[dict[str, tuple[str, ...]], dict[str, str | None]]:
    """Option names and values, cleaned as the original cleans them.

    Names and values are lower-cased, values stripped and ``/`` becomes ``" | "``.
    Values are kept in page order with repeats (the original does not deduplicate);
    names that collide after lower-casing keep the first position and the last values.
    """
    options: dict[str, tuple[str, ...]] = {}
    option_to_image: dict[str, str | None] = {}
    if not customization_options:
        return options, option_to_image
    if not isinstance(customization_options, dict):
        raise ValueError(f"{where}: 'customization_options' must be an object or empty")
    for option_name, contents in customization_options.items():
        if contents is None:
            continue
        values = []
        for content in contents:
            value = content["value"].strip().replace("/", " | ").lower()
            values.append(value)
            option_to_image[value] = content.get("image")
        options[option_name.lower()] = tuple(values)
    return options, option_to_image


def _require(mapping: Any, keys: tuple[str, ...], where: str) -> None:
    if not isinstance(mapping, dict):
        raise ValueError(f"{where}: expected an object, got {type(mapping).__name__}")
    missing = [k for k in keys if k not in mapping]
    if missing:
        raise ValueError(f"{where}: missing key(s) {', '.join(missing)}")


_PRODUCT_KEYS = (
    "asin",
    "name",
    "full_description",
    "small_description",
    "pricing",
    "images",
    "category",
    "query",
    "product_category",
    "customization_options",
)


def _clean_product(raw: dict[str, Any], attributes: dict[str, Any], where: str) -> Product:
    asin = raw["asin"]
    small_description = raw["small_description"]
    if isinstance(small_description, list):
        bullet_points = tuple(small_description)
    elif small_description is None:
        bullet_points = ()
    else:
        bullet_points = (small_description,)
    pricing, price = _parse_pricing(raw["pricing"], where)
    try:
        options, option_to_image = _parse_options(raw["customization_options"], where)
    except (KeyError, TypeError, AttributeError):
        raise ValueError(
            f"{where}: 'customization_options' must map names to lists of {{'value': ...}}"
        ) from None
    entry = attributes.get(asin)
    if isinstance(entry, dict) and "attributes" in entry:
        product_attributes = tuple(entry["attributes"])
    else:
        product_attributes = (DUMMY_ATTRIBUTE,)
    images = raw["images"]
    return Product(
        asin=asin,
        name=raw["name"],
        title=raw["name"],
        description=raw["full_description"] or "",
        bullet_points=bullet_points,
        price=price,
        pricing=pricing,
        options=options,
        option_to_image=option_to_image,
        attributes=product_attributes,
        category=raw["category"],
        product_category=raw["product_category"],
        # The original compares queries after this normalisation (r_type's query match).
        query=raw["query"].lower().strip(),
        main_image=images[0] if images else "",
        # Ratings and reviews come from a review file the official set-up never ships,
        # so every product shows "N.A." and no reviews, as in the original.
        rating=NO_RATING,
        reviews=(),
    )


def _human_instructions(data: Any, path: Path) -> dict[str, tuple[HumanInstruction, ...]]:
    if not isinstance(data, dict):
        raise ValueError(f"{path}: expected an object mapping asins to lists of instructions")
    result: dict[str, tuple[HumanInstruction, ...]] = {}
    for asin, entries in data.items():
        if not isinstance(entries, list):
            raise ValueError(f"{path}: entry {asin!r} must be a list of instructions")
        cleaned = []
        for j, entry in enumerate(entries):
            where = f"{path}: entry {asin!r}[{j}]"
            _require(entry, ("instruction", "instruction_attributes", "instruction_options"), where)
            cleaned.append(
                HumanInstruction(
                    instruction=entry["instruction"],
                    instruction_attributes=tuple(entry["instruction_attributes"]),
                    instruction_options=tuple(entry["instruction_options"]),
                )
            )
        result[asin] = tuple(cleaned)
    return result


def load_products(
    products_path: str | os.PathLike[str],
    attributes_path: str | os.PathLike[str],
    human_instructions_path: str | os.PathLike[str] | None = None,
    *,
    name: str | None = None,
) -> Catalog:
    """Load a catalogue from the official files, cleaned as the original loader does.

    Products keep file order. As in the original, products whose asin is ``"nan"`` or
    longer than 10 characters are skipped, and of repeated asins only the first counts.

    Args:
        products_path: ``items_shuffle*.json``.
        attributes_path: ``items_ins_v2*.json``.
        human_instructions_path: ``items_human_ins*.json``; without it the catalogue has
            no human instructions.
        name: The catalogue's name; defaults to the products file's directory name.

    Returns:
        The catalogue.

    Raises:
        FileNotFoundError: A file does not exist.
        ValueError: A file is not valid JSON or not in the official structure.
    """
    products_path = Path(products_path)
    attributes_path = Path(attributes_path)
    raw_products = _read_json(products_path, "product file (items_shuffle*.json)")
    attributes = _read_json(attributes_path, "attribute file (items_ins_v2*.json)")
    human: dict[str, tuple[HumanInstruction, ...]] = {}
    if human_instructions_path is not None:
        human_path = Path(human_instructions_path)
        human_data = _read_json(human_path, "human-instruction file (items_human_ins*.json)")
        human = _human_instructions(human_data, human_path)

    if not isinstance(raw_products, list):
        raise ValueError(f"{products_path}: expected a list of products")
    if not isinstance(attributes, dict):
        raise ValueError(f"{attributes_path}: expected an object mapping asins to attributes")

    products: list[Product] = []
    seen: set[str] = set()
    for i, raw in enumerate(raw_products):
        where = f"{products_path}: product {i}"
        _require(raw, _PRODUCT_KEYS, where)
        asin = raw["asin"]
        if not isinstance(asin, str) or asin == "nan" or len(asin) > 10 or asin in seen:
            continue
        seen.add(asin)
        try:
            products.append(_clean_product(raw, attributes, f"{where} ({asin})"))
        except (AttributeError, TypeError) as exc:
            raise ValueError(f"{where} ({asin}): a field has the wrong type ({exc})") from None

    synthetic: dict[str, SyntheticInstruction] = {}
    for product in products:
        entry = attributes.get(product.asin)
        if isinstance(entry, dict) and isinstance(entry.get("instruction"), str):
            synthetic[product.asin] = SyntheticInstruction(
                instruction=entry["instruction"],
                instruction_attributes=tuple(entry.get("instruction_attributes") or ()),
            )
    # Only instructions of products in the catalogue can become goals.
    human = {asin: entries for asin, entries in human.items() if asin in seen}
    return Catalog(
        name=name if name is not None else products_path.resolve().parent.name,
        products=tuple(products),
        human_instructions=human,
        synthetic_instructions=synthetic,
    )


def _find_file(directory: Path, pattern: str) -> Path | None:
    """The one file in ``directory`` matching ``pattern``, or None when there is none."""
    matches = sorted(directory.glob(pattern))
    if len(matches) > 1:
        names = ", ".join(m.name for m in matches)
        raise ValueError(
            f"{directory} holds several {pattern} files ({names}); keep one per directory "
            "or call webshop_gym.data.catalog.load_products with explicit paths."
        )
    return matches[0] if matches else None


def _require_file(directory: Path, pattern: str) -> Path:
    path = _find_file(directory, pattern)
    if path is None:
        raise FileNotFoundError(
            f"No {pattern} file in {directory}: a WebShop data directory needs "
            f"items_shuffle*.json and items_ins_v2*.json. {_GET_DATA_HINT}"
        )
    return path


def _file_version(path: Path) -> tuple[str, int, int]:
    stat = path.stat()
    return (str(path), stat.st_mtime_ns, stat.st_size)


@functools.lru_cache(maxsize=8)
def _load_cached(
    name: str,
    products: tuple[str, int, int],
    attributes: tuple[str, int, int],
    human: tuple[str, int, int] | None,
) -> Catalog:
    # The mtimes and sizes are in the key only so that an edited file loads afresh.
    return load_products(products[0], attributes[0], human[0] if human else None, name=name)


def load_catalog(source: str | os.PathLike[str]) -> BaseCatalog:
    """Load a catalogue by name or directory, sharing one copy per file version.

    Args:
        source: ``"mini"`` for the bundled 497-product catalogue, a directory that
            holds ``items_shuffle*.json``, ``items_ins_v2*.json`` and optionally
            ``items_human_ins*.json`` (one of each), or a store that
            ``webshop-gym data prepare`` wrote (opened lazily, see `webshop_gym.data.store`).

    Returns:
        The catalogue; the same object for every call while the files are unchanged.

    Raises:
        FileNotFoundError: The directory or a required file is missing.
        ValueError: A file is corrupt, not in the official structure, or ambiguous.
    """
    if isinstance(source, str) and source == "mini":
        directory, name = MINI_DIR, "mini"
    else:
        directory = Path(source).expanduser().resolve()
        name = directory.name
    if store.is_store(directory):
        return store.open_store(directory)
    if not directory.is_dir():
        if directory.exists():
            raise FileNotFoundError(
                f"{directory} is not a directory; load_catalog wants the directory that "
                f"holds the WebShop files. {_GET_DATA_HINT}"
            )
        raise FileNotFoundError(f"WebShop data directory not found: {directory}. {_GET_DATA_HINT}")
    products = _require_file(directory, "items_shuffle*.json")
    attributes = _require_file(directory, "items_ins_v2*.json")
    human = _find_file(directory, "items_human_ins*.json")
    return _load_cached(
        name,
        _file_version(products),
        _file_version(attributes),
        _file_version(human) if human is not None else None,
    )
