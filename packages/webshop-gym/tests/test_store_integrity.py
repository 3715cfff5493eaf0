"""Issue 40: a damaged store never plays wrong silently; checksums in the manifest catch it."""

from __future__ import annotations

import json
import re
import shutil
import warnings
from pathlib import Path

import numpy as np
import pytest

from webshop_gym.cli import main
from webshop_gym.data import store
from webshop_gym.data.catalog import load_catalog
from webshop_gym.data.prepare import find_inputs, prepare_catalog
from webshop_gym.data.store import StoredCatalog, StoreError, open_store, verify_store
from webshop_gym.search.engines import build_engine


@pytest.fixture(scope="module")
def pristine(webshop_1k: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("pristine") / "webshop-1k"
    prepare_catalog(find_inputs(webshop_1k), out, progress=False)
    return out


@pytest.fixture
def copy(pristine: Path, tmp_path: Path) -> Path:
    folder = tmp_path / "webshop-1k"  # the same name: the same store as far as prepare is concerned
    shutil.copytree(pristine, folder)
    return folder


def _flip(path: Path, position: int) -> None:
    """Changes one byte, keeping the size (``position`` < 0 counts from the end)."""
    data = bytearray(path.read_bytes())
    data[position] ^= 0x5A
    path.write_bytes(bytes(data))


def _zero_a_price(folder: Path) -> None:
    prices = np.load(folder / "prices.npy")
    prices[7] = 0.0
    np.save(folder / "prices.npy", prices)


def _scramble_the_asin_index(folder: Path) -> None:
    rows = np.load(folder / "asin_rows.npy")
    rows[[3, 4]] = rows[[4, 3]]
    np.save(folder / "asin_rows.npy", rows)


def _flip_a_posting(folder: Path) -> None:
    _flip(folder / "index" / "postings_docs.npy", -100)


def _flip_a_term(folder: Path) -> None:
    _flip(folder / "index" / "terms.bin", 1000)


def _flip_a_product_byte(folder: Path) -> None:
    _flip(folder / "products.bin", 500)


DAMAGE = {
    "prices.npy": _zero_a_price,
    "asin_rows.npy": _scramble_the_asin_index,
    "index/postings_docs.npy": _flip_a_posting,
    "index/terms.bin": _flip_a_term,
    "products.bin": _flip_a_product_byte,
}


@pytest.mark.parametrize("damaged", list(DAMAGE))
def test_every_same_size_flip_is_caught(copy: Path, damaged: str, capsys) -> None:
    sizes = {p: p.stat().st_size for p in copy.rglob("*") if p.is_file()}
    DAMAGE[damaged](copy)
    assert sizes == {p: p.stat().st_size for p in copy.rglob("*") if p.is_file()}
    # The full check, from the command line: exit 1, the file named, what to run next.
    assert main(["data", "verify", str(copy)]) == 1
    error = capsys.readouterr().err
    assert damaged in error and "webshop-gym data prepare --force" in error, error
    with pytest.raises(StoreError, match=re.escape(damaged)):
        verify_store(copy)
    # A store of 1,000 products is small enough to check whole when it opens.
    with pytest.raises(StoreError, match=re.escape(damaged)):
        load_catalog(copy)


def test_prepare_repairs_a_damaged_store_instead_of_calling_it_unchanged(
    webshop_1k: Path, copy: Path
) -> None:
    _zero_a_price(copy)
    messages: list[str] = []
    result = prepare_catalog(find_inputs(webshop_1k), copy, progress=False, log=messages.append)
    assert not result.skipped
    assert any("prices.npy" in m for m in messages), messages
    verify_store(copy)
    assert prepare_catalog(find_inputs(webshop_1k), copy, progress=False).skipped


def test_a_manifest_that_disagrees_with_the_data_is_an_error(webshop_1k: Path, copy: Path) -> None:
    manifest = json.loads((copy / "manifest.json").read_text())
    manifest["products"] = 5000
    (copy / "manifest.json").write_text(json.dumps(manifest))
    with pytest.raises(StoreError, match=r"5,000 products.*offsets\.npy") as error:
        load_catalog(copy)
    assert "webshop-gym data prepare --force" in str(error.value)
    with pytest.raises(StoreError, match="5,000"):
        verify_store(copy)
    result = prepare_catalog(find_inputs(webshop_1k), copy, progress=False)
    assert not result.skipped and result.products == 1000


def test_open_checks_what_is_cheap_and_reading_damage_is_a_clear_error(
    copy: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A record's first byte (pickle's PROTO opcode) damaged, in a store too large to check
    # whole at open: the size check passes, the record read names the store and what to run.
    monkeypatch.setattr(store, "OPEN_CHECK_BYTES", 200_000)
    offsets = np.load(copy / "offsets.npy")
    _flip(copy / "products.bin", int(offsets[5]))
    catalog = load_catalog(copy)
    assert isinstance(catalog, StoredCatalog)
    assert catalog.product_at(4).asin
    with pytest.raises(StoreError, match=r"row 5.*webshop-gym data verify"):
        catalog.product_at(5)
    with pytest.raises(StoreError, match=r"products\.bin"):
        verify_store(copy)


def test_offsets_out_of_order_are_a_clear_error_not_einval(
    copy: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(store, "OPEN_CHECK_BYTES", 0)
    offsets = np.load(copy / "offsets.npy")
    offsets[10] = offsets[12]  # record 10 reads backwards: pread would fail with EINVAL
    np.save(copy / "offsets.npy", offsets)
    catalog = load_catalog(copy)
    assert isinstance(catalog, StoredCatalog)
    with pytest.raises(StoreError, match=r"damaged.*row 10"):
        catalog.product_at(10)


def test_stores_without_checksums_still_open(webshop_1k: Path, copy: Path, capsys) -> None:
    manifest = json.loads((copy / "manifest.json").read_text())
    del manifest["sha256"]  # as prepared before checksums were recorded
    (copy / "manifest.json").write_text(json.dumps(manifest))
    with pytest.warns(UserWarning, match="webshop-gym data prepare --force"):
        catalog = load_catalog(copy)
    assert len(catalog) == 1000 and build_engine(catalog).search("tea tree oil")
    assert main(["data", "verify", str(copy)]) == 1
    assert "no checksums" in capsys.readouterr().err
    messages: list[str] = []
    assert not prepare_catalog(find_inputs(webshop_1k), copy, progress=False, log=messages.append).skipped
    assert any("checksums" in m for m in messages)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        verify_store(copy)
        assert len(open_store(copy)) == 1000


def test_verify_passes_a_sound_store(copy: Path, tmp_path: Path, monkeypatch, capsys) -> None:
    assert main(["data", "verify", str(copy)]) == 0
    out = capsys.readouterr().out
    assert f"ok: {copy}" in out and "files" in out
    # Without a folder: the official stores in the data folder.
    monkeypatch.setenv("WEBSHOP_GYM_DATA", str(tmp_path / "data"))
    assert main(["data", "verify"]) == 1
    assert "no prepared store" in capsys.readouterr().err
    (tmp_path / "data").mkdir()
    shutil.copytree(copy, tmp_path / "data" / "webshop-1k")
    assert main(["data", "verify"]) == 0
    assert "ok:" in capsys.readouterr().out
    assert main(["data", "verify", str(tmp_path)]) == 1
    assert "not a prepared WebShop store" in capsys.readouterr().err
