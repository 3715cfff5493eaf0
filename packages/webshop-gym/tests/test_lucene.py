"""The Lucene backend (pyserini's Anserini) against the original WebShop's own Lucene hits.

Needs the lucene extra and Java 17, which `nox -s "tests(suite='lucene')"` installs.
"""

from __future__ import annotations

import json
import multiprocessing
import pickle
import random
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from webshop_gym.data.catalog import load_catalog
from webshop_gym.envs import WebShopEnv
from webshop_gym.search import lucene
from webshop_gym.search.analysis import LUCENE_STOP_WORDS, analyze, porter_stem
from webshop_gym.search.documents import search_document
from webshop_gym.search.engines import build_engine
from webshop_gym.search.lucene import (
    LuceneEngine,
    LuceneSetupError,
    build_lucene_index,
    default_index_dir,
    is_lucene_index,
    lucene_terms,
)


@pytest.fixture(scope="module")
def data_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A private data folder, so the cached index is built by these tests, once."""
    return tmp_path_factory.mktemp("webshop-gym-data")


@pytest.fixture(autouse=True)
def _private_data_dir(data_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("WEBSHOP_GYM_DATA", str(data_dir))


@pytest.fixture(scope="module")
def reference_hits(webshop_1k_references: Path) -> list[dict]:
    with (webshop_1k_references / "reference_bm25_hits_1000.jsonl").open() as f:
        return [json.loads(line) for line in f]


@pytest.fixture(scope="module")
def engine_1k(webshop_1k: Path, data_dir: Path) -> LuceneEngine:
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("WEBSHOP_GYM_DATA", str(data_dir))
        engine = build_engine(load_catalog(webshop_1k), "lucene")
    assert isinstance(engine, LuceneEngine)
    return engine


@pytest.fixture(scope="module")
def lucene_hits(engine_1k: LuceneEngine, reference_hits: list[dict]) -> list[list[tuple[str, float]]]:
    """The engine's top 50 ``(asin, score)`` for every reference query."""
    return [engine_1k.scored_search(record["query"], 50) for record in reference_hits]


def test_top10_agrees_with_the_original_lucene_hits(
    lucene_hits: list[list[tuple[str, float]]], reference_hits: list[dict]
) -> None:
    # Agreement: the same ten asins in the same order as the original's top 10.
    assert len(reference_hits) == 622
    same = [
        [asin for asin, _ in hits[:10]] == [asin for asin, _ in record["hits"][:10]]
        for hits, record in zip(lucene_hits, reference_hits, strict=True)
    ]
    assert sum(same) / len(same) >= 0.95


def test_top50_scores_equal_the_original(
    lucene_hits: list[list[tuple[str, float]]], reference_hits: list[dict]
) -> None:
    def same(hits: list[tuple[str, float]], expected: list[list]) -> bool:
        return [a for a, _ in hits] == [a for a, _ in expected] and all(
            abs(score - reference) <= 1e-4 for (_, score), (_, reference) in zip(hits, expected, strict=True)
        )

    mismatched = [
        record["query"]
        for hits, record in zip(lucene_hits, reference_hits, strict=True)
        if not same(hits, record["hits"])
    ]
    assert len(mismatched) <= 0.05 * len(reference_hits), mismatched[:5]


def test_search_is_the_scored_search_without_scores(
    engine_1k: LuceneEngine, lucene_hits: list[list[tuple[str, float]]], reference_hits: list[dict]
) -> None:
    for hits, record in list(zip(lucene_hits, reference_hits, strict=True))[:: len(reference_hits) // 20]:
        assert engine_1k.search(record["query"], 10) == [asin for asin, _ in hits[:10]]
        assert engine_1k.search(record["query"]) == [asin for asin, _ in hits]


def test_embedded_analyzer_gives_lucenes_terms(webshop_1k: Path, reference_hits: list[dict]) -> None:
    documents = [search_document(p) for p in load_catalog(webshop_1k)]
    assert [analyze(document) for document in documents] == [lucene_terms(document) for document in documents]
    assert [analyze(r["query"]) for r in reference_hits] == [lucene_terms(r["query"]) for r in reference_hits]


def test_embedded_bm25_scores_are_lucenes_bit_for_bit(
    engine_1k: LuceneEngine, webshop_1k: Path, webshop_1k_references: Path, reference_hits: list[dict]
) -> None:
    """The default engine's float32 scores and order equal Lucene's own, before pyserini rounds."""
    java = lucene._java_class
    reader = java("org.apache.lucene.index.DirectoryReader").open(
        java("org.apache.lucene.store.FSDirectory").open(
            java("java.io.File")(str(engine_1k.index_dir)).toPath()
        )
    )
    searcher = java("org.apache.lucene.search.IndexSearcher")(
        reader, signature="(Lorg/apache/lucene/index/IndexReader;)V"
    )
    searcher.setSimilarity(java("org.apache.lucene.search.similarities.BM25Similarity")(0.9, 0.4))
    sort_field = java("org.apache.lucene.search.SortField")
    # Anserini's SimpleSearcher: score, then document id (BREAK_SCORE_TIES_BY_DOCID).
    by_score_then_id = java("org.apache.lucene.search.Sort")(
        sort_field.FIELD_SCORE, sort_field("id", java("org.apache.lucene.search.SortField$Type").STRING_VAL)
    )
    analyzer = java("io.anserini.analysis.DefaultEnglishAnalyzer").newDefaultInstance()
    bag_of_words = java("io.anserini.search.query.BagOfWordsQueryGenerator")()

    queries = [record["query"] for record in reference_hits]
    queries += json.loads((webshop_1k_references / "human_goals.json").read_text())[:300]
    words = [w for q in queries for w in q.split()]
    rng = random.Random(0)
    queries += [" ".join(rng.choices(words, k=rng.randint(1, 30))) for _ in range(200)]
    # Words typed 3 to 7 times: one clause boosted by the count, not the count's sum of clauses.
    queries += [
        " ".join(w for w in rng.choices(words, k=rng.randint(1, 6)) for _ in range(rng.randint(3, 7)))
        for _ in range(100)
    ]
    embedded = build_engine(load_catalog(webshop_1k), "bm25")
    for query in queries:
        top = searcher.search(
            bag_of_words.buildQuery("contents", analyzer, query), 50, by_score_then_id, True
        )
        expected = [(reader.document(hit.doc).get("id"), hit.score) for hit in top.scoreDocs]
        assert embedded.scored_search(query, 50) == expected, query  # type: ignore[attr-defined]


def test_porter_stems_equal_lucenes_on_the_catalogues_words(webshop_1k: Path) -> None:
    documents = [search_document(p) for p in load_catalog(webshop_1k)]
    roots = {word for document in documents for word in re.findall(r"[a-z]+", document)}
    suffixes = ("", "s", "es", "ing", "ed", "ly", "ness", "ation", "ity", "ies", "y", "er", "ful")
    words = sorted({root + suffix for root in roots for suffix in suffixes} - LUCENE_STOP_WORDS)
    stems: list[str] = []
    for start in range(0, len(words), 5000):  # words of [a-z] alone: one token each
        stems += lucene_terms(" ".join(words[start : start + 5000]))
    assert len(words) > 100_000
    assert [porter_stem(word) for word in words] == stems


def test_env_episode_with_lucene(webshop_1k: Path, reference_hits: list[dict]) -> None:
    env = WebShopEnv(catalog=webshop_1k, goals="synthetic", split="test", search_engine="lucene")
    assert isinstance(env.engine, LuceneEngine)
    _, info = env.reset(seed=0, options={"goal_index": 0})
    record = reference_hits[0]
    _, reward, terminated, _, info = env.step(f"search[{record['query']}]")
    assert info["action_error"] == "" and info["page"] == "results"
    product_clicks = (re.fullmatch(r"click\[(b[0-9a-z]{9})\]", a) for a in info["available_actions"])
    listed = [click.group(1).upper() for click in product_clicks if click]
    assert listed == [asin for asin, _ in record["hits"][:10]]
    _, _, _, _, info = env.step(f"click[{listed[0].lower()}]")
    _, reward, terminated, _, info = env.step("click[buy now]")
    assert terminated and info["purchased_asin"] == listed[0] and 0.0 <= reward <= 1.0
    env.close()


@pytest.mark.parametrize(
    "query",
    ["", "the and of", "***", "title:red", "red\x00shoes", "lone \ud800 surrogate", "😀 café"],
)
def test_odd_queries_answer_without_error(engine_1k: LuceneEngine, query: str) -> None:
    hits = engine_1k.search(query)
    assert isinstance(hits, list) and len(hits) <= 50


def test_queries_beyond_lucenes_clause_limit(engine_1k: LuceneEngine) -> None:
    # Lucene refuses more than 1,024 distinct terms unless told otherwise.
    long_query = "red shoes " + " ".join(f"word{i}x" for i in range(3000))
    assert engine_1k.search(long_query, 5) == engine_1k.search("red shoes", 5)
    assert engine_1k.search("red shoes", 0) == []


def test_documents_are_indexed_once_in_a_folder_keyed_by_them(data_dir: Path) -> None:
    asins, documents = ["B1", "B2", "B3"], ["red mug", "blue cup of tea", "   "]
    folder = default_index_dir(asins, documents)
    assert folder.parent == data_dir / "lucene"
    assert folder == default_index_dir(asins, documents)
    assert folder != default_index_dir(asins, ["red mugs", "blue cup of tea", "   "])
    engine = LuceneEngine.from_documents(asins, documents, show_progress=False)
    assert engine.index_dir == folder and is_lucene_index(folder)
    # A blank document is skipped, as the original's document generator does.
    assert (engine.manifest["documents"], engine.manifest["indexed"], engine.manifest["empty"]) == (3, 2, 1)
    stamp = (folder / lucene.MANIFEST_NAME).stat().st_mtime_ns
    assert build_lucene_index(asins, documents, folder, show_progress=False) == folder
    assert LuceneEngine.from_documents(asins, documents, show_progress=False).index_dir == folder
    assert (folder / lucene.MANIFEST_NAME).stat().st_mtime_ns == stamp  # not rebuilt
    assert not [p for p in folder.parent.iterdir() if ".building-" in p.name]  # no leftovers
    assert engine.search("mugs") == ["B1"]
    assert engine.search("Tea cups!") == ["B2"]
    # One term each, equal idf: the shorter document ranks first; "or" is a stop word.
    assert LuceneEngine(folder).search("blue OR red") == ["B1", "B2"]


def test_bad_arguments_get_clear_errors(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match="build_lucene_index"):
        LuceneEngine(tmp_path)
    with pytest.raises(ValueError, match="2 asins but 1 documents"):
        LuceneEngine.from_documents(["B1", "B2"], ["red mug"], tmp_path / "index")
    with pytest.raises(ValueError):
        build_lucene_index(["B1", "B2"], ["red mug"], tmp_path / "index", show_progress=False)
    assert not (tmp_path / "index").exists()
    assert list(tmp_path.iterdir()) == []


def test_missing_pyserini_or_java_says_what_to_install(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with monkeypatch.context() as patch:
        patch.setattr(lucene.importlib.util, "find_spec", lambda name: None)
        with pytest.raises(ImportError, match=r"pip install 'webshop-gym\[lucene\]'"):
            build_lucene_index(["B1"], ["red mug"], tmp_path / "index", show_progress=False)
    monkeypatch.setenv("JAVA_HOME", str(tmp_path))
    with pytest.raises(LuceneSetupError, match="openjdk-17-jdk-headless"):
        build_lucene_index(["B1"], ["red mug"], tmp_path / "index", show_progress=False)
    monkeypatch.delenv("JAVA_HOME")
    monkeypatch.setattr(lucene.shutil, "which", lambda name: None)
    monkeypatch.setattr(lucene, "DEBIAN_JAVA_DIR", tmp_path)
    with pytest.raises(LuceneSetupError, match="no Java found"):
        lucene.find_java_home()


def test_pickled_engine_searches_the_same(engine_1k: LuceneEngine) -> None:
    engine_1k.search("red shoes")
    copy = pickle.loads(pickle.dumps(engine_1k))
    copy.clear_cache()
    assert copy.search("red shoes") == engine_1k.search("red shoes")


def _search_in_child(engine: LuceneEngine, queue: multiprocessing.Queue) -> None:
    try:
        queue.put(engine.search("a query nobody asked before"))
    except RuntimeError as error:
        queue.put(str(error))


def test_forked_child_of_a_searching_process_gets_an_error_not_a_hang(engine_1k: LuceneEngine) -> None:
    engine_1k.search("red shoes")  # this process's JVM is running
    context = multiprocessing.get_context("fork")
    queue = context.Queue()
    child = context.Process(target=_search_in_child, args=(engine_1k, queue))
    child.start()
    child.join(60)
    assert child.exitcode == 0
    assert "does not survive fork" in queue.get(timeout=5)


def test_forked_workers_search_when_the_parent_only_built_the_engine(engine_1k: LuceneEngine) -> None:
    # As AsyncVectorEnv does: the parent builds (no JVM), forked workers search.
    script = textwrap.dedent(
        f"""
        import multiprocessing
        from webshop_gym.search import lucene

        engine = lucene.LuceneEngine({str(engine_1k.index_dir)!r})

        def work(queue):
            queue.put(engine.search("red shoes", 3))

        context = multiprocessing.get_context("fork")
        queue = context.Queue()
        child = context.Process(target=work, args=(queue,))
        child.start()
        print(queue.get(timeout=120))
        child.join(60)
        assert lucene._jvm_pid is None, "the parent started a JVM"
        """
    )
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=180)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == repr(engine_1k.search("red shoes", 3))


def test_documents_are_the_catalogues_search_documents(engine_1k: LuceneEngine, webshop_1k: Path) -> None:
    catalog = load_catalog(webshop_1k)
    expected = default_index_dir([p.asin for p in catalog], [search_document(p) for p in catalog])
    assert engine_1k.index_dir == expected
    assert engine_1k.manifest["indexed"] == len(catalog) == 1000
