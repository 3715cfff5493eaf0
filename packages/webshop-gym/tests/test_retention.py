"""Issue 40: a long-lived process keeps neither dropped stores' files nor every query it saw."""

from __future__ import annotations

import gc
import os
import pickle
import shutil
import tracemalloc
import weakref
from pathlib import Path

import pytest

from webshop_gym.data import store
from webshop_gym.data.catalog import load_catalog
from webshop_gym.data.prepare import find_inputs, prepare_catalog
from webshop_gym.data.store import StoredCatalog
from webshop_gym.lru import LRUCache
from webshop_gym.search.engines import BM25Engine, build_engine


def _open_fds() -> int:
    return len(os.listdir("/proc/self/fd"))


@pytest.fixture(scope="module")
def stores(webshop_1k: Path, tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    root = tmp_path_factory.mktemp("cycled")
    prepare_catalog(find_inputs(webshop_1k), root / "store-0", progress=False)
    for i in range(1, 10):
        shutil.copytree(root / "store-0", root / f"store-{i}")
    return [root / f"store-{i}" for i in range(10)]


def test_cycling_stores_does_not_pile_up_open_files(stores: list[Path]) -> None:
    store._open_cached.cache_clear()
    gc.collect()
    start = _open_fds()
    counts = []
    for _ in range(3):
        for folder in stores:
            catalog = load_catalog(folder)
            assert build_engine(catalog).search("tea tree oil")
            del catalog
        gc.collect()
        counts.append(_open_fds())
    assert counts[2] <= counts[0], counts  # bounded by the store cache, not growing per round
    # Once nothing holds them (the store cache cleared), every store's files are closed.
    store._open_cached.cache_clear()
    gc.collect()
    assert _open_fds() <= start, (start, counts)


def test_an_engine_goes_with_its_catalogue_and_ids_are_not_confused(stores: list[Path]) -> None:
    first = StoredCatalog(stores[0])
    engine = build_engine(first)
    gone = weakref.ref(engine)
    del first, engine
    gc.collect()
    assert gone() is None
    # A catalogue made after another one was collected may get its id; it gets its own engine.
    for _ in range(20):
        catalog = StoredCatalog(stores[1])
        engine = build_engine(catalog)
        assert engine is build_engine(catalog) and engine.search("tea tree oil")
        del catalog, engine
        gc.collect()


def test_long_queries_do_not_stay_in_the_search_cache() -> None:
    engine = BM25Engine(["B1", "B2"], ["red mug", "blue shoe"])
    assert engine.search("red") == ["B1"]
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        for i in range(40):
            assert engine.search(f"q{i} " + "red mug " * 12_500) == ["B1"]  # 100 KB each, 4 MB in all
        gc.collect()
        grown = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    assert grown < 200_000, grown
    assert engine.search("q3 " + "red mug " * 12_500) == ["B1"]  # still answered (from the cache)


def test_the_cache_is_bounded_in_bytes() -> None:
    cache: LRUCache[str, bytes] = LRUCache(maxsize=100, max_bytes=1000)
    for i in range(10):
        cache.put(str(i), b"x" * 300, nbytes=300)
    assert len(cache) == 3 and cache.nbytes == 900
    assert cache.get("9") is not None and cache.get("6") is None
    cache.put("big", b"x" * 5000, nbytes=5000)  # larger than the whole budget: not kept
    assert cache.get("big") is None and cache.nbytes == 900
    cache.put("9", b"y", nbytes=1)  # replacing an entry replaces its size
    assert cache.nbytes == 601
    copy = pickle.loads(pickle.dumps(cache))
    assert len(copy) == 0 and copy.max_bytes == 1000
    with pytest.raises(ValueError, match="max_bytes"):
        LRUCache(10, max_bytes=0)
