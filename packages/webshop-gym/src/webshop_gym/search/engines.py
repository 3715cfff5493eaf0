"""Search engines over the original's search documents.

Every backend answers ``search(query, k) -> list[asin]`` (best first) and analyses text
like the original's Lucene index (Anserini's English analyzer, see
`webshop_gym.search.analysis`): Lucene's word segmentation, possessive ``'s`` removed, lower
case, Lucene's English stop words dropped, Lucene's Porter stemming. BM25 uses Anserini's
defaults k1 = 0.9, b = 0.4; ties keep catalogue order (Anserini breaks ties by asin after
rounding scores to four decimals; `webshop_gym.search.lucene` runs Anserini itself).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from webshop_gym.search.analysis import LUCENE_STOP_WORDS, analyze  # noqa: F401 (stop words: importable here too)
from webshop_gym.search.base import CachedSearch, SearchEngine

if TYPE_CHECKING:
    from webshop_gym.data.model import BaseCatalog
    from webshop_gym.data.store import StoredCatalog

ENGINE_NAMES: tuple[str, ...] = ("bm25s", "rank_bm25", "lucene")
# Anserini's BM25 defaults, which the original's Lucene index uses.
BM25_K1 = 0.9
BM25_B = 0.4


class BM25sEngine(CachedSearch):
    """Embedded BM25 with `bm25s` (sparse matrices; fast at 1M+ documents).

    Over a prepared store (`from_store`) it reads the store's memory-mapped index instead
    of indexing: see `StoredBM25Engine`.
    """

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

    @classmethod
    def from_store(cls, catalog: StoredCatalog) -> SearchEngine:
        """The engine over a prepared store's saved index (no indexing, memory-mapped)."""
        return StoredBM25Engine(catalog)


class StoredBM25Engine(CachedSearch):
    """BM25 over the index `webshop-gym data prepare` saved with a store.

    The same ranking as `BM25sEngine` over the same documents (same scores, float for
    float), read through memory maps (`webshop_gym.search.bm25_index.MappedBM25`): opening
    it costs milliseconds and every process shares the pages.
    """

    def __init__(self, catalog: StoredCatalog) -> None:
        from webshop_gym.data.store import StoreError
        from webshop_gym.search.bm25_index import MappedBM25

        super().__init__()
        self._catalog = catalog
        try:
            self._index = MappedBM25(catalog.index_directory)
        except FileNotFoundError as error:
            raise StoreError(
                f"the search index of {catalog.directory} is incomplete ({error.filename} is missing); "
                "run `webshop-gym data prepare --force`"
            ) from None
        if len(self._index) != len(catalog):
            raise ValueError(
                f"the index in {catalog.index_directory} covers {len(self._index)} documents but the store "
                f"has {len(catalog)} products; run `webshop-gym data prepare --force`"
            )

    def _rank(self, terms: list[str], k: int) -> list[str]:
        rows, _ = self._index.top_k(self._index.term_ids(terms), k)
        return [self._catalog.asin_at(int(row)) for row in rows]


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


_ENGINES = {"bm25s": BM25sEngine, "rank_bm25": RankBM25Engine, "lucene": _lucene_engine}
# Keyed by the catalogue's id; the catalogue is kept in the value so that the id stays its own.
_built: dict[tuple[int, str], tuple[BaseCatalog, SearchEngine]] = {}


def build_engine(catalog: BaseCatalog, name: str = "bm25s") -> SearchEngine:
    """The engine ``name`` over ``catalog``, built once per process and shared by all envs.

    Over a prepared store, an engine class with a ``from_store(catalog)`` class method
    opens the index saved with the store (bm25s: memory-mapped, milliseconds); other
    engines index the store's products as they would an in-memory catalogue.
    """
    from webshop_gym.data.store import StoredCatalog
    from webshop_gym.search.documents import search_document

    if name not in _ENGINES:
        raise ValueError(f"unknown search engine {name!r}; choose one of {', '.join(ENGINE_NAMES)}")
    key = (id(catalog), name)
    if key not in _built:
        engine_class = _ENGINES[name]
        from_store = getattr(engine_class, "from_store", None)
        if isinstance(catalog, StoredCatalog) and from_store is not None:
            engine = from_store(catalog)
        else:
            products = list(catalog)
            engine = engine_class([p.asin for p in products], [search_document(p) for p in products])
        _built[key] = (catalog, engine)
    return _built[key][1]
