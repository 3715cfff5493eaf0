"""A small thread-safe least-recently-used cache, for values keyed by something hashable.

`functools.lru_cache` covers plain functions; this covers caches that live on an object
(one per search engine, per store) or whose entries must be checked before use. A count of
entries alone does not bound memory when entries vary in size (a search cache fed 60 KB
queries, a product with thousands of reviews), so a cache may also hold at most
``max_bytes``, each entry weighing what its caller says at `LRUCache.put`.

Example:
    >>> cache = LRUCache(maxsize=2)
    >>> cache.put("a", 1); cache.put("b", 2); cache.get("a")
    1
    >>> cache.put("c", 3)  # evicts "b", the least recently used
    >>> cache.get("b") is None, len(cache)
    (True, 2)
    >>> sized = LRUCache(maxsize=100, max_bytes=10)
    >>> sized.put("a", "aaaaaa", nbytes=6); sized.put("b", "bbbbbb", nbytes=6)  # evicts "a"
    >>> sized.get("a") is None, sized.nbytes
    (True, 6)
    >>> import pickle
    >>> len(pickle.loads(pickle.dumps(cache)))  # a copy in another process starts empty
    0
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Hashable
from typing import Generic, TypeVar

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")

__all__ = ["LRUCache"]


class LRUCache(Generic[K, V]):
    """At most ``maxsize`` entries (and ``max_bytes``); the least recently used ones go first."""

    def __init__(self, maxsize: int, max_bytes: int | None = None) -> None:
        if maxsize < 1:
            raise ValueError(f"maxsize must be at least 1, got {maxsize}")
        if max_bytes is not None and max_bytes < 1:
            raise ValueError(f"max_bytes must be at least 1 (or None: no byte limit), got {max_bytes}")
        self.maxsize = maxsize
        self.max_bytes = max_bytes
        self.nbytes = 0  # the sum of the entries' weights
        self._entries: OrderedDict[K, tuple[V, int]] = OrderedDict()
        self._lock = threading.Lock()  # envs in threads (the web server) share engines and stores

    def get(self, key: K) -> V | None:
        """The value for ``key`` (now the most recently used), or None."""
        with self._lock:
            entry = self._entries.get(key)
            if entry is None:
                return None
            self._entries.move_to_end(key)
            return entry[0]

    def put(self, key: K, value: V, nbytes: int = 0) -> None:
        """Stores ``value`` weighing ``nbytes``, evicting the least recently used entries
        while over a limit. An entry heavier than ``max_bytes`` alone is not kept."""
        with self._lock:
            old = self._entries.pop(key, None)
            if old is not None:
                self.nbytes -= old[1]
            if self.max_bytes is not None and nbytes > self.max_bytes:
                return
            self._entries[key] = (value, nbytes)
            self.nbytes += nbytes
            while len(self._entries) > self.maxsize or (
                self.max_bytes is not None and self.nbytes > self.max_bytes
            ):
                _, (_, evicted) = self._entries.popitem(last=False)
                self.nbytes -= evicted

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()
            self.nbytes = 0

    def __len__(self) -> int:
        return len(self._entries)

    def __reduce__(self) -> tuple[type[LRUCache[K, V]], tuple[int, int | None]]:
        # Pickled (envs sent to worker processes) as an empty cache: a lock cannot travel.
        return (type(self), (self.maxsize, self.max_bytes))
