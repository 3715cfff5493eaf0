"""The prepared catalogue store: products, prices and goals on disk, read lazily.

``webshop-gym data prepare`` (`webshop_gym.data.prepare`) turns the official JSON files into a
directory that an env opens in milliseconds, without parsing any JSON, and reads product
by product as the agent browses. Every file is a flat array that the operating system
maps into memory (the product records are read with ``pread``), so all envs of a machine
share one copy in the page cache and an env holds only the pages it touched:

============================  ==========================================================
``manifest.json``             format version, counts, file sizes and SHA-256, the inputs it was made from
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

**Why flat arrays.** Measured by ``benchmarks/store_formats.py`` (in commit 96b074b) on a generated
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

**Integrity.** Damage that keeps a file's size (a flipped byte, a zeroed price, two rows of
the asin index swapped) would otherwise play wrong without a word, so the manifest records
each file's SHA-256 (hardware-accelerated on x86 and ARM; ~0.6 GB/s on a loaded 2-core
EPYC, against ~0.25 GB/s for BLAKE2b). Opening a store checks what is cheap: every size,
every count the manifest states against the arrays' shapes, and the checksums of the
smallest files up to `OPEN_CHECK_BYTES` in all: the whole of a 1k store (3 MB, ~5 ms),
21 MB of a 100k store's 300 MB (~35 ms). `verify_store` (``webshop-gym data verify``, and
``webshop-gym data prepare`` before it calls a store unchanged) checks every file: ~0.5 s
per 300 MB. A record that cannot be read is a `StoreError` that says to verify, never a
crash mid-episode. Stores prepared before checksums were recorded still open, with a
warning that says how to add them.
"""

from __future__ import annotations

import functools
import hashlib
import io
import json
import os
import pickle
import time
import warnings
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast, overload

import numpy as np

from webshop_gym.data.goals import combination_values, human_goal, synthetic_goal, synthetic_plan
from webshop_gym.data.model import BaseCatalog, Goal, HumanInstruction, Product, Review, SyntheticInstruction
from webshop_gym.lru import LRUCache

__all__ = [
    "MANIFEST_NAME",
    "STORE_FORMAT",
    "StoreError",
    "StoredCatalog",
    "decode_product",
    "encode_product",
    "is_store",
    "open_store",
    "verify_store",
]

MANIFEST_NAME = "manifest.json"
# Bump when the files change meaning; an older store is then refused and prepared again.
STORE_FORMAT = 1
RECORD_PROTOCOL = 5  # pickle protocol of the records (readable by every Python >= 3.8)
INDEX_DIR = "index"

_PREPARE_HINT = "run `webshop-gym data prepare` to build it again"
_REBUILD_HINT = (
    "run `webshop-gym data prepare --force` (with the --set, or --from and --out, it was prepared with) "
    "to rebuild it"
)

OPEN_CHECK_BYTES = 32 << 20
"""Opening a store checks the SHA-256 of its smallest files up to this many bytes in all."""


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


def file_sha256(path: Path) -> str:
    """The SHA-256 of a file, read in blocks."""
    digest = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 22), b""):
            digest.update(block)
    return digest.hexdigest()


def check_checksums(
    directory: Path, manifest: Mapping[str, Any], budget: int | None = None
) -> tuple[int, int]:
    """Compares files with the SHA-256 in the manifest: all of them, or the smallest up to
    ``budget`` bytes in all. Returns how many files and bytes were checked.

    Raises:
        StoreError: Files differ from their checksums (all of them are named).
    """
    checksums = manifest.get("sha256")
    if not isinstance(checksums, dict):
        raise StoreError(f"{directory} has no checksums in its {MANIFEST_NAME}; {_REBUILD_HINT} with them")
    checked, total, damaged = 0, 0, []
    for name, size in sorted(manifest["files"].items(), key=lambda item: (item[1], item[0])):
        if budget is not None and total + size > budget:
            break  # smallest first: every later file is larger
        if checksums.get(name) != file_sha256(directory / name):
            damaged.append(name)
        checked, total = checked + 1, total + size
    if damaged:
        names = ", ".join(damaged)
        raise StoreError(
            f"{directory} is damaged: {names} {'does' if len(damaged) == 1 else 'do'} not match the "
            f"checksum recorded when it was prepared; {_REBUILD_HINT}"
        )
    return checked, total


def _npy_length(path: Path) -> int:
    """The first dimension of an ``.npy`` array, read from its header alone."""
    with path.open("rb") as f:
        version = np.lib.format.read_magic(f)
        read_header = (
            np.lib.format.read_array_header_1_0 if version == (1, 0) else np.lib.format.read_array_header_2_0
        )
        shape, _, _ = read_header(f)
    return int(shape[0]) if shape else 1


def check_counts(directory: Path, manifest: Mapping[str, Any]) -> None:
    """Compares the counts the manifest states with the shapes of the arrays (headers only).

    Raises:
        StoreError: The manifest and the data disagree.
    """
    try:
        params = json.loads((directory / INDEX_DIR / "params.json").read_text(encoding="utf-8"))
        counts = {
            "products": int(manifest["products"]),
            "human goals": int(manifest["human_goals"]),
            "synthetic goals": int(manifest["synthetic_goals"]),
            "terms": int(manifest.get("vocabulary", params["terms"])),
            "postings": int(params["postings"]),
        }
        documents = int(params["documents"])
        extra = {"offsets.npy": 1, f"{INDEX_DIR}/term_starts.npy": 1, f"{INDEX_DIR}/term_offsets.npy": 1}
        for what, names in _COUNTED.items():
            for name in names:
                actual = _npy_length(directory / name) - extra.get(name, 0)
                if actual != counts[what]:
                    raise StoreError(
                        f"{directory}: its {MANIFEST_NAME} says {counts[what]:,} {what} but {name} holds "
                        f"{actual:,}: the manifest and the data disagree; {_REBUILD_HINT}"
                    )
        if documents != counts["products"]:
            raise StoreError(
                f"{directory}: its {MANIFEST_NAME} says {counts['products']:,} products but its search "
                f"index covers {documents:,}; {_REBUILD_HINT}"
            )
        end = int(np.load(directory / "offsets.npy", mmap_mode="r")[-1])
    except (OSError, ValueError, KeyError, TypeError, IndexError) as error:
        if isinstance(error, StoreError):
            raise
        raise StoreError(f"{directory} is damaged: {error}; {_REBUILD_HINT}") from None
    if end != manifest["files"]["products.bin"]:
        raise StoreError(
            f"{directory} is damaged: offsets.npy ends at byte {end:,} of products.bin, which has "
            f"{manifest['files']['products.bin']:,}; {_REBUILD_HINT}"
        )


# Which arrays hold one entry per what (offsets and the term tables: one more).
_COUNTED: dict[str, tuple[str, ...]] = {
    "products": (
        "offsets.npy",
        "asins.npy",
        "asin_sorted.npy",
        "asin_rows.npy",
        "prices.npy",
        "synthetic_weights.npy",
        f"{INDEX_DIR}/norms.npy",
        f"{INDEX_DIR}/id_ranks.npy",
    ),
    "human goals": ("human_goal_rows.npy", "human_goal_entries.npy", "human_goal_positions.npy"),
    "synthetic goals": ("synthetic_goal_rows.npy", "synthetic_goal_combinations.npy"),
    "terms": (
        f"{INDEX_DIR}/term_starts.npy",
        f"{INDEX_DIR}/term_offsets.npy",
        f"{INDEX_DIR}/term_max_scores.npy",
        f"{INDEX_DIR}/term_hashes.npy",
        f"{INDEX_DIR}/term_hash_ids.npy",
    ),
    "postings": (
        f"{INDEX_DIR}/postings_docs.npy",
        f"{INDEX_DIR}/postings_scores.npy",
        f"{INDEX_DIR}/postings_freqs.npy",
    ),
}


@dataclass(frozen=True)
class Verified:
    """What `verify_store` checked."""

    directory: Path
    files: int
    bytes: int
    seconds: float


def verify_store(directory: str | os.PathLike[str]) -> Verified:
    """Checks every file of a store against its manifest: sizes, counts and SHA-256.

    Raises:
        StoreError: The store is missing, incomplete, damaged (the files are named) or has
            no checksums (prepared by an older webshop-gym).
    """
    start = time.perf_counter()
    path = Path(directory).expanduser().resolve()
    manifest = read_manifest(path)
    if not isinstance(manifest.get("sha256"), dict):
        raise StoreError(
            f"{path} has no checksums (prepared by an older webshop-gym), so it cannot be verified; "
            f"{_REBUILD_HINT} with them"
        )
    files, size = check_checksums(path, manifest)
    check_counts(path, manifest)
    return Verified(path, files, size, time.perf_counter() - start)


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
    _cache_bytes = 64 << 20  # ~18 MB for 4,096 typical products; less when some are outsized

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self.manifest = read_manifest(directory)
        check_counts(directory, self.manifest)
        if "sha256" in self.manifest:
            check_checksums(directory, self.manifest, OPEN_CHECK_BYTES)
        else:
            warnings.warn(
                f"{directory} was prepared by an older webshop-gym and has no checksums, so damage to it "
                f"cannot be detected; `webshop-gym data prepare --force` (with the --set, or --from and "
                f"--out, it was prepared with) rebuilds it with them",
                UserWarning,
                stacklevel=2,
            )
        self.name: str = self.manifest["name"]
        self._n = int(self.manifest["products"])
        self._records_size = int(self.manifest["files"]["products.bin"])
        # Records are read with pread, not mapped: mapped pages would count towards the
        # env's RSS as it browses; read ones stay in the (shared) page cache only.
        self._fd = os.open(directory / "products.bin", os.O_RDONLY)
        self._offsets = self._array("offsets.npy")
        self._asins = self._array("asins.npy")
        self._sorted_asins = self._array("asin_sorted.npy")
        self._sorted_rows = self._array("asin_rows.npy")
        self._prices = self._array("prices.npy")
        self._cache: LRUCache[int, tuple[Product, SyntheticInstruction | None]] = LRUCache(
            self._cache_size, self._cache_bytes
        )
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

    def asin_column(self) -> np.ndarray:
        """The asin of every row, as fixed-width UTF-8 bytes (memory-mapped)."""
        return self._asins

    def asin_at(self, row: int) -> str:
        """The asin of a row."""
        return bytes(self._asins[row]).decode("utf-8")

    def _record(self, row: int) -> bytes:
        start, end = int(self._offsets[row]), int(self._offsets[row + 1])
        if not 0 <= start <= end <= self._records_size:
            raise self._damaged(row, f"offsets.npy gives it bytes {start:,} to {end:,}")
        try:
            return os.pread(self._fd, end - start, start)
        except OSError as error:
            raise self._damaged(row, str(error)) from None

    def _decode(self, row: int) -> tuple[tuple[Product, SyntheticInstruction | None], int]:
        """A row's entry and its record's size."""
        record = self._record(row)
        try:
            return decode_product(record), len(record)
        except Exception as error:  # whatever a damaged pickle raises: name the store instead
            raise self._damaged(row, f"{type(error).__name__}: {error}") from None

    def _damaged(self, row: int, why: str) -> StoreError:
        return StoreError(
            f"{self.directory} is damaged: the record of row {row} cannot be read ({why}); "
            f"`webshop-gym data verify {self.directory}` checks every file, and {_REBUILD_HINT}"
        )

    def __del__(self) -> None:
        fd = getattr(self, "_fd", None)
        if fd is not None:
            os.close(fd)

    def entry_at(self, row: int) -> tuple[Product, SyntheticInstruction | None]:
        """The product of a row and its templated instruction (None if it has none)."""
        hit = self._cache.get(row)
        if hit is None:
            hit, size = self._decode(row)
            # Decoded, a record takes about 2.4 times its pickled size (measured on the 1k set).
            self._cache.put(row, hit, 100 + 5 * size // 2)
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
            yield self._decode(row)[0][0]

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
