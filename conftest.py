"""Fixtures every test suite of the monorepo shares: the real WebShop 1k data.

The data never lives in the repo. `webshop_gym.data.locations.find_webshop_1k` finds it
(``$WEBSHOP_1K_DIR``, else what ``webshop-gym data download --set 1k`` fetched, else
``../shared/webshop-1k`` beside this checkout). Without it a test that needs it is skipped,
with a message saying how to get it, except under CI (``CI`` set, as CI services do), where
a missing file must fail the run instead of thinning it.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

CHECKOUT = Path(__file__).resolve().parent


def running_on_ci() -> bool:
    """CI services set ``CI`` (GitHub Actions, GitLab, ...: ``true``)."""
    return os.environ.get("CI", "").strip().lower() not in ("", "0", "false", "no")


def _find(references: bool, tmp_path_factory: pytest.TempPathFactory) -> Path:
    from webshop_gym.data.locations import find_webshop_1k

    try:
        return _named_webshop_1k(find_webshop_1k(CHECKOUT, references=references), tmp_path_factory)
    except FileNotFoundError as error:
        missing = str(error)
    if running_on_ci():
        pytest.fail(f"{missing} (CI is set: tests that need the data must run)", pytrace=False)
    pytest.skip(missing)


def _named_webshop_1k(folder: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``folder``, or links to its data files in a folder named ``webshop-1k``: a catalogue is named
    after its folder, and the tests expect the real set's name (in reprs, stores, split hashes),
    also when the files come from ``raw/`` of the data cache or a folder of another name."""
    if folder.name == "webshop-1k":
        return folder
    named = tmp_path_factory.mktemp("real-data") / "webshop-1k"
    named.mkdir()
    for file in folder.iterdir():
        if file.is_file() and file.suffix in (".json", ".jsonl"):
            (named / file.name).symlink_to(file.resolve())
    return named


@pytest.fixture(scope="session")
def webshop_1k(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The folder with the official 1,000-product files (items_shuffle_1000.json, ...)."""
    return _find(references=False, tmp_path_factory=tmp_path_factory)


@pytest.fixture(scope="session")
def webshop_1k_references(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The folder with the 1k files and what the original code made of them (reference_*.json*,
    human_goals.json: `webshop_gym.data.locations.WEBSHOP_1K_REFERENCE_FILES`)."""
    return _find(references=True, tmp_path_factory=tmp_path_factory)


@pytest.fixture(scope="session")
def webshop_1k_human(webshop_1k: Path) -> Path:
    """The 1k folder's human-instruction file: items_human_ins.json as downloaded, or the
    1k set's entries of it (items_human_ins_1000.json) where a copy ships those instead."""
    from webshop_gym.data.locations import OFFICIAL_SETS

    human = OFFICIAL_SETS["1k"].human_file(webshop_1k)
    assert human is not None  # find_webshop_1k checked it
    return human
