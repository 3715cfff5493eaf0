"""The shared fixtures of conftest.py: without the real 1k data a clone's tests skip, saying how
to get it; under CI they fail instead. Each case runs pytest in a subprocess on two tests, one
that needs the 1k files and one that needs the reference files too."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
TESTS = ROOT / "packages" / "webshop-gym" / "tests"
NEEDS_1K = f"{TESTS}/test_download.py::test_the_official_attribute_file_checksum"
NEEDS_REFERENCES = f"{TESTS}/test_search_documents.py::test_every_document_matches_the_original_index"


def run_pytest(tmp_path: Path, one_k_dir: Path, ci: str | None) -> subprocess.CompletedProcess[str]:
    """pytest on the two tests, with the data hidden: only ``one_k_dir`` is looked at, the data
    cache and home are empty folders."""
    env = {k: v for k, v in os.environ.items() if k not in ("CI", "XDG_CACHE_HOME")}
    env.update(WEBSHOP_1K_DIR=str(one_k_dir), WEBSHOP_GYM_DATA=str(tmp_path / "cache"), HOME=str(tmp_path))
    if ci is not None:
        env["CI"] = ci
    command = [
        sys.executable,
        "-m",
        "pytest",
        "-p",
        "no:cacheprovider",
        "-q",
        "-rsE",
        NEEDS_1K,
        NEEDS_REFERENCES,
    ]
    return subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)


def test_without_the_data_the_tests_skip_and_say_how_to_get_it(tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    result = run_pytest(tmp_path, empty, ci=None)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "2 skipped" in result.stdout and "failed" not in result.stdout and "error" not in result.stdout
    assert f"`webshop-gym data download --set 1k --dest {empty}`" in result.stdout


def test_without_the_reference_files_only_their_tests_skip(
    tmp_path: Path, webshop_1k: Path, webshop_1k_human: Path
) -> None:
    downloaded = tmp_path / "downloaded"  # what `webshop-gym data download --set 1k` leaves
    downloaded.mkdir()
    for name in ("items_shuffle_1000.json", "items_ins_v2_1000.json"):
        (downloaded / name).symlink_to(webshop_1k / name)
    result = run_pytest(tmp_path, downloaded, ci=None)
    assert "2 skipped" in result.stdout, result.stdout  # no human-instruction file: not the 1k set yet
    (downloaded / webshop_1k_human.name).symlink_to(webshop_1k_human)
    result = run_pytest(tmp_path, downloaded, ci=None)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "1 passed, 1 skipped" in result.stdout
    assert "reference_lucene_documents_1000.jsonl" in result.stdout
    assert "no command downloads them" in result.stdout


@pytest.mark.parametrize("ci", ["true", "1"])
def test_under_ci_missing_data_fails_the_run(tmp_path: Path, ci: str) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    result = run_pytest(tmp_path, empty, ci=ci)
    assert result.returncode == 1, result.stdout
    assert "2 errors" in result.stdout and "skipped" not in result.stdout
    assert "CI is set" in result.stdout
