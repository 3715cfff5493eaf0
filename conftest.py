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


def _find(references: bool) -> Path:
    from webshop_gym.data.locations import find_webshop_1k

    try:
        return find_webshop_1k(CHECKOUT, references=references)
    except FileNotFoundError as error:
        missing = str(error)
    if running_on_ci():
        pytest.fail(f"{missing} (CI is set: tests that need the data must run)", pytrace=False)
    pytest.skip(missing)


@pytest.fixture(scope="session")
def webshop_1k() -> Path:
    """The folder with the official 1,000-product files (items_shuffle_1000.json, ...)."""
    return _find(references=False)


@pytest.fixture(scope="session")
def webshop_1k_references() -> Path:
    """The folder with the 1k files and what the original code made of them (reference_*.json*,
    human_goals.json: `webshop_gym.data.locations.WEBSHOP_1K_REFERENCE_FILES`)."""
    return _find(references=True)


@pytest.fixture(scope="session")
def webshop_1k_human(webshop_1k: Path) -> Path:
    """The 1k folder's human-instruction file: items_human_ins.json as downloaded, or the
    1k set's entries of it (items_human_ins_1000.json) where a copy ships those instead."""
    from webshop_gym.data.locations import OFFICIAL_SETS

    human = OFFICIAL_SETS["1k"].human_file(webshop_1k)
    assert human is not None  # find_webshop_1k checked it
    return human
