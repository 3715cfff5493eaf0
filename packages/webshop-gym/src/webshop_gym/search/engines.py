"""Search engines over the original's search documents.

Every backend answers ``search(query, k) -> list[asin]`` (best first) and analyses text
like the original's Lucene index (Anserini's English analyzer): lower-case word tokens,
possessive ``'s`` removed, Lucene's English stop words dropped, Porter stemming. BM25 uses
Anserini's defaults k1 = 0.9, b = 0.4; ties keep catalogue order, as Lucene does.
"""

from __future__ import annotations

import re
from collections import OrderedDict
from collections.abc import Sequence
from functools import lru_cache
from typing import TYPE_CHECKING, Literal, Protocol

import numpy as np

if TYPE_CHECKING:
    from webshop_gym.catalog import Catalog

EngineName = Literal["bm25s", "rank_bm25"]
ENGINE_NAMES: tuple[str, ...] = ("bm25s", "rank_bm25")

# Lucene's EnglishAnalyzer.ENGLISH_STOP_WORDS_SET, which Anserini's analyzer uses.
LUCENE_STOP_WORDS = frozenset(
    [
        "a",
        "an",
        "and",
        "are",
        "as",
        "at",
        "be",
        "but",
        "by",
        "for",
        "if",
        "in",
        "into",
        "is",
        "it",
        "no",
        "not",
        "of",
        "on",
        "or",
        "such",
        "that",
        "the",
        "their",
        "then",
        "there",
        "these",
        "they",
        "this",
        "to",
        "was",
        "will",
        "with",
    ]
)
# Word characters joined by inner apostrophes or dots ("don't", "14.125"), roughly what
# Lucene's StandardTokenizer keeps together.
_TOKEN = re.compile(r"\w+(?:['’.]\w+)*")


class SearchEngine(Protocol):
    """Ranks products for a query."""

    def search(self, query: str, k: int = 50) -> list[str]:
        """Returns the asins of the top ``k`` products, best first."""
        ...


@lru_cache(maxsize=1)
def _porter_stemmer():  # type: ignore[no-untyped-def]
    import Stemmer  # PyStemmer: the Porter stemmer in C

    return Stemmer.Stemmer("porter")


@lru_cache(maxsize=200_000)
def _stem(word: str) -> str:
    return str(_porter_stemmer().stemWord(word))


def analyze(text: str) -> list[str]:
    """Turns text into index terms the way the original's English analyzer does.

    >>> analyze("The Runner's Shoes, size 9.5!")
    ['runner', 'shoe', 'size', '9.5']
    """
    terms = []
    for token in _TOKEN.findall(text.lower()):
        if token.endswith(("'s", "’s")):
            token = token[:-2]
        if token and token not in LUCENE_STOP_WORDS:
            terms.append(_stem(token))
    return terms


class _CachedSearch:
    """Keeps recent answers: agents repeat the same queries across episodes."""

    _cache_size = 4096

    def __init__(self) -> None:
        self._cache: OrderedDict[tuple[str, int], list[str]] = OrderedDict()

    def search(self, query: str, k: int = 50) -> list[str]:
        key = (query, k)
        hit = self._cache.get(key)
        if hit is None:
            hit = self._rank(analyze(query), k)
            self._cache[key] = hit
            if len(self._cache) > self._cache_size:
                self._cache.popitem(last=False)
        else:
            self._cache.move_to_end(key)
        return list(hit)

    def clear_cache(self) -> None:
        """Forgets recent answers (benchmarks time real searches with it)."""
        self._cache.clear()

    def _rank(self, terms: list[str], k: int) -> list[str]:
        raise NotImplementedError

    @staticmethod
    def _top_k(asins: Sequence[str], scores: np.ndarray, k: int) -> list[str]:
        """Positive scores only (Lucene returns only matching documents), ties by order."""
        matching = np.flatnonzero(scores > 0)
        if matching.size > k:
            # Keep everything tied with the k-th score so that tie-breaking by index holds.
            kth = np.partition(scores[matching], -k)[-k]
            matching = matching[scores[matching] >= kth]
        order = np.lexsort((matching, -scores[matching]))[:k]
        return [asins[i] for i in matching[order]]


class BM25sEngine(_CachedSearch):
    """Embedded BM25 with `bm25s` (sparse matrices; fast at 1M+ documents)."""

    def __init__(
        self, asins: Sequence[str], documents: Sequence[str], k1: float = 0.9, b: float = 0.4
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


class RankBM25Engine(_CachedSearch):
    """BM25 with `rank-bm25` (pure Python; fine for small catalogues)."""

    def __init__(
        self, asins: Sequence[str], documents: Sequence[str], k1: float = 0.9, b: float = 0.4
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


_ENGINES = {"bm25s": BM25sEngine, "rank_bm25": RankBM25Engine}
# Keyed by the catalogue's id; the catalogue is kept in the value so that the id stays its own.
_built: dict[tuple[int, str], tuple[Catalog, SearchEngine]] = {}


def build_engine(catalog: Catalog, name: str = "bm25s") -> SearchEngine:
    """The engine ``name`` over ``catalog``, built once per process and shared by all envs."""
    from webshop_gym.search.documents import search_document

    if name not in _ENGINES:
        raise ValueError(f"unknown search engine {name!r}; choose one of {', '.join(ENGINE_NAMES)}")
    key = (id(catalog), name)
    if key not in _built:
        asins = [p.asin for p in catalog]
        _built[key] = (catalog, _ENGINES[name](asins, [search_document(p) for p in catalog]))
    return _built[key][1]
