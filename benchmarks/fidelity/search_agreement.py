"""How closely each search backend reproduces the original WebShop's Lucene hits.

    python -m benchmarks.fidelity.search_agreement [--data DIR]

Over the official 1,000-product set, for the 622 queries of
``reference_bm25_hits_1000.jsonl`` (top-50 hits of the original's Lucene index), prints per
backend the share of queries whose top 10 are the same asins in the same order, the same
ten as a set, the whole top 50 in order, and the whole top 50 in order with every score
equal to the reference's four decimals (for the backends that report scores). Backends:
``bm25`` (the default, embedded), ``bm25s`` and ``lucene``. With the lucene extra installed
it also prints how often the embedded analyzer (`webshop_gym.search.analysis.analyze`)
gives exactly the terms of Lucene's analyzer. Without the extra, the Lucene rows say what
to install.
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time
from pathlib import Path

from webshop_gym.data.catalog import load_catalog
from webshop_gym.data.locations import find_webshop_1k
from webshop_gym.search.analysis import analyze
from webshop_gym.search.documents import search_document
from webshop_gym.search.engines import SearchEngine, build_engine

REPO = Path(__file__).resolve().parents[2]


COLUMNS = ("top-10 in order", "top-10 as a set", "top-50 in order", "top-50 + scores")


def agreement(engine: SearchEngine, references: list[dict]) -> dict[str, int | None]:
    """Counts of queries whose hits agree with the reference, four ways (None: no scores)."""
    scored = getattr(engine, "scored_search", None)
    counts: dict[str, int | None] = dict.fromkeys(COLUMNS, 0)
    if scored is None:
        counts["top-50 + scores"] = None
    for record in references:
        expected = [asin for asin, _ in record["hits"]]
        hits = engine.search(record["query"], 50)
        counts["top-10 in order"] += hits[:10] == expected[:10]  # type: ignore[operator]
        counts["top-10 as a set"] += set(hits[:10]) == set(expected[:10])  # type: ignore[operator]
        counts["top-50 in order"] += hits == expected  # type: ignore[operator]
        if scored is not None:
            # pyserini's scores: four decimals, minus 1e-6 for each tie before them.
            pairs = scored(record["query"], 50)
            counts["top-50 + scores"] += [a for a, _ in pairs] == expected and all(  # type: ignore[operator]
                abs(score - reference) <= 1e-4
                for (_, score), (_, reference) in zip(pairs, record["hits"], strict=True)
            )
    return counts


def analyzer_agreement(documents: list[str], queries: list[str]) -> tuple[int, int]:
    """Documents and queries whose embedded-analyzer terms equal Lucene's analyzer's."""
    from webshop_gym.search.lucene import lucene_terms

    def same(text: str) -> bool:
        return analyze(text) == lucene_terms(text)

    return sum(map(same, documents)), sum(map(same, queries))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--data",
        type=Path,
        default=None,
        help="the official 1k files and reference_bm25_hits_1000.jsonl (default: find_webshop_1k)",
    )
    args = parser.parse_args()
    try:
        args.data = args.data or find_webshop_1k(REPO, references=True)
    except FileNotFoundError as missing:
        parser.error(str(missing))
    # The Lucene index goes to a scratch data folder: the figures never reuse an old index.
    os.environ.setdefault("WEBSHOP_GYM_DATA", tempfile.mkdtemp(prefix="webshop-gym-agreement-"))
    catalog = load_catalog(args.data)
    with (args.data / "reference_bm25_hits_1000.jsonl").open() as f:
        references = [json.loads(line) for line in f]
    n = len(references)
    print(f"{len(catalog)} products, {n} reference queries (top-50 Lucene hits of the original)")
    print(f"{'backend':<8} " + " ".join(f"{column:>18}" for column in COLUMNS))
    for name in ("bm25", "bm25s", "lucene"):
        start = time.perf_counter()
        try:
            engine = build_engine(catalog, name)
            counts = agreement(engine, references)
        except (ImportError, RuntimeError) as error:
            print(f"{name:<8} not available: {error}")
            continue
        cells = " ".join(
            f"{f'{c}/{n} ({100 * c / n:.1f}%)' if c is not None else '-':>18}" for c in counts.values()
        )
        print(f"{name:<8} {cells}   [{time.perf_counter() - start:.1f} s]")
    try:
        documents = [search_document(p) for p in catalog]
        same_documents, same_queries = analyzer_agreement(documents, [r["query"] for r in references])
    except (ImportError, RuntimeError) as error:
        print(f"analyzer check needs the lucene extra: {error}")
        return
    print(
        f"embedded analyzer == Lucene's analyzer: {same_documents}/{len(documents)} documents, "
        f"{same_queries}/{n} queries"
    )


if __name__ == "__main__":
    main()
