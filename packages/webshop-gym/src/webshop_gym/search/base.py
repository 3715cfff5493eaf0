"""What every search engine is: the `SearchEngine` protocol and the cached base of the backends."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import Protocol

import numpy as np

from webshop_gym.lru import LRUCache
from webshop_gym.search.analysis import analyze

__all__ = ["CachedSearch", "SearchEngine"]


class SearchEngine(Protocol):
    """Ranks products for a query."""

    def search(self, query: str, k: int = 50) -> list[str]:
        """Returns the asins of the top ``k`` products, best first."""
        ...


class CachedSearch:
    """Keeps recent answers: agents repeat the same queries across episodes.

    Answers are keyed by a 128-bit digest of the query, not the query itself, and the cache
    is bounded in bytes as well as in entries: a server fed distinct 60 KB queries would
    otherwise keep every one of them (4,096 x 60 KB = 245 MB per engine).
    """

    _cache_size = 4096
    _cache_bytes = 16 << 20  # about 4,096 answers of 50 hits; fewer when k is larger

    def __init__(self) -> None:
        self._cache: LRUCache[tuple[bytes, int], list[str]] = LRUCache(self._cache_size, self._cache_bytes)

    def search(self, query: str, k: int = 50) -> list[str]:
        # "surrogatepass": any str is a valid query (the action space accepts any unicode string).
        digest = hashlib.blake2b(query.encode("utf-8", "surrogatepass"), digest_size=16).digest()
        key = (digest, k)
        hit = self._cache.get(key)
        if hit is None:
            hit = self._search_uncached(query, k)
            self._cache.put(key, hit, _answer_bytes(hit))
        return list(hit)

    def clear_cache(self) -> None:
        """Forgets recent answers (benchmarks time real searches with it)."""
        self._cache.clear()

    def _search_uncached(self, query: str, k: int) -> list[str]:
        return self._rank(analyze(query), k)

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


def _answer_bytes(asins: list[str]) -> int:
    """Roughly what a cached answer holds: its key, list and strings (CPython object sizes)."""
    return 200 + sum(57 + len(asin) for asin in asins) + 8 * len(asins)
