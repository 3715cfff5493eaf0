"""Shared fixtures: the real WebShop 1k data lives beside the repo, never inside it."""

from __future__ import annotations

from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[3]
WEBSHOP_1K = REPO_ROOT.parent / "shared" / "webshop-1k"


@pytest.fixture(scope="session")
def webshop_1k() -> Path:
    """The directory with the official 1,000-product files (CI has it beside the clone)."""
    if not (WEBSHOP_1K / "items_shuffle_1000.json").is_file():
        pytest.fail(f"real WebShop data not found at {WEBSHOP_1K}; clone the repo next to shared/")
    return WEBSHOP_1K
