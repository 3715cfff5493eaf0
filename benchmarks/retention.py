"""What a long-lived process keeps: open files after cycling stores, memory after distinct searches.

Two figures (issue 40):

* **Open file descriptors** after opening 10 copies of a prepared store in turn, three times
  over, each with its search engine, dropping every reference and collecting garbage.
  Memory-mapped arrays hold a descriptor each, so a store and its index are ~21 of them.
* **Memory growth** (RSS) after 5,000 distinct ~60 KB queries through one engine: the
  search cache must be bounded in bytes, not only in entries.

Run::

    python benchmarks/retention.py --store PATH   # a store prepared by `webshop-gym data prepare`
"""

from __future__ import annotations

import argparse
import gc
import os
import random
import shutil
import tempfile
from pathlib import Path


def _open_fds() -> int:
    return len(os.listdir("/proc/self/fd"))


def _rss_mb() -> float:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 1e6


def cycle_stores(store: Path, copies: int = 10, rounds: int = 3) -> list[int]:
    """Open descriptors after each round of opening ``copies`` stores and their engines, and
    once the store cache (8 stores) lets go of them."""
    from webshop_gym.data.catalog import load_catalog
    from webshop_gym.data.store import _open_cached as open_store
    from webshop_gym.search.engines import build_engine

    counts = []
    with tempfile.TemporaryDirectory() as scratch:
        folders = [Path(scratch) / f"store-{i}" for i in range(copies)]
        for folder in folders:
            shutil.copytree(store, folder)
        for _ in range(rounds):
            for folder in folders:
                catalog = load_catalog(folder)
                build_engine(catalog).search("red shoes")
                del catalog
            gc.collect()
            counts.append(_open_fds())
        open_store.cache_clear()  # the last stores opened: nothing else holds them now
        gc.collect()
        counts.append(_open_fds())
    return counts


def search_growth(store: Path, queries: int = 5000, size: int = 60_000) -> float:
    """RSS growth (MB) after ``queries`` distinct queries of about ``size`` characters."""
    from webshop_gym.data.catalog import load_catalog
    from webshop_gym.search.engines import build_engine

    engine = build_engine(load_catalog(store))
    rng = random.Random(0)
    words = ["red", "shoe", "mug", "blue", "garden", "tea", "size", "cotton"]
    filler = " ".join(rng.choice(words) for _ in range(size // 5))[:size]
    engine.search(filler)
    gc.collect()
    before = _rss_mb()
    for i in range(queries):
        engine.search(f"{i} {filler}")
    gc.collect()
    return _rss_mb() - before


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--store", type=Path, required=True, help="a prepared store (e.g. the 1k one)")
    parser.add_argument("--queries", type=int, default=5000)
    args = parser.parse_args()
    start = _open_fds()
    counts = cycle_stores(args.store)
    *rounds, cleared = counts
    print(
        f"open descriptors: {start} at start, {rounds} after each round of 10 stores, {cleared} once dropped"
    )
    growth = search_growth(args.store, args.queries)
    print(f"RSS growth after {args.queries:,} distinct 60 KB searches: {growth:.0f} MB")


if __name__ == "__main__":
    main()
