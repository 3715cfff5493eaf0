"""A synthetic WebShop catalogue of any size, in the official raw formats, shaped like the real data.

The real full catalogue (1,181,436 products, several GB) is not on every machine, yet the
full-scale path (streaming preparation, the on-disk store, the memory-mapped index, start-up
time and memory) must be tested and benchmarked. This module writes a stand-in:
``items_shuffle.json``, ``items_ins_v2.json`` and ``items_human_ins.json`` with exactly the
official structure, whose field sizes follow the distributions measured on the official
1,000-product set (`REAL_1K_PROFILE`, recomputed from the files by `measure_profile`; a test
checks both), and whose vocabulary grows with the number of products as real text does
(Heaps' law fitted to the 1k set's search documents: about 12,000 index terms over its
107,000 tokens, extrapolating to roughly a million terms at 1.18M products).

Measured on the official 1k set (`python -m webshop_gym.data.synthetic --measure DIR`):
raw products 2.7 KB of JSON, cleaned products 2.2 KB (as `Product` fields; the official
loader's records, which keep the raw fields beside the cleaned ones, 4.65 KB); search
documents 124 words (133 word tokens, 107 index terms after stop words and stemming). A
generated 1k catalogue comes within 12% of each (a test checks it). Option combinations
are drawn group by group, so products with many combinations are rarer than in the real
data: 5.2 synthetic goals per product against 6.9 (5.8M at full scale).

The text is pseudo-words (``"bokat"``, ``"mirun"``) drawn from a Zipf-like law, mixed with
the English stop words real titles are full of, so search and reward code see realistic
token counts; it does not read like English. A human instruction is generated for the
same share of products as in the real data, so a 1,181,436-product catalogue has exactly
12,087 human goals, like the real one.

Example:
    >>> import tempfile
    >>> out = write_catalog(tempfile.mkdtemp(), n_products=50, seed=1, progress=False)
    >>> sorted(p.name for p in out.iterdir())
    ['items_human_ins.json', 'items_ins_v2.json', 'items_shuffle.json']
"""

from __future__ import annotations

import argparse
import bisect
import dataclasses
import json
import math
import os
import statistics
from collections import Counter
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from webshop_gym.data.catalog import load_products
from webshop_gym.search.documents import search_document

__all__ = [
    "FULL_CATALOGUE_PRODUCTS",
    "FULL_HUMAN_GOALS",
    "REAL_1K_PROFILE",
    "measure_profile",
    "write_catalog",
]

FULL_CATALOGUE_PRODUCTS = 1_181_436
FULL_HUMAN_GOALS = 12_087

# Percentile points (in %) at which numeric fields are summarised; sampling interpolates
# between them, so the extra points in the tail keep long tails long but bounded.
PERCENTILES: tuple[float, ...] = (0, 1, 2, 5, 10, 20, 30, 40, 50, 60, 70, 80, 90, 95, 98, 99, 99.5, 100)

# Measured on the official 1k set by `measure_profile` (a test recomputes it from the files).
# Numeric fields: values at `PERCENTILES`; the rest: shares.
REAL_1K_PROFILE: dict[str, Any] = {
    "name_words": (
        0.0,
        4.0,
        5.0,
        7.0,
        8.0,
        10.0,
        13.0,
        15.0,
        18.0,
        20.0,
        23.0,
        25.0,
        29.0,
        31.0,
        33.0,
        35.0,
        37.0,
        41.0,
    ),
    "description_words": (
        0.0,
        0.0,
        0.0,
        0.0,
        0.0,
        0.0,
        0.0,
        23.6,
        49.0,
        74.0,
        107.0,
        147.0,
        216.1,
        254.1,
        293.02,
        311.01,
        330.02,
        2295.0,
    ),
    "bullet_count": (
        1.0,
        1.0,
        1.0,
        1.0,
        2.0,
        4.0,
        5.0,
        5.0,
        5.0,
        5.0,
        5.0,
        5.0,
        7.0,
        7.0,
        8.0,
        8.0,
        8.0,
        8.0,
    ),
    "bullet_words": (
        0.0,
        0.0,
        1.0,
        2.0,
        3.0,
        6.0,
        10.0,
        15.0,
        20.0,
        25.0,
        32.0,
        39.0,
        51.0,
        65.0,
        77.0,
        86.0,
        232.0,
        449.0,
    ),
    "price": (
        0.01,
        3.77,
        4.93,
        6.69,
        9.0,
        12.97,
        16.21,
        20.85,
        29.23,
        43.24,
        75.0,
        100.0,
        197.62,
        332.68,
        705.1,
        1515.13,
        1998.94,
        4299.99,
    ),
    "price_range_ratio": (
        0.76,
        0.87,
        0.9,
        1.04,
        1.07,
        1.12,
        1.19,
        1.25,
        1.34,
        1.61,
        1.79,
        2.12,
        2.75,
        3.44,
        4.46,
        28.08,
        163.54,
        299.0,
    ),
    "image_count": (1.0, 2.0, 2.0, 2.0, 2.0, 4.0, 5.0, 6.0, 7.0, 8.0, 8.0, 8.0, 8.0, 8.0, 8.0, 8.0, 8.0, 8.0),
    "category_levels": (
        1.0,
        1.0,
        1.0,
        2.95,
        3.0,
        4.0,
        4.0,
        4.0,
        4.0,
        5.0,
        5.0,
        5.0,
        5.0,
        6.0,
        6.0,
        7.0,
        7.0,
        7.0,
    ),
    "query_words": (1.0, 1.0, 1.0, 1.0, 1.0, 2.0, 2.0, 2.0, 2.0, 2.0, 3.0, 3.0, 4.0, 5.0, 5.0, 5.0, 5.0, 6.0),
    "option_groups": (
        1.0,
        1.0,
        1.0,
        1.0,
        1.0,
        1.0,
        1.0,
        1.0,
        1.0,
        2.0,
        2.0,
        2.0,
        2.0,
        2.0,
        3.0,
        3.0,
        3.0,
        4.0,
    ),
    "option_values": (
        2.0,
        2.0,
        2.0,
        2.0,
        2.0,
        2.0,
        3.0,
        3.2,
        4.0,
        5.0,
        6.0,
        7.0,
        10.0,
        14.0,
        26.74,
        30.87,
        41.41,
        45.0,
    ),
    "option_value_words": (
        1.0,
        1.0,
        1.0,
        1.0,
        1.0,
        1.0,
        1.0,
        1.0,
        1.0,
        1.0,
        2.0,
        2.0,
        3.0,
        4.0,
        5.0,
        6.0,
        6.51,
        9.0,
    ),
    "attribute_count": (
        0.0,
        0.0,
        0.0,
        0.0,
        0.0,
        1.0,
        1.0,
        2.0,
        2.0,
        3.0,
        4.0,
        4.0,
        6.0,
        8.0,
        11.02,
        16.0,
        19.01,
        27.0,
    ),
    "instruction_words": (
        7.0,
        7.0,
        7.28,
        8.0,
        8.0,
        9.0,
        10.0,
        10.0,
        11.0,
        12.0,
        13.0,
        14.0,
        16.0,
        19.0,
        21.0,
        23.0,
        23.93,
        36.0,
    ),
    "instruction_attributes": (
        2.0,
        2.0,
        2.0,
        2.0,
        2.0,
        2.0,
        2.0,
        2.0,
        3.0,
        3.0,
        3.0,
        4.0,
        5.0,
        6.0,
        7.0,
        8.0,
        9.0,
        15.0,
    ),
    "share_price_range": 0.093,
    "share_bullets_as_string": 0.016,
    "share_with_options": 0.477,
    "share_null_option_group": 0.152,
    "share_option_value_image": 0.762,
    "share_option_asin_schema": 0.307,
    "share_with_instruction": 0.415,
    "share_with_instruction_if_options": 0.544,
    "share_with_instruction_if_no_options": 0.321,
    "categories": {
        "beauty": 0.238,
        "electronics": 0.229,
        "garden": 0.216,
        "fashion": 0.2,
        "grocery": 0.117,
    },
    "option_names": {
        "color": 0.488,
        "size": 0.414,
        "style": 0.032,
        "flavor name": 0.019,
        "other": 0.018,
        "fit type": 0.018,
        "scent": 0.011,
    },
    "ratings": {
        "float": 0.52,
        "empty": 0.359,
        "int": 0.121,
    },
}

# Lomax law of word ranks, P(rank >= r) = (1 + r / q) ** -alpha, fitted to the 1k set's
# vocabulary growth (5,195 / 7,912 / 11,932 distinct terms after 28k / 56k / 107k tokens).
_RANK_ALPHA = 0.6
_RANK_SCALE = 80.0
# Real titles and descriptions are about 14% stop words ("for", "with", "and", ...).
_STOP_SHARE = 0.14
_STOP_WORDS = ("for", "with", "and", "of", "the", "to", "in", "a", "is", "on", "or", "by")
_CONSONANTS = "bdfgkmnprtvz"
_VOWELS = "aiou"
_FINALS = "dkmnprt"  # no s, e, y or l at the end: Porter stemming keeps such words whole
_SYLLABLES = tuple(c + v for c in _CONSONANTS for v in _VOWELS)
_WORD_TABLE_SIZE = 1 << 20
_CATEGORY_ROOTS = {
    "beauty": "Beauty & Personal Care",
    "electronics": "Electronics",
    "garden": "Home & Kitchen",
    "fashion": "Clothing, Shoes & Jewelry",
    "grocery": "Grocery & Gourmet Food",
}
_OTHER_OPTION_NAMES = ("pattern name", "item package quantity", "material type", "number of items")


def pseudo_word(rank: int) -> str:
    """The word of a frequency rank: short for frequent ranks, unique for every rank.

    Every other rank gets an extra ``h`` syllable (``h`` occurs nowhere else, so words stay
    unique), which brings the mean word length to the real data's 5.5 characters.

    >>> [pseudo_word(r) for r in (0, 1, 2, 47, 48, 1000)]
    ['bad', 'bihad', 'bod', 'zuhut', 'babat', 'kuvam']
    """
    syllables = [_SYLLABLES[rank % len(_SYLLABLES)]]
    rest = rank // len(_SYLLABLES)
    while rest:
        rest -= 1
        syllables.append(_SYLLABLES[rest % len(_SYLLABLES)])
        rest //= len(_SYLLABLES)
    word = "".join(reversed(syllables))
    if rank % 2:
        word += "h" + _VOWELS[(rank // 2) % len(_VOWELS)]
    return word + _FINALS[(rank // 7) % len(_FINALS)]


def _word_table(size: int) -> list[str]:
    """``[pseudo_word(r) for r in range(size)]``, built a hundred times faster.

    The stems of `pseudo_word` count in bijective base 48: all one-syllable stems, then all
    two-syllable ones in lexicographic order, and so on.
    """
    stems: list[str] = []
    level = [""]
    while len(stems) < size:
        level = [stem + syllable for stem in level for syllable in _SYLLABLES]
        stems.extend(level[: size - len(stems)])
    extras = ["h" + vowel for vowel in _VOWELS]
    return [
        stem + (extras[(r // 2) % 4] if r % 2 else "") + _FINALS[(r // 7) % len(_FINALS)]
        for r, stem in enumerate(stems)
    ]


def _image_url(seed: int) -> str:
    """An image URL shaped like Amazon's (an 11-character id)."""
    return f"https://m.media-amazon.com/images/I/{(seed * 2654435761) % (1 << 44):011X}L.jpg"


class _Uniforms:
    """Uniform floats in [0, 1), drawn from the generator in large blocks (a scalar draw costs µs)."""

    def __init__(self, rng: np.random.Generator, block: int = 1 << 16) -> None:
        self.rng = rng
        self.block = block
        self._values: list[float] = []
        self._next = 0

    def __call__(self) -> float:
        if self._next == len(self._values):
            self._values = self.rng.random(self.block).tolist()
            self._next = 0
        value = self._values[self._next]
        self._next += 1
        return value


class _Text:
    """Words by rank from the fitted law, mixed with stop words, drawn in large blocks."""

    def __init__(
        self, rng: np.random.Generator, table_size: int = _WORD_TABLE_SIZE, block: int = 1 << 18
    ) -> None:
        self.rng = rng
        self.block = block
        # Only a cache of the frequent words (rarer ones are made on the fly), so its size
        # changes speed, never the output.
        self.table = np.array(_word_table(table_size), dtype=object)
        self._words: list[str] = []
        self._next = 0

    def _refill(self) -> None:
        u = self.rng.random(self.block)
        ranks = np.floor(_RANK_SCALE * ((1.0 - u) ** (-1.0 / _RANK_ALPHA) - 1.0))
        ranks = np.minimum(ranks, 2.0**50).astype(np.int64)
        frequent = ranks < len(self.table)
        words = np.empty(self.block, dtype=object)
        words[frequent] = self.table[ranks[frequent]]
        for i in np.flatnonzero(~frequent):
            words[i] = pseudo_word(int(ranks[i]))
        stops = self.rng.random(self.block) < _STOP_SHARE
        words[stops] = np.asarray(_STOP_WORDS, dtype=object)[
            self.rng.integers(len(_STOP_WORDS), size=int(stops.sum()))
        ]
        self._words = words.tolist()
        self._next = 0

    def words(self, n: int) -> list[str]:
        taken: list[str] = []
        while len(taken) < n:
            if self._next == len(self._words):
                self._refill()
            stop = min(len(self._words), self._next + n - len(taken))
            taken.extend(self._words[self._next : stop])
            self._next = stop
        return taken

    def sentence(self, n: int, capitalise: bool = False) -> str:
        words = self.words(n)
        if capitalise:
            words = [w if w in _STOP_WORDS else w.capitalize() for w in words]
        return " ".join(words)


class _Sampler:
    """Samples the profile's fields: numbers by interpolating its percentiles."""

    def __init__(self, profile: dict[str, Any], rng: np.random.Generator) -> None:
        self.profile = profile
        self.rng = rng
        self.uniform = _Uniforms(rng)
        self._points = [p / 100.0 for p in PERCENTILES]
        self._cumulative = {}
        for key, value in profile.items():
            if isinstance(value, dict):
                total = sum(value.values())
                running, bounds = 0.0, []
                for share in value.values():
                    running += share / total
                    bounds.append(running)
                self._cumulative[key] = (list(value), bounds)

    def number(self, field: str) -> float:
        u = self.uniform()
        values = self.profile[field]
        i = min(bisect.bisect_right(self._points, u), len(values) - 1)
        low, high = self._points[i - 1], self._points[i]
        return values[i - 1] + (values[i] - values[i - 1]) * (u - low) / (high - low)

    def count(self, field: str) -> int:
        return round(self.number(field))

    def chance(self, field: str) -> bool:
        return self.uniform() < self.profile[field]

    def integer(self, n: int) -> int:
        """Uniform in range(n)."""
        return min(int(self.uniform() * n), n - 1)

    def skewed(self, n: int, alpha: float) -> int:
        """An index in range(n) from a power law: small indices are far more common."""
        return int((1.0 - self.uniform()) ** (-1.0 / alpha) - 1.0) % n

    def choice(self, field: str) -> str:
        names, bounds = self._cumulative[field]
        return str(names[min(bisect.bisect_right(bounds, self.uniform()), len(names) - 1)])


def _asin(i: int) -> str:
    """A distinct asin-like id per index (an affine bijection mod 36**9 hides the order)."""
    value = (i * 1_000_003 + 7_919) % (36**9)
    digits = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ"
    text = ""
    for _ in range(9):
        value, digit = divmod(value, 36)
        text = digits[digit] + text
    return "B" + text


def _price(sampler: _Sampler) -> str:
    low = round(sampler.number("price"), 2)
    if sampler.chance("share_price_range"):
        high = round(low * sampler.number("price_range_ratio"), 2)
        return f"${low} - ${high}"
    return f"${low}"


def _options(i: int, sampler: _Sampler, text: _Text) -> dict[str, Any] | str:
    if not sampler.chance("share_with_options"):
        return ""
    options: dict[str, Any] = {}
    for _ in range(sampler.count("option_groups")):
        name = sampler.choice("option_names")
        if name == "other":
            name = _OTHER_OPTION_NAMES[sampler.integer(len(_OTHER_OPTION_NAMES))]
        name = name.title()
        if name in options:  # a product has each option name once
            name = f"{name} {len(options) + 1}"
        if sampler.chance("share_null_option_group"):
            options[name] = None
            continue
        asin_schema = sampler.chance("share_option_asin_schema")
        values = []
        for j in range(sampler.count("option_values")):
            value = text.sentence(max(1, sampler.count("option_value_words")), capitalise=True)
            if asin_schema:
                values.append(
                    {
                        "is_selected": j == 0,
                        "is_available": True,
                        "value": value,
                        "asin": _asin(i + 7 * j + 1),
                    }
                )
            else:
                image = _image_url(i * 31 + j) if sampler.chance("share_option_value_image") else None
                values.append(
                    {
                        "is_selected": j == 0,
                        "url": None if j == 0 else f"https://www.amazon.com/dp/{_asin(i + j)}",
                        "value": value,
                        "price_string": "",
                        "price": 0,
                        "image": image,
                    }
                )
        options[name] = values
    return options


def _rating(sampler: _Sampler) -> float | int | str:
    kind = sampler.choice("ratings")
    if kind == "empty":
        return ""
    if kind == "int":
        return 1 + sampler.integer(5)
    return round(3.0 + 2.0 * sampler.uniform(), 1)


def _product(i: int, sampler: _Sampler, text: _Text, queries: Sequence[str]) -> dict[str, Any]:
    category = sampler.choice("categories")
    levels = [_CATEGORY_ROOTS[category]] + [
        text.sentence(2, capitalise=True) for _ in range(max(0, sampler.count("category_levels") - 1))
    ]
    bullets = [text.sentence(sampler.count("bullet_words")) for _ in range(sampler.count("bullet_count"))]
    small_description: list[str] | str = bullets
    if sampler.chance("share_bullets_as_string"):
        small_description = " ".join(bullets)
    n_images = sampler.count("image_count")
    return {
        "name": text.sentence(sampler.count("name_words"), capitalise=True),
        "full_description": text.sentence(sampler.count("description_words")),
        "pricing": _price(sampler),
        "images": [_image_url(i * 8 + k) for k in range(n_images)],
        "product_category": " › ".join(levels),
        "average_rating": _rating(sampler),
        "small_description": small_description,
        "customization_options": _options(i, sampler, text),
        "asin": _asin(i),
        "category": category,
        "query": queries[sampler.skewed(len(queries), 0.3)],
        "page": 1 + sampler.integer(413),
    }


def _attributes(sampler: _Sampler, pool: Sequence[str]) -> list[str]:
    n = sampler.count("attribute_count")
    return list(dict.fromkeys(pool[sampler.skewed(len(pool), 0.2)] for _ in range(n)))


def _synthetic_entry(product: dict[str, Any], sampler: _Sampler, pool: Sequence[str]) -> dict[str, Any]:
    attributes = _attributes(sampler, pool)
    entry: dict[str, Any] = {"attributes": attributes}
    options = product["customization_options"]
    has_options = bool(options) and any(options.values())
    if sampler.chance(
        "share_with_instruction_if_options" if has_options else "share_with_instruction_if_no_options"
    ):
        wanted = sampler.count("instruction_attributes")
        while len(attributes) < wanted:  # instruction attributes are a subset of the product's
            extra = pool[sampler.integer(len(pool))]
            if extra not in attributes:
                attributes.append(extra)
        chosen = attributes[:wanted]
        entry["instruction"] = f"Find me {', '.join(chosen[:-1])} {product['query']} with {chosen[-1]}"
        entry["instruction_attributes"] = chosen
    return entry


def _human_entry(
    product: dict[str, Any], entry: dict[str, Any], sampler: _Sampler, pool: Sequence[str]
) -> dict:
    attributes = entry["attributes"] or [pool[sampler.integer(len(pool))]]
    chosen = attributes[: 1 + sampler.integer(min(3, len(attributes)))]
    options = product["customization_options"] or {}
    values = [v[sampler.integer(len(v))]["value"].lower() for v in options.values() if v]
    title_words = product["name"].lower().split()[:6]
    instruction = f"i am looking for {' '.join(title_words)} that is {' and '.join(chosen)}"
    if values:
        instruction += f" in {', '.join(values)}"
    return {
        "asin": product["asin"],
        "instruction": instruction + ".",
        "attributes": attributes,
        "options": values or [""],
        "instruction_attributes": chosen,
        "instruction_options": values,
        "assignment_id": f"A{product['asin']}",
        "worker_id": "W0",
    }


class _JsonWriter:
    """Writes a JSON array or object one entry at a time."""

    def __init__(self, path: Path, opening: str) -> None:
        self.file = path.open("w", encoding="utf-8")
        self.file.write(opening)
        self.closing = "]" if opening == "[" else "}"
        self.first = True

    def write(self, text: str) -> None:
        self.file.write(text if self.first else ",\n" + text)
        self.first = False

    def close(self) -> None:
        self.file.write(self.closing)
        self.file.close()


def write_catalog(
    out_dir: str | os.PathLike[str],
    n_products: int,
    *,
    seed: int = 0,
    profile: dict[str, Any] | None = None,
    progress: bool = True,
) -> Path:
    """Writes a synthetic catalogue in the official raw formats.

    Args:
        out_dir: Where to write ``items_shuffle.json``, ``items_ins_v2.json`` and
            ``items_human_ins.json`` (created if missing).
        n_products: How many products (1,181,436 for the real catalogue's size).
        seed: Seeds everything; the same seed and size give the same bytes.
        profile: Field distributions; `REAL_1K_PROFILE` by default.
        progress: Show a progress bar.

    Returns:
        The output directory.
    """
    from tqdm.auto import tqdm

    if n_products < 1:
        raise ValueError(f"n_products must be >= 1, got {n_products}")
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(seed)
    sampler = _Sampler(profile or REAL_1K_PROFILE, rng)
    text = _Text(rng, table_size=min(_WORD_TABLE_SIZE, max(1 << 14, 8 * n_products)))
    queries = [text.sentence(max(1, sampler.count("query_words"))).lower() for _ in range(2000)]
    attribute_pool = list(dict.fromkeys(text.sentence(2) for _ in range(3000)))
    # The real share of products with a human instruction, one instruction each.
    n_human = round(n_products * FULL_HUMAN_GOALS / FULL_CATALOGUE_PRODUCTS)
    human_at = (
        set(np.linspace(0, n_products - 1, n_human).round().astype(np.int64).tolist()) if n_human else set()
    )

    products = _JsonWriter(out / "items_shuffle.json", "[")
    attributes = _JsonWriter(out / "items_ins_v2.json", "{")
    human = _JsonWriter(out / "items_human_ins.json", "{")
    try:
        for i in tqdm(range(n_products), desc="generating products", unit="product", disable=not progress):
            product = _product(i, sampler, text, queries)
            entry = _synthetic_entry(product, sampler, attribute_pool)
            products.write(json.dumps(product))
            attributes.write(f"{json.dumps(product['asin'])}: {json.dumps(entry)}")
            if i in human_at:
                record = _human_entry(product, entry, sampler, attribute_pool)
                human.write(f"{json.dumps(product['asin'])}: {json.dumps([record])}")
    finally:
        products.close()
        attributes.close()
        human.close()
    return out


# --- measuring -------------------------------------------------------------------------


def _percentiles(values: Sequence[float], digits: int = 2) -> tuple[float, ...]:
    points = np.percentile(np.asarray(values, dtype=np.float64), PERCENTILES)
    return tuple(round(float(p), digits) for p in points)


def _shares(counter: Counter[str], digits: int = 3) -> dict[str, float]:
    total = sum(counter.values())
    return {k: round(v / total, digits) for k, v in counter.most_common()}


def _find(directory: Path, pattern: str) -> Path:
    matches = sorted(directory.glob(pattern))
    if len(matches) != 1:
        raise FileNotFoundError(f"{directory}: expected one {pattern} file, found {len(matches)}")
    return matches[0]


def measure_profile(directory: str | os.PathLike[str]) -> dict[str, Any]:
    """The field-size distributions of a catalogue in the official raw formats.

    Returns `REAL_1K_PROFILE`'s keys (numbers at `PERCENTILES`, shares, category mixes)
    plus derived figures that are checked, not sampled: ``mean_raw_product_bytes`` (the
    raw record as JSON), ``mean_cleaned_product_bytes``
    (JSON of the cleaned `Product`), ``mean_document_words`` (search document, split on
    whitespace), ``mean_document_terms`` (after the search analyzer) and
    ``vocabulary`` (distinct index terms over all documents).
    """
    from webshop_gym.search.engines import analyze

    directory = Path(directory)
    products_path = _find(directory, "items_shuffle*.json")
    attributes_path = _find(directory, "items_ins_v2*.json")
    raw = json.loads(products_path.read_text(encoding="utf-8"))
    entries = json.loads(attributes_path.read_text(encoding="utf-8"))
    numbers: dict[str, list[float]] = {key: [] for key, v in REAL_1K_PROFILE.items() if isinstance(v, tuple)}
    counts: Counter[str] = Counter()
    categories: Counter[str] = Counter()
    option_names: Counter[str] = Counter()
    ratings: Counter[str] = Counter()
    for p in raw:
        numbers["name_words"].append(len(p["name"].split()))
        numbers["description_words"].append(len((p["full_description"] or "").split()))
        bullets = p["small_description"]
        if isinstance(bullets, list):
            numbers["bullet_count"].append(len(bullets))
            numbers["bullet_words"].extend(len(b.split()) for b in bullets)
        else:
            counts["bullets_as_string"] += 1
        amounts = [
            float("".join(c for c in part if c.isdigit() or c == ".")) for part in p["pricing"].split("$")[1:]
        ]
        if amounts:
            numbers["price"].append(amounts[0])
        if len(amounts) > 1:
            counts["price_range"] += 1
            numbers["price_range_ratio"].append(amounts[1] / amounts[0] if amounts[0] else 1.0)
        numbers["image_count"].append(len(p["images"]))
        numbers["category_levels"].append(len(p["product_category"].split(" › ")))
        numbers["query_words"].append(len(p["query"].split()))
        categories[p["category"]] += 1
        rating = p["average_rating"]
        ratings["empty" if isinstance(rating, str) else type(rating).__name__] += 1
        options = p["customization_options"]
        if options:
            counts["with_options"] += 1
            numbers["option_groups"].append(len(options))
            for name, values in options.items():
                counts["option_groups"] += 1
                known = name.lower() in REAL_1K_PROFILE["option_names"]
                option_names[name.lower() if known else "other"] += 1
                if values is None:
                    counts["null_option_group"] += 1
                    continue
                numbers["option_values"].append(len(values))
                for value in values:
                    counts["option_values"] += 1
                    counts["option_asin_schema"] += "asin" in value
                    counts["option_value_image"] += value.get("image") is not None
                    numbers["option_value_words"].append(len(value["value"].split()))
        entry = entries.get(p["asin"], {})
        numbers["attribute_count"].append(len(entry.get("attributes", ())))
        has_options = bool(options) and any(options.values())
        counts["has_options"] += has_options
        if "instruction" in entry:
            counts["with_instruction"] += 1
            counts["with_instruction_and_options"] += has_options
            numbers["instruction_words"].append(len(entry["instruction"].split()))
            numbers["instruction_attributes"].append(len(entry["instruction_attributes"]))
    n = len(raw)
    profile: dict[str, Any] = {key: _percentiles(values) for key, values in numbers.items()}
    profile.update(
        share_price_range=round(counts["price_range"] / n, 3),
        share_bullets_as_string=round(counts["bullets_as_string"] / n, 3),
        share_with_options=round(counts["with_options"] / n, 3),
        share_null_option_group=round(counts["null_option_group"] / max(1, counts["option_groups"]), 3),
        share_option_value_image=round(
            counts["option_value_image"] / max(1, counts["option_values"] - counts["option_asin_schema"]), 3
        ),
        share_option_asin_schema=round(counts["option_asin_schema"] / max(1, counts["option_values"]), 3),
        share_with_instruction=round(counts["with_instruction"] / n, 3),
        # Templated instructions are commoner for products with options (hence more goals).
        share_with_instruction_if_options=round(
            counts["with_instruction_and_options"] / max(1, counts["has_options"]), 3
        ),
        share_with_instruction_if_no_options=round(
            (counts["with_instruction"] - counts["with_instruction_and_options"])
            / max(1, n - counts["has_options"]),
            3,
        ),
        categories=_shares(categories),
        option_names=_shares(option_names),
        ratings=_shares(ratings),
    )
    catalog = load_products(products_path, attributes_path)
    documents = [search_document(p) for p in catalog]
    terms = [analyze(d) for d in documents]
    profile.update(
        mean_raw_product_bytes=statistics.fmean(len(json.dumps(p, ensure_ascii=False).encode()) for p in raw),
        mean_cleaned_product_bytes=statistics.fmean(
            len(json.dumps(dataclasses.asdict(p), ensure_ascii=False).encode()) for p in catalog
        ),
        mean_document_words=statistics.fmean(len(d.split()) for d in documents),
        mean_document_terms=statistics.fmean(len(t) for t in terms),
        vocabulary=len({t for ts in terms for t in ts}),
    )
    return profile


def _format_profile(profile: dict[str, Any]) -> Iterator[str]:
    for key, value in profile.items():
        if isinstance(value, float):
            yield f"{key}: {value:,.1f}" if not math.isnan(value) else f"{key}: nan"
        else:
            yield f"{key}: {value}"


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m webshop_gym.data.synthetic --products N --out DIR`` (or ``--measure DIR``)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--products", type=int, default=FULL_CATALOGUE_PRODUCTS, help="how many products")
    parser.add_argument("--out", type=Path, help="output directory for the three files")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--measure", type=Path, help="print the field profile of a catalogue directory")
    args = parser.parse_args(argv)
    if args.measure is not None:
        print("\n".join(_format_profile(measure_profile(args.measure))))
        return 0
    if args.out is None:
        parser.error("--out is required (or use --measure DIR)")
    write_catalog(args.out, args.products, seed=args.seed)
    print(f"wrote {args.products:,} products to {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
