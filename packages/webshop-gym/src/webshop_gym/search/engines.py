"""Search engines over the original's search documents.

Every backend answers ``search(query, k) -> list[asin]`` (best first) and analyses text
like the original's Lucene index (Anserini's English analyzer, see
`webshop_gym.search.analysis`): Lucene's word segmentation, possessive ``'s`` removed, lower
case, Lucene's English stop words dropped, Lucene's Porter stemming. All use Anserini's
BM25 defaults k1 = 0.9, b = 0.4.

* ``"bm25"`` (the default): `BM25Engine`, embedded BM25 that scores and ranks exactly as
  the original's Lucene does (Lucene's idf, its one-byte document lengths, its float32
  arithmetic, Anserini's query and its tie-break by asin; `webshop_gym.search.bm25_index`),
  so the default pages are the original's without Java. Over a prepared store it reads the
  store's memory-mapped index (milliseconds to open); over a catalogue loaded from JSON it
  indexes in memory. It is the default because it is the original's ranking, so the
  default pages are the original's, and because it is faster than the bm25s-style scoring
  it replaced: at 1.18M products p50 6.8 ms and p95 19.4 ms (the former memory-mapped bm25s
  engine: 14.5 and 25 ms), twice as fast as Lucene itself in the same runs
  (``benchmarks/results/full_scale.md``). The store keeps one index, this one: bm25s-style
  scores over it would not be faster, so they are gone.
* ``"bm25s"``: the `bm25s` library's BM25 (exact document lengths, float32 sums, ties in
  catalogue order), in memory, also over a prepared store (minutes and gigabytes at full
  scale). Its top 10 equal the original's on two queries in three and its top 50 almost
  never (``benchmarks/results/search_agreement.md``); it is kept for comparison with
  earlier results.
* ``"rank_bm25"``: `rank-bm25` (pure Python; the ``rank-bm25`` extra), small catalogues.
* ``"lucene"``: Lucene itself through pyserini (`webshop_gym.search.lucene`; the ``lucene``
  extra and Java 17).
"""

from __future__ import annotations

import functools
import threading
import weakref
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

import numpy as np

from webshop_gym.search.analysis import LUCENE_STOP_WORDS, analyze  # noqa: F401 (stop words: importable here too)
from webshop_gym.search.base import CachedSearch, SearchEngine
from webshop_gym.search.bm25_index import BM25_B, BM25_K1, BM25Index, build_in_memory

if TYPE_CHECKING:
    from webshop_gym.data.model import BaseCatalog
    from webshop_gym.data.store import StoredCatalog

__all__ = [
    "BM25_B",
    "BM25_K1",
    "DEFAULT_ENGINE",
    "ENGINE_NAMES",
    "BM25Engine",
    "BM25sEngine",
    "RankBM25Engine",
    "SearchEngine",
    "build_engine",
]

ENGINE_NAMES: tuple[str, ...] = ("bm25", "bm25s", "rank_bm25", "lucene")
DEFAULT_ENGINE = "bm25"


class BM25Engine(CachedSearch):
    """Embedded BM25 with the original's Lucene ranking, float for float.

    Example:
        >>> engine = BM25Engine(["B1", "B2", "B3"], ["red mug", "blue mug mug", "red shoe"])
        >>> engine.search("red mugs")
        ['B1', 'B2', 'B3']
        >>> engine.scored_search("shoe")
        [('B3', 0.5305876731872559)]

    Args:
        asins: Document ids, one per document.
        documents: The search documents (`webshop_gym.search.documents.search_document`).
        k1: BM25 term-frequency saturation.
        b: BM25 length normalisation.
    """

    def __init__(
        self, asins: Sequence[str], documents: Sequence[str], k1: float = BM25_K1, b: float = BM25_B
    ) -> None:
        if len(asins) != len(documents):
            raise ValueError(f"{len(asins)} asins but {len(documents)} documents")
        asin_list = list(asins)
        self._setup(
            build_in_memory((analyze(d) for d in documents), asin_list, k1=k1, b=b), asin_list.__getitem__
        )

    def _setup(self, index: BM25Index, asin_at: Callable[[int], str]) -> None:
        super().__init__()
        self.index = index
        self._asin_at = asin_at

    @classmethod
    def from_store(cls, catalog: StoredCatalog) -> BM25Engine:
        """The engine over a prepared store's saved index (no indexing, memory-mapped)."""
        from webshop_gym.data.store import StoreError

        try:
            index = BM25Index.open(catalog.index_directory)
        except FileNotFoundError as error:
            raise StoreError(
                f"the search index of {catalog.directory} is incomplete ({error.filename} is missing); "
                "run `webshop-gym data prepare --force`"
            ) from None
        except ValueError as error:  # an index of an older format
            raise StoreError(str(error)) from None
        if len(index) != len(catalog):
            raise StoreError(
                f"the index in {catalog.index_directory} covers {len(index)} documents but the store "
                f"has {len(catalog)} products; run `webshop-gym data prepare --force`"
            )
        engine = cls.__new__(cls)
        # The asin column itself, not the catalogue: the engine must not keep its catalogue
        # alive (`build_engine` drops an engine when its catalogue goes).
        engine._setup(index, functools.partial(_decode_asin, catalog.asin_column()))
        return engine

    def scored_search(self, query: str, k: int = 50) -> list[tuple[str, float]]:
        """The top ``k`` ``(asin, score)`` pairs, best first, without the answer cache.

        Scores are Lucene's float32 BM25 scores (pyserini reports them rounded to four decimals).
        """
        rows, scores = self.index.top_k(self.index.query(analyze(query)), k)
        return [(self._asin_at(int(row)), float(score)) for row, score in zip(rows, scores, strict=True)]

    def _rank(self, terms: list[str], k: int) -> list[str]:
        rows, _ = self.index.top_k(self.index.query(terms), k)
        return [self._asin_at(int(row)) for row in rows]


def _decode_asin(asins: np.ndarray, row: int) -> str:
    return bytes(asins[row]).decode("utf-8")


class BM25sEngine(CachedSearch):
    """BM25 with the `bm25s` library, in memory (not the original's ranking; see the module)."""

    def __init__(
        self, asins: Sequence[str], documents: Sequence[str], k1: float = BM25_K1, b: float = BM25_B
    ) -> None:
        import bm25s

        super().__init__()
        if len(asins) != len(documents):
            raise ValueError(f"{len(asins)} asins but {len(documents)} documents")
        self.asins = list(asins)
        self._index = bm25s.BM25(k1=k1, b=b, method="lucene")
        self._index.index([analyze(d) for d in documents], show_progress=False)
        self._vocabulary = self._index.vocab_dict

    def _rank(self, terms: list[str], k: int) -> list[str]:
        known = [t for t in terms if t in self._vocabulary]
        if not known:
            return []
        return self._top_k(self.asins, np.asarray(self._index.get_scores(known)), k)


class RankBM25Engine(CachedSearch):
    """BM25 with `rank-bm25` (pure Python; fine for small catalogues)."""

    def __init__(
        self, asins: Sequence[str], documents: Sequence[str], k1: float = BM25_K1, b: float = BM25_B
    ) -> None:
        try:
            from rank_bm25 import BM25Okapi
        except ImportError as error:
            raise ImportError(
                "search_engine='rank_bm25' needs the rank-bm25 package: pip install 'webshop-gym[rank-bm25]'"
            ) from error
        super().__init__()
        self.asins = list(asins)
        self._index = BM25Okapi([analyze(d) for d in documents], k1=k1, b=b)

    def _rank(self, terms: list[str], k: int) -> list[str]:
        if not terms:
            return []
        return self._top_k(self.asins, np.asarray(self._index.get_scores(terms)), k)


def _lucene_engine(asins: Sequence[str], documents: Sequence[str]) -> SearchEngine:
    # Imported here: the lucene extra is optional, and Java starts only when asked for.
    from webshop_gym.search.lucene import LuceneEngine

    return LuceneEngine.from_documents(asins, documents)


_ENGINES = {"bm25": BM25Engine, "bm25s": BM25sEngine, "rank_bm25": RankBM25Engine, "lucene": _lucene_engine}
# The engines of each live catalogue by name, keyed by the catalogue's id. An entry goes
# when its catalogue is collected (`weakref.finalize` runs before the id can be reused), and
# no engine refers to its catalogue, so a dropped catalogue takes its engines, their caches
# and their memory-mapped files with it.
_built: dict[int, dict[str, SearchEngine]] = {}
_built_lock = threading.Lock()  # envs made from thread pools share one engine


def build_engine(catalog: BaseCatalog, name: str = DEFAULT_ENGINE) -> SearchEngine:
    """The engine ``name`` over ``catalog``, built once per process and shared by all envs.

    Over a prepared store, an engine class with a ``from_store(catalog)`` class method
    opens the index saved with the store (``"bm25"``: memory-mapped, milliseconds); other
    engines index the store's products as they would an in-memory catalogue.
    """
    from webshop_gym.data.store import StoredCatalog
    from webshop_gym.search.documents import search_document

    if name not in _ENGINES:
        raise ValueError(f"unknown search engine {name!r}; choose one of {', '.join(ENGINE_NAMES)}")
    with _built_lock:
        engines = _built.get(id(catalog))
        if engines is None:
            engines = _built[id(catalog)] = {}
            weakref.finalize(catalog, _built.pop, id(catalog), None)
        if name not in engines:
            engine_class = _ENGINES[name]
            from_store = getattr(engine_class, "from_store", None)
            if isinstance(catalog, StoredCatalog) and from_store is not None:
                engines[name] = from_store(catalog)
            else:
                products = list(catalog)
                engines[name] = engine_class(
                    [p.asin for p in products], [search_document(p) for p in products]
                )
        return engines[name]
