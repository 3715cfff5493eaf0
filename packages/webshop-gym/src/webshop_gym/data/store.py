"""The prepared catalogue store: products, prices and goals on disk, read lazily.

``webshop-gym data prepare`` (`webshop_gym.data.prepare`) turns the official JSON files into a
directory that an env opens in milliseconds, without parsing any JSON, and reads product
by product as the agent browses. Every file is a flat array that the operating system
maps into memory (the product records are read with ``pread``), so all envs of a machine
share one copy in the page cache and an env holds only the pages it touched:

============================  ==========================================================
``manifest.json``             format version, counts, file sizes, the inputs it was made from
``products.bin``              the cleaned products, one pickled tuple each, in file order
``offsets.npy``               int64, record ``i`` is ``products.bin[offsets[i]:offsets[i+1]]``
``asins.npy``                 the asin of each row (fixed-width bytes)
``asin_sorted.npy``,          the asins sorted, and their rows: a binary search finds a
``asin_rows.npy``             product by asin without a dict of 1.18M strings
``prices.npy``                float64, the seeded price of each row (`goals.product_price`)
``human.bin``                 the human instructions of the catalogue's products (pickled)
``human_goal_*.npy``          row, instruction and paper number of each human goal, by number
``synthetic_goal_*.npy``      row and option combination of each synthetic goal, in order
``synthetic_weights.npy``,    each row's synthetic goal weight; rows that have a templated
``synthetic_rows.npy``        instruction
``index/``                    the BM25 index (`webshop_gym.search.bm25_index`)
============================  ==========================================================

**Why flat arrays.** Measured by ``benchmarks/store_formats.py`` on a generated
100,000-product catalogue (2-core AMD EPYC, Python 3.11; ``benchmarks/results/store_formats.md``):

==========================================  =====  ======  =======  ===========  ==============
format                                      write  size    open     get by asin  RSS, 10k gets
==========================================  =====  ======  =======  ===========  ==============
arrays, records read with ``pread`` (this)  1.2 s  192 MB  1.0 ms   28.8 µs      +2.5 MB
arrays, records memory-mapped too           1.3 s  192 MB  1.0 ms   22.9 µs      +184 MB
SQLite ``(asin PRIMARY KEY, record)``       1.5 s  257 MB  0.3 ms   42.8 µs      +2.2 MB
Arrow IPC file, memory-mapped               1.8 s  193 MB  40.1 ms  27.1 µs      +211 MB
==========================================  =====  ======  =======  ===========  ==============

Reading records with ``pread`` keeps an env's RSS flat however much it browses (mapped
records count towards RSS, up to the 2.3 GB of records at full scale), and costs a few µs
next to steps of milliseconds. SQLite is slower and its connections must not cross the
``fork`` of vector envs; Arrow needs a large dependency, an asin index all the same, and
its mapped pages count towards RSS too. Records are pickles of plain tuples (protocol 5,
readable by every Python since 3.8), read by an unpickler that refuses any class or
function, so a tampered store cannot run code; decoding one takes about 5 µs (marshal 4,
JSON 12).
"""

from __future__ import annotations

import functools
import io
import json
import os
import pickle
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, cast, overload

import numpy as np

from webshop_gym.data.goals import combination_values, human_goal, synthetic_goal, synthetic_plan
from webshop_gym.lru import LRUCache
from webshop_gym.data.model import BaseCatalog, Goal, HumanInstruction, Product, Review, SyntheticInstruction

__all__ = [
    "MANIFEST_NAME",
    "STORE_FORMAT",
    "StoreError",
    "StoredCatalog",
    "decode_product",
    "encode_product",
    "is_store",
    "open_store",
]

MANIFEST_NAME = "manifest.json"
# Bump when the files change meaning; an older store is then refused and prepared again.
STORE_FORMAT = 1
RECORD_PROTOCOL = 5  # pickle protocol of the records (readable by every Python >= 3.8)
INDEX_DIR = "index"

_PREPARE_HINT = "run `webshop-gym data prepare` to build it again"


class StoreError(ValueError):
    """A prepared store is missing, incomplete, from another version, or damaged."""


def encode_product(product: Product, synthetic: SyntheticInstruction | None) -> bytes:
    """One product (and its templated instruction) as a store record.

    >>> p = Product("B0", "Mug", "Mug", "", ("x",), "$1.0", (1.0,), {"c": ("red",)}, {"red": None},
    ...             ("a",), "garden", "Home", "mugs", "", "N.A.")
    >>> decode_product(encode_product(p, None)) == (p, None)
    True
    """
    return pickle.dumps(
        (
            product.asin,
            product.name,
            product.title,
            product.description,
            product.bullet_points,
            product.price,
            product.pricing,
            product.options,
            product.option_to_image,
            product.attributes,
            product.category,
            product.product_category,
            product.query,
            product.main_image,
            product.rating,
            tuple((r.title, r.body, r.score) for r in product.reviews),
            None if synthetic is None else (synthetic.instruction, synthetic.instruction_attributes),
        ),
        protocol=RECORD_PROTOCOL,
    )


class _PlainUnpickler(pickle.Unpickler):
    """Reads records of builtins only: a record that names any class or function is refused,
    so a tampered store cannot run code."""

    def find_class(self, module: str, name: str) -> Any:
        raise pickle.UnpicklingError(f"a store record may hold only plain data, not {module}.{name}")


def load_plain(data: bytes) -> Any:
    """Unpickles data that holds only builtins (`_PlainUnpickler`)."""
    return _PlainUnpickler(io.BytesIO(data)).load()


def decode_product(record: bytes) -> tuple[Product, SyntheticInstruction | None]:
    """The product and templated instruction of a store record (`encode_product`)."""
    *fields, reviews, synthetic = load_plain(record)
    fields.append(tuple(Review(*r) for r in reviews))
    return (
        Product(*fields),
        None if synthetic is None else SyntheticInstruction(*synthetic),
    )


def is_store(directory: str | os.PathLike[str]) -> bool:
    """Whether ``directory`` holds a prepared store (complete or not)."""
    return (Path(directory) / MANIFEST_NAME).is_file()


def read_manifest(directory: Path) -> dict[str, Any]:
    """The manifest of a complete, current store; `StoreError` says what is wrong otherwise."""
    path = directory / MANIFEST_NAME
    try:
        manifest = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise StoreError(
            f"{directory} is not a prepared WebShop store (no {MANIFEST_NAME}); {_PREPARE_HINT}"
        ) from None
    except (OSError, ValueError) as exc:
        raise StoreError(f"{path} is unreadable ({exc}); {_PREPARE_HINT}") from None
    if not isinstance(manifest, dict) or manifest.get("complete") is not True:
        raise StoreError(f"{directory} holds an unfinished prepare; {_PREPARE_HINT}")
    if manifest.get("format") != STORE_FORMAT:
        raise StoreError(
            f"{directory} was prepared by another version of webshop-gym (store format "
            f"{manifest.get('format')}; this one reads format {STORE_FORMAT}); {_PREPARE_HINT}"
        )
    for name, size in manifest["files"].items():
        file = directory / name
        try:
            actual = file.stat().st_size
        except FileNotFoundError:
            raise StoreError(f"{directory} is incomplete: {name} is missing; {_PREPARE_HINT}") from None
        if actual != size:
            raise StoreError(
                f"{directory} is damaged: {name} has {actual:,} bytes, the manifest says {size:,}; "
                f"{_PREPARE_HINT}"
            )
    return manifest


def open_store(directory: str | os.PathLike[str]) -> StoredCatalog:
    """The store in ``directory``, one shared object per process while it is unchanged.

    Raises:
        StoreError: The store is incomplete, damaged or from another version.
    """
    path = Path(directory).expanduser().resolve()
    try:
        stat = (path / MANIFEST_NAME).stat()
    except FileNotFoundError:
        raise StoreError(
            f"{path} is not a prepared WebShop store (no {MANIFEST_NAME}); {_PREPARE_HINT}"
        ) from None
    return _open_cached(str(path), stat.st_mtime_ns, stat.st_size)


@functools.lru_cache(maxsize=8)
def _open_cached(path: str, mtime_ns: int, size: int) -> StoredCatalog:
    # The manifest's mtime and size are in the key only so that a re-prepared store opens afresh.
    return StoredCatalog(Path(path))


class StoredCatalog(BaseCatalog):
    """A catalogue read lazily from a prepared store (see the module docstring).

    It offers what the in-memory `webshop_gym.data.model.Catalog` offers (``get``, ``[]``,
    ``in``, ``len``, iteration in file order, ``human_instructions``,
    ``synthetic_instructions``) and hands `webshop_gym.data.goals` its precomputed goals and
    prices. Decoded products are kept in a small cache; everything else stays on disk.
    """

    _cache_size = 4096

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self.manifest = read_manifest(directory)
        self.name: str = self.manifest["name"]
        self._n = int(self.manifest["products"])
        # Records are read with pread, not mapped: mapped pages would count towards the
        # env's RSS as it browses; read ones stay in the (shared) page cache only.
        self._fd = os.open(directory / "products.bin", os.O_RDONLY)
        self._offsets = self._array("offsets.npy")
        self._asins = self._array("asins.npy")
        self._sorted_asins = self._array("asin_sorted.npy")
        self._sorted_rows = self._array("asin_rows.npy")
        self._prices = self._array("prices.npy")
        self._cache: LRUCache[int, tuple[Product, SyntheticInstruction | None]] = LRUCache(self._cache_size)
        self._goals: dict[str, StoredGoals] = {}
        self.synthetic_instructions: Mapping[str, SyntheticInstruction] = _SyntheticInstructions(self)

    def _array(self, name: str) -> np.ndarray:
        return np.load(self.directory / name, mmap_mode="r", allow_pickle=False)

    @property
    def index_directory(self) -> Path:
        """Where the BM25 index of `webshop_gym.search.bm25_index` lies."""
        return self.directory / INDEX_DIR

    def __repr__(self) -> str:
        return f"StoredCatalog(name={self.name!r}, products={self._n}, directory={str(self.directory)!r})"

    # -- products --------------------------------------------------------------------

    def row_of(self, asin: object) -> int | None:
        """The row of a product, or None when the catalogue has no such asin."""
        if not isinstance(asin, str) or not self._n:
            return None
        key = asin.encode("utf-8")
        if len(key) > self._sorted_asins.dtype.itemsize or not key or key.endswith(b"\0"):
            return None
        i = int(np.searchsorted(self._sorted_asins, np.bytes_(key)))
        if i < self._n and self._sorted_asins[i] == key:
            return int(self._sorted_rows[i])
        return None

    def asin_at(self, row: int) -> str:
        """The asin of a row."""
        return bytes(self._asins[row]).decode("utf-8")

    def _record(self, row: int) -> bytes:
        start, end = int(self._offsets[row]), int(self._offsets[row + 1])
        return os.pread(self._fd, end - start, start)

    def __del__(self) -> None:
        fd = getattr(self, "_fd", None)
        if fd is not None:
            os.close(fd)

    def entry_at(self, row: int) -> tuple[Product, SyntheticInstruction | None]:
        """The product of a row and its templated instruction (None if it has none)."""
        hit = self._cache.get(row)
        if hit is None:
            hit = decode_product(self._record(row))
            self._cache.put(row, hit)
        return hit

    def product_at(self, row: int) -> Product:
        """The product of a row."""
        return self.entry_at(row)[0]

    def get(self, asin: str) -> Product:
        """The product with this asin; `KeyError` if the catalogue has none."""
        row = self.row_of(asin)
        if row is None:
            raise KeyError(asin)
        return self.product_at(row)

    def __contains__(self, asin: object) -> bool:
        return self.row_of(asin) is not None

    def __len__(self) -> int:
        return self._n

    def __iter__(self) -> Iterator[Product]:
        # Not through the cache: a full pass would only evict what the envs are using.
        for row in range(self._n):
            yield decode_product(self._record(row))[0]

    def price_at(self, row: int) -> float:
        """The seeded price of a row."""
        return float(self._prices[row])

    # -- instructions, prices, goals ---------------------------------------------------

    @functools.cached_property
    def human_instructions(self) -> Mapping[str, tuple[HumanInstruction, ...]]:  # type: ignore[override]
        raw = load_plain((self.directory / "human.bin").read_bytes())
        return {asin: tuple(HumanInstruction(*entry) for entry in entries) for asin, entries in raw.items()}

    def precomputed_prices(self) -> Mapping[str, float]:
        return _StoredPrices(self)

    def precomputed_goals(self, source: str) -> StoredGoals:
        goals = self._goals.get(source)
        if goals is None:
            goals = self._goals[source] = StoredGoals(self, source)
        return goals


class _StoredPrices(Mapping[str, float]):
    """asin -> seeded price, read from the store's price column."""

    def __init__(self, catalog: StoredCatalog) -> None:
        self._catalog = catalog

    def __getitem__(self, asin: str) -> float:
        row = self._catalog.row_of(asin)
        if row is None:
            raise KeyError(asin)
        return self._catalog.price_at(row)

    def __iter__(self) -> Iterator[str]:
        return (self._catalog.asin_at(row) for row in range(len(self._catalog)))

    def __len__(self) -> int:
        return len(self._catalog)


class _SyntheticInstructions(Mapping[str, SyntheticInstruction]):
    """asin -> templated instruction, read from the product records."""

    def __init__(self, catalog: StoredCatalog) -> None:
        self._catalog = catalog
        self._rows = catalog._array("synthetic_rows.npy")

    def __getitem__(self, asin: str) -> SyntheticInstruction:
        row = self._catalog.row_of(asin)
        synthetic = None if row is None else self._catalog.entry_at(row)[1]
        if synthetic is None:
            raise KeyError(asin)
        return synthetic

    def __iter__(self) -> Iterator[str]:
        return (self._catalog.asin_at(int(row)) for row in self._rows)

    def __len__(self) -> int:
        return len(self._rows)


class StoredGoals(Sequence[Goal]):
    """The goals of a store, made one at a time when asked for.

    ``positions`` holds the goals' numbers (`webshop_gym.data.goals.goal_positions`), ascending.
    """

    _cache_size = 1024

    def __init__(self, catalog: StoredCatalog, source: str) -> None:
        self._catalog = catalog
        self.source = source
        if source == "human":
            self._rows = catalog._array("human_goal_rows.npy")
            self._details = catalog._array("human_goal_entries.npy")
            self.positions: Sequence[int] = cast(Sequence[int], catalog._array("human_goal_positions.npy"))
        elif source == "synthetic":
            self._rows = catalog._array("synthetic_goal_rows.npy")
            self._details = catalog._array("synthetic_goal_combinations.npy")
            self._weights = catalog._array("synthetic_weights.npy")
            self.positions = range(len(self._rows))
        else:
            raise ValueError(f"goal source must be 'human' or 'synthetic', got {source!r}")
        self._cache: LRUCache[int, Goal] = LRUCache(self._cache_size)

    def __len__(self) -> int:
        return len(self._rows)

    def __repr__(self) -> str:
        return f"StoredGoals({self.source!r}, {len(self)} goals of {self._catalog.name!r})"

    @overload
    def __getitem__(self, index: int) -> Goal: ...

    @overload
    def __getitem__(self, index: slice) -> list[Goal]: ...

    def __getitem__(self, index: int | slice) -> Goal | list[Goal]:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self)))]
        n = len(self)
        i = int(index)
        if i < 0:
            i += n
        if not 0 <= i < n:
            raise IndexError(f"goal index {index} out of range for {n} goals")
        goal = self._cache.get(i)
        if goal is None:
            goal = self._make(i)
            self._cache.put(i, goal)
        return goal

    def _make(self, i: int) -> Goal:
        catalog = self._catalog
        row = int(self._rows[i])
        product, synthetic = catalog.entry_at(row)
        price = catalog.price_at(row)
        if self.source == "human":
            j = int(self._details[i])
            entry = catalog.human_instructions[product.asin][j]
            return human_goal(product, j, entry, price, position=int(self.positions[i]))
        assert synthetic is not None  # prepare only lists rows with a templated instruction
        plan = synthetic_plan(product, synthetic, price)
        combination = combination_values(product, plan, int(self._details[i]))
        return synthetic_goal(product, synthetic, plan, combination, float(self._weights[row]), position=i)
