"""The embedded BM25 engine against the original's Lucene hits, in memory and memory-mapped."""

from __future__ import annotations

import json
import math
import random
from pathlib import Path

import numpy as np
import pytest

from webshop_gym.data.catalog import Catalog, load_catalog
from webshop_gym.data.prepare import find_inputs, prepare_catalog
from webshop_gym.data.store import StoreError, open_store
from webshop_gym.search.analysis import analyze
from webshop_gym.search.bm25_index import (
    LENGTH_TABLE,
    PARAMS_FILE,
    BM25Index,
    IndexBuilder,
    byte4_to_int,
    int_to_byte4,
)
from webshop_gym.search.engines import DEFAULT_ENGINE, BM25Engine, build_engine


@pytest.fixture(scope="module")
def reference_hits(webshop_1k_references: Path) -> list[dict]:
    with (webshop_1k_references / "reference_bm25_hits_1000.jsonl").open() as f:
        return [json.loads(line) for line in f]


@pytest.fixture(scope="module")
def catalog(webshop_1k: Path) -> Catalog:
    return load_catalog(webshop_1k)


@pytest.fixture(scope="module")
def in_memory(catalog: Catalog) -> BM25Engine:
    engine = build_engine(catalog, "bm25")
    assert isinstance(engine, BM25Engine)
    return engine


@pytest.fixture(scope="module")
def from_store(webshop_1k: Path, tmp_path_factory: pytest.TempPathFactory) -> BM25Engine:
    store = tmp_path_factory.mktemp("store") / "webshop-1k"
    prepare_catalog(find_inputs(webshop_1k), store, progress=False)
    engine = build_engine(open_store(store), "bm25")
    assert isinstance(engine, BM25Engine)
    assert isinstance(engine.index._docs.base, np.memmap)  # read through a memory map
    return engine


def _same_as_reference(hits: list[tuple[str, float]], expected: list[list]) -> bool:
    # pyserini reports scores rounded to four decimals, minus 1e-6 per tie before them.
    return [asin for asin, _ in hits] == [asin for asin, _ in expected] and all(
        abs(score - reference) <= 1e-4 for (_, score), (_, reference) in zip(hits, expected, strict=True)
    )


def test_bm25_is_the_default_engine() -> None:
    assert DEFAULT_ENGINE == "bm25"


@pytest.mark.parametrize("source", ["in_memory", "from_store"])
def test_top50_equals_the_original_on_every_reference_query(
    source: str, request: pytest.FixtureRequest, reference_hits: list[dict]
) -> None:
    engine: BM25Engine = request.getfixturevalue(source)
    assert len(reference_hits) == 622
    mismatched = [
        record["query"]
        for record in reference_hits
        if not _same_as_reference(engine.scored_search(record["query"], 50), record["hits"])
    ]
    assert mismatched == []
    for record in reference_hits[::31]:  # the cached answers are the scored ones
        assert engine.search(record["query"]) == [asin for asin, _ in record["hits"]]
        assert engine.search(record["query"], 10) == [asin for asin, _ in record["hits"][:10]]


def test_store_and_memory_give_the_same_scores(
    in_memory: BM25Engine, from_store: BM25Engine, reference_hits: list[dict]
) -> None:
    words = [w for record in reference_hits for w in record["query"].split()]
    rng = random.Random(0)
    queries = [" ".join(rng.choices(words, k=rng.randint(1, 20))) for _ in range(200)]
    for query in queries:
        assert from_store.scored_search(query, 50) == in_memory.scored_search(query, 50), query
    assert from_store.search("zzzz qqqq") == [] and from_store.search("") == []


def test_max_score_gives_what_scoring_everything_gives(
    in_memory: BM25Engine, reference_hits: list[dict], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The pruned search is exact: same documents, same order, same float32 scores."""
    index = in_memory.index
    words = [w for record in reference_hits for w in record["query"].split()]
    rng = random.Random(1)
    queries = [record["query"] for record in reference_hits[::3]]
    queries += [" ".join(rng.choices(words, k=rng.randint(2, 25))) for _ in range(300)]  # repeats too

    def everything(query: object, k: int) -> tuple[np.ndarray, np.ndarray]:
        scores = index.scores(query)  # type: ignore[arg-type]
        matching = np.flatnonzero(scores > 0)
        order = np.lexsort((index.id_ranks[matching], -scores[matching]))[:k]
        return matching[order], scores[matching][order]

    # Postings scored in full before pruning starts; postings and documents the threshold
    # comes from (few documents: no threshold; many: the best of them).
    for exhaustive, seed_postings, seed_documents in ((1, 1, 1), (40, 20, 60), (400, 300, 5)):
        monkeypatch.setattr(BM25Index, "_EXHAUSTIVE_POSTINGS", exhaustive)
        monkeypatch.setattr(BM25Index, "_SEED_POSTINGS", seed_postings)
        monkeypatch.setattr(BM25Index, "_SEED_DOCUMENTS", seed_documents)
        for text in queries:
            query = index.query(analyze(text))
            for k in (1, 10, 50):
                rows, scores = index.top_k(query, k)
                expected_rows, expected_scores = everything(query, k)
                np.testing.assert_array_equal(rows, expected_rows, err_msg=text)
                np.testing.assert_array_equal(scores, expected_scores, err_msg=text)


def test_lucenes_one_byte_lengths() -> None:
    # Exact below 41 terms, then four significant bits (SmallFloat.intToByte4 / byte4ToInt).
    assert [byte4_to_int(int_to_byte4(n)) for n in range(41)] == list(range(41))
    assert [byte4_to_int(int_to_byte4(n)) for n in (41, 47, 48, 100, 199, 1000)] == [40, 46, 48, 96, 184, 984]
    decoded = [byte4_to_int(int_to_byte4(n)) for n in range(5000)]
    assert decoded == sorted(decoded) and all(d <= n for n, d in enumerate(decoded))
    assert LENGTH_TABLE[255] == byte4_to_int(255) == 2_013_265_944
    assert int_to_byte4(2**31 - 1) == 255


def _tiny(documents: list[list[str]], ids: list[str], tmp_path: Path) -> BM25Index:
    builder = IndexBuilder(tmp_path / "index")
    for terms in documents:
        builder.add(terms)
    return BM25Index.open(builder.finish(ids))


def test_scores_follow_lucenes_formula(tmp_path: Path) -> None:
    documents = [["red", "mug"], ["blue", "mug", "mug"], ["red", "shoe"], []]
    index = _tiny(documents, ["B4", "B3", "B2", "B1"], tmp_path)
    f32 = np.float32
    average_length = f32(7 / 3)  # the empty document does not count (Lucene's docCount)

    def lucene(term_freq: int, length: int, doc_freq: int, boost: int = 1) -> np.float32:
        idf = f32(math.log(1 + (3 - doc_freq + 0.5) / (doc_freq + 0.5)))
        weight = f32(f32(boost) * idf)
        inverse_norm = f32(1) / (f32(0.9) * ((f32(1) - f32(0.4)) + f32(0.4) * f32(length) / average_length))
        return f32(weight - weight / (f32(1) + f32(term_freq) * inverse_norm))

    scores = index.scores(index.query(["mug", "red"]))
    assert scores[0] == f32(float(lucene(1, 2, 2)) + float(lucene(1, 2, 2)))
    assert scores[1] == lucene(2, 3, 2) and scores[3] == 0
    # A term typed twice is one clause with boost 2, not the same score added twice.
    twice = index.scores(index.query(["shoe", "shoe"]))
    assert twice[2] == lucene(1, 2, 1, boost=2)
    assert index.query(["shoe", "mug", "shoe", "teapot"]).counts == (2, 1)


def test_ties_are_broken_by_asin_not_catalogue_order(tmp_path: Path) -> None:
    index = _tiny([["mug"], ["mug"], ["mug", "red"], ["mug"]], ["B9", "B1", "B5", "B3"], tmp_path)
    rows, scores = index.top_k(index.query(["mug"]), 4)
    assert list(rows) == [1, 3, 0, 2]  # B1, B3, B9 tied; B5 is longer, so it scores lower
    assert scores[0] == scores[1] == scores[2] > scores[3]
    engine = BM25Engine(["B9", "B1", "B5", "B3"], ["mug", "mug", "mug red", "mug"])
    assert engine.search("mug", 2) == ["B1", "B3"]


def test_an_index_of_the_old_format_asks_for_a_rebuild(webshop_1k: Path, tmp_path: Path) -> None:
    store = tmp_path / "webshop-1k"
    prepare_catalog(find_inputs(webshop_1k), store, progress=False)
    # A store prepared by an earlier version has bm25s's files (params.index.json, ...).
    (store / "index" / PARAMS_FILE).rename(store / "index" / "params.index.json")
    manifest = json.loads((store / "manifest.json").read_text())
    manifest["files"]["index/params.index.json"] = manifest["files"].pop(f"index/{PARAMS_FILE}")
    (store / "manifest.json").write_text(json.dumps(manifest))
    with pytest.raises(StoreError, match="prepare --force"):
        build_engine(open_store(store), "bm25")
    # Preparing again (no --force) sees the stale index and rebuilds.
    assert not prepare_catalog(find_inputs(webshop_1k), store, progress=False).skipped
    assert prepare_catalog(find_inputs(webshop_1k), store, progress=False).skipped


def test_best_few_finds_the_largest_values_cheaply() -> None:
    from webshop_gym.search.bm25_index import _best_few

    rng = np.random.default_rng(0)
    for values in (
        rng.random(200_000),
        np.round(rng.random(200_000), 2),  # many ties
        np.concatenate([np.ones(10), np.zeros(100_000)]),  # fewer large values than asked for
    ):
        found = _best_few(values, 256)
        assert len(found) == 256 and np.all(np.diff(found) > 0)  # ascending positions
        assert values[found].min() >= np.sort(values)[-256]
    assert list(_best_few(np.array([3.0, 1.0, 2.0]), 5)) == [0, 1, 2]
