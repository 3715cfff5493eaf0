"""`find_webshop_1k`: where the tests and benchmarks find the real 1k data, and what they say
when it is nowhere."""

from __future__ import annotations

from pathlib import Path

import pytest

from webshop_gym.cli import main
from webshop_gym.data.locations import (
    WEBSHOP_1K_DIR_ENV,
    WEBSHOP_1K_REFERENCE_FILES,
    find_webshop_1k,
    holds_webshop_1k,
    raw_dir,
    webshop_1k_places,
)

OFFICIAL_1K = ("items_shuffle_1000.json", "items_ins_v2_1000.json", "items_human_ins_1000.json")


@pytest.fixture
def places(tmp_path: Path, monkeypatch) -> dict[str, Path]:
    """A data cache, a checkout with a ``shared/webshop-1k`` folder beside it, and a named folder,
    all empty; no variable points anywhere yet."""
    monkeypatch.delenv(WEBSHOP_1K_DIR_ENV, raising=False)
    monkeypatch.setenv("WEBSHOP_GYM_DATA", str(tmp_path / "cache"))
    checkout = tmp_path / "work" / "webshop-gym"
    checkout.mkdir(parents=True)
    beside = tmp_path / "work" / "shared" / "webshop-1k"
    for folder in (raw_dir(), beside, tmp_path / "mine"):
        folder.mkdir(parents=True)
    return {"checkout": checkout, "cache": raw_dir(), "beside": beside, "named": tmp_path / "mine"}


def _fill(folder: Path, *names: str) -> Path:
    for name in names:
        (folder / name).write_text("[]")
    return folder


def test_the_variable_wins_over_the_cache_and_the_folder_beside(places, monkeypatch) -> None:
    for where in ("cache", "beside", "named"):
        _fill(places[where], *OFFICIAL_1K)
    monkeypatch.setenv(WEBSHOP_1K_DIR_ENV, str(places["named"]))
    assert find_webshop_1k(places["checkout"]) == places["named"]
    assert webshop_1k_places(places["checkout"]) == [places["named"]]


def test_a_variable_naming_an_empty_folder_is_not_passed_over(places, monkeypatch) -> None:
    _fill(places["beside"], *OFFICIAL_1K)
    monkeypatch.setenv(WEBSHOP_1K_DIR_ENV, str(places["named"]))
    with pytest.raises(FileNotFoundError) as missing:
        find_webshop_1k(places["checkout"])
    assert str(places["named"]) in str(missing.value) and str(places["beside"]) not in str(missing.value)


def test_the_cache_comes_before_the_folder_beside_the_checkout(places) -> None:
    _fill(places["beside"], *OFFICIAL_1K)
    assert find_webshop_1k(places["checkout"]) == places["beside"]
    _fill(places["cache"], "items_shuffle_1000.json", "items_ins_v2_1000.json", "items_human_ins.json")
    assert find_webshop_1k(places["checkout"]) == places["cache"]
    assert find_webshop_1k() == places["cache"]  # no checkout: the cache alone


def test_a_cache_that_holds_the_full_set_too_is_passed_over_and_named(places) -> None:
    _fill(places["cache"], *OFFICIAL_1K, "items_shuffle.json", "items_ins_v2.json")
    assert not holds_webshop_1k(places["cache"])  # find_inputs would refuse it: two product files
    with pytest.raises(FileNotFoundError, match="holds another set's files too"):
        find_webshop_1k(places["checkout"])
    _fill(places["beside"], *OFFICIAL_1K)
    assert find_webshop_1k(places["checkout"]) == places["beside"]


def test_nowhere_says_where_it_looked_and_how_to_get_the_data(places) -> None:
    _fill(places["cache"], "items_shuffle_1000.json")  # an interrupted download
    with pytest.raises(FileNotFoundError) as missing:
        find_webshop_1k(places["checkout"])
    message = str(missing.value)
    assert str(places["cache"]) in message and str(places["beside"]) in message
    assert "`webshop-gym data download --set 1k`" in message and WEBSHOP_1K_DIR_ENV in message


def test_the_reference_files_are_looked_for_the_same_way(places) -> None:
    _fill(places["cache"], *OFFICIAL_1K)
    with pytest.raises(FileNotFoundError) as missing:
        find_webshop_1k(places["checkout"], references=True)
    message = str(missing.value)
    assert "reference_bm25_hits_1000.jsonl" in message and "no command downloads them" in message
    assert WEBSHOP_1K_DIR_ENV in message
    _fill(places["beside"], *OFFICIAL_1K, *WEBSHOP_1K_REFERENCE_FILES)
    assert find_webshop_1k(places["checkout"]) == places["cache"]
    assert find_webshop_1k(places["checkout"], references=True) == places["beside"]


def test_what_data_download_fetched_is_found(webshop_1k: Path, places) -> None:
    """`webshop-gym data download --set 1k` (here from the 1k folder, as --source) puts the set
    where the finder looks."""
    download = ["data", "download", "--set", "1k", "--source", str(webshop_1k), "--no-verify", "--quiet"]
    assert main(download) == 0
    assert find_webshop_1k(places["checkout"]) == places["cache"]
    assert (places["cache"] / "items_ins_v2_1000.json").read_bytes() == (
        webshop_1k / "items_ins_v2_1000.json"
    ).read_bytes()
