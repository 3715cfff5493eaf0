"""A small thread-safe least-recently-used cache, for values keyed by something hashable.

`functools.lru_cache` covers plain functions; this covers caches that live on an object
(one per search engine, per store) or whose entries must be checked before use.

Example:
    >>> cache = LRUCache(maxsize=2)
    >>> cache.put("a", 1); cache.put("b", 2); cache.get("a")
    1
    >>> cache.put("c", 3)  # evicts "b", the least recently used
    >>> cache.get("b") is None, len(cache)
    (True, 2)
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
    """At most ``maxsize`` entries; the least recently used one goes first."""

    def __init__(self, maxsize: int) -> None:
        if maxsize < 1:
            raise ValueError(f"maxsize must be at least 1, got {maxsize}")
        self.maxsize = maxsize
        self._entries: OrderedDict[K, V] = OrderedDict()
        self._lock = threading.Lock()  # envs in threads (the web server) share engines and stores

    def get(self, key: K) -> V | None:
        """The value for ``key`` (now the most recently used), or None."""
        with self._lock:
            value = self._entries.get(key)
            if value is not None:
                self._entries.move_to_end(key)
            return value

    def put(self, key: K, value: V) -> None:
        """Stores ``value``, evicting the least recently used entry when full."""
        with self._lock:
            self._entries[key] = value
            self._entries.move_to_end(key)
            if len(self._entries) > self.maxsize:
                self._entries.popitem(last=False)

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()

    def __len__(self) -> int:
        return len(self._entries)

    def __reduce__(self) -> tuple[type[LRUCache[K, V]], tuple[int]]:
        # Pickled (envs sent to worker processes) as an empty cache: a lock cannot travel.
        return (type(self), (self.maxsize,))
