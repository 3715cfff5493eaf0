"""The prepared store: the same catalogue as the in-memory loader, read lazily, refused when broken."""

from __future__ import annotations

import hashlib
import json
import os
import random
import shutil
import subprocess
import sys
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest

import webshop_gym  # noqa: F401  (registers the ids)
from webshop_gym.data.catalog import load_catalog
from webshop_gym.data.goals import build_goals, goal_positions, goal_split, product_prices
from webshop_gym.data.model import Catalog
from webshop_gym.data.prepare import PrepareInputs, find_inputs, prepare_catalog
from webshop_gym.data.store import StoredCatalog, StoreError, open_store
from webshop_gym.search.engines import build_engine


@pytest.fixture(scope="module")
def memory(webshop_1k: Path) -> Catalog:
    return load_catalog(webshop_1k)  # type: ignore[return-value]


@pytest.fixture(scope="module")
def store_dir(webshop_1k: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("stores") / "webshop-1k"
    result = prepare_catalog(find_inputs(webshop_1k), out, progress=False)
    assert not result.skipped and result.products == 1000
    return out


@pytest.fixture(scope="module")
def stored(store_dir: Path) -> StoredCatalog:
    catalog = load_catalog(store_dir)
    assert isinstance(catalog, StoredCatalog)
    return catalog


def test_every_product_round_trips(memory: Catalog, stored: StoredCatalog) -> None:
    assert len(stored) == len(memory) == 1000
    assert list(stored) == list(memory.products)  # file order, every field
    for product in memory:
        assert product.asin in stored
        assert stored[product.asin] == product == stored.get(product.asin)
    assert "B000000000" not in stored and "ünïcode" not in stored and 7 not in stored
    with pytest.raises(KeyError):
        stored.get("B000000000")


def test_instructions_prices_and_goals_match_the_loader(memory: Catalog, stored: StoredCatalog) -> None:
    assert dict(stored.human_instructions) == memory.human_instructions
    assert dict(stored.synthetic_instructions) == memory.synthetic_instructions
    assert len(stored.synthetic_instructions) == len(memory.synthetic_instructions) == 415
    assert dict(product_prices(stored)) == product_prices(memory)
    assert list(product_prices(stored)) == [p.asin for p in memory]
    for source in ("human", "synthetic"):
        from_store, in_memory = build_goals(stored, source), build_goals(memory, source)
        assert len(from_store) == len(in_memory)
        assert list(from_store) == list(in_memory)
        assert list(goal_positions(from_store)) == list(goal_positions(in_memory))
        assert from_store[-1] == in_memory[-1] and from_store[2:5] == list(in_memory[2:5])
    assert len(build_goals(stored, "synthetic")) == 6910
    human = build_goals(stored, "human")
    assert [g.position for g in human] == [
        1195,
        2543,
        3018,
        3621,
        4058,
        4517,
        4999,
        5624,
        6682,
        7902,
        9122,
        9380,
        10170,
    ]
    assert goal_split(stored.name, len(human), "dev", goal_positions(human)) == range(0, 1)


def test_search_matches_the_in_memory_engine(
    memory: Catalog, stored: StoredCatalog, webshop_1k_references: Path
) -> None:
    hits = webshop_1k_references / "reference_bm25_hits_1000.jsonl"
    queries = [json.loads(line)["query"] for line in hits.open()]
    in_memory, from_store = build_engine(memory, "bm25"), build_engine(stored, "bm25")
    assert isinstance(from_store.index._docs.base, np.memmap)  # type: ignore[attr-defined]
    words = [w for q in queries for w in q.split()]
    rng = random.Random(0)
    queries += [" ".join(rng.choices(words, k=rng.randint(1, 15))) for _ in range(300)]
    for query in queries:
        for k in (50, 10, 1):
            assert from_store.search(query, k) == in_memory.search(query, k), query
    assert from_store.search("zzzz qqqq") == []


def test_open_is_shared_and_fast(store_dir: Path, stored: StoredCatalog) -> None:
    assert open_store(store_dir) is stored is load_catalog(store_dir)


def _digest_script(store: Path) -> str:
    return (
        "import hashlib\n"
        "from webshop_gym.data.catalog import load_catalog\n"
        "from webshop_gym.data.goals import build_goals, product_prices\n"
        f"c = load_catalog({str(store)!r})\n"
        "goals = list(build_goals(c, 'human')), list(build_goals(c, 'synthetic'))\n"
        "text = repr((*goals, dict(product_prices(c))))\n"
        "print(hashlib.sha256(text.encode()).hexdigest())\n"
    )


def test_prices_and_goals_are_identical_in_every_process(store_dir: Path, memory: Catalog) -> None:
    digests = set()
    for hash_seed in ("1", "2"):
        result = subprocess.run(
            [sys.executable, "-c", _digest_script(store_dir)],
            capture_output=True,
            text=True,
            check=True,
            env={**os.environ, "PYTHONHASHSEED": hash_seed},
        )
        digests.add(result.stdout.strip())
    # ... and equal to what the in-memory loader gives here.
    here = repr(
        (list(build_goals(memory, "human")), list(build_goals(memory, "synthetic")), product_prices(memory))
    )
    assert digests == {hashlib.sha256(here.encode()).hexdigest()}


def test_prepare_is_idempotent(webshop_1k: Path, tmp_path: Path) -> None:
    raw = tmp_path / "raw"
    shutil.copytree(webshop_1k, raw)
    out = tmp_path / "store"
    inputs = find_inputs(raw)
    assert not prepare_catalog(inputs, out, progress=False).skipped
    created = json.loads((out / "manifest.json").read_text())["created"]
    assert prepare_catalog(inputs, out, progress=False).skipped
    # Touched but unchanged (same bytes): hashed, still up to date.
    os.utime(inputs.attributes, ns=(1, 1))
    assert prepare_catalog(inputs, out, progress=False).skipped
    # Same size, other bytes: rebuilt.
    text = inputs.attributes.read_text(encoding="utf-8")
    inputs.attributes.write_text(text.replace("tea tree", "tea TREE", 1), encoding="utf-8")
    assert not prepare_catalog(inputs, out, progress=False).skipped
    assert load_catalog(out)["B07DJJXGB5"].attributes[0] == "tea TREE"
    assert prepare_catalog(inputs, out, progress=False, force=True).skipped is False
    manifest = json.loads((out / "manifest.json").read_text())
    assert [i["role"] for i in manifest["inputs"]] == ["products", "attributes", "human"]
    assert manifest["created"] >= created
    assert not list(tmp_path.glob(".store.partial-*"))


def _write_inputs(folder: Path, products: str, attributes: str = "{}") -> PrepareInputs:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "items_shuffle_t.json").write_text(products, encoding="utf-8")
    (folder / "items_ins_v2_t.json").write_text(attributes, encoding="utf-8")
    return find_inputs(folder)


@pytest.mark.parametrize(
    ("products", "attributes", "expected"),
    [
        ("truncate", "{}", r"items_shuffle_t\.json: the file is truncated"),
        ('[{"asin": "A1"}]', "{}", r"items_shuffle_t\.json: product 0: missing key"),
        (
            "ok",
            '{"A1": {"attributes": [1, 2]}, "A2": 5}',
            r"items_ins_v2_t\.json: entry 'A2' must be an object",
        ),
        ("ok", '{"A1": {"attributes": [1, 2]', r"items_ins_v2_t\.json: the file is truncated"),
        ('{"asin": "A1"}', "{}", r"items_shuffle_t\.json: invalid JSON at character 0: expected '\['"),
    ],
)
def test_bad_inputs_name_the_file_and_leave_no_store(
    webshop_1k: Path, tmp_path: Path, products: str, attributes: str, expected: str
) -> None:
    real = (webshop_1k / "items_shuffle_1000.json").read_text(encoding="utf-8")
    if products == "truncate":
        products = real[: len(real) // 2]
    elif products == "ok":
        products = json.dumps(json.loads(real)[:3])
    inputs = _write_inputs(tmp_path / "raw", products, attributes)
    out = tmp_path / "store"
    with pytest.raises(ValueError, match=expected):
        prepare_catalog(inputs, out, progress=False)
    assert not out.exists()
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".store.partial")] == []


def test_broken_stores_are_refused(store_dir: Path, tmp_path: Path) -> None:
    for damage, message in (
        ("format", "another version of webshop-gym"),
        ("unfinished", "unfinished prepare"),
        ("truncated", "damaged: products.bin"),
        ("missing", "incomplete: prices.npy is missing"),
    ):
        broken = tmp_path / damage
        shutil.copytree(store_dir, broken)
        manifest_path = broken / "manifest.json"
        manifest = json.loads(manifest_path.read_text())
        if damage == "format":
            manifest["format"] += 1
        elif damage == "unfinished":
            del manifest["complete"]
        elif damage == "truncated":
            with (broken / "products.bin").open("r+b") as f:
                f.truncate(1000)
        else:
            (broken / "prices.npy").unlink()
        manifest_path.write_text(json.dumps(manifest))
        with pytest.raises(StoreError, match=message) as error:
            load_catalog(broken)
        assert "webshop-gym data prepare" in str(error.value)


def test_envs_over_the_store(store_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    env = gym.make("WebShop-Text-v0", catalog=str(store_dir))  # human goals, paper splits: train
    assert isinstance(env.unwrapped.catalog, StoredCatalog)
    assert len(env.unwrapped.goal_indices) == 12
    _, info = env.reset(seed=0)
    *_, info = env.step(f"search[{info['instruction']}]")
    assert info["page"] == "results" and info["action_error"] == ""
    with pytest.raises(ValueError, match="'test' split of the human goals"):
        gym.make("WebShop-Text-v0", catalog=str(store_dir), split="test")
    # The named settings resolve to the prepared stores in the data folder.
    monkeypatch.setenv("WEBSHOP_GYM_DATA", str(tmp_path))
    (tmp_path / "webshop-1k").symlink_to(store_dir)
    env = gym.make("WebShop-Text-v0", catalog="1k", goals="synthetic", split="test")
    assert env.unwrapped.catalog is load_catalog(store_dir)
    assert len(env.unwrapped.goal_indices) == 500
    with pytest.raises(FileNotFoundError, match="webshop-gym data download --set full"):
        gym.make("WebShop-Text-v0")
    (tmp_path / "raw").mkdir()
    for name in ("items_shuffle.json", "items_ins_v2.json"):
        (tmp_path / "raw" / name).write_text("[]")
    with pytest.raises(FileNotFoundError, match="webshop-gym data prepare --set full"):
        gym.make("WebShop-Text-v0")
