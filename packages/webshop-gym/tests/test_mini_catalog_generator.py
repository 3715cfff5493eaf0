"""The mini catalogue generator (code plus ``mini_catalog_tables.json``) rewrites the bundle."""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest

PACKAGE = Path(__file__).resolve().parents[1]
GENERATOR = PACKAGE / "scripts" / "make_mini_catalog.py"
BUNDLED = PACKAGE / "src" / "webshop_gym" / "data" / "mini"
EXPECTED = {"items_shuffle_mini.json", "items_ins_v2_mini.json", "items_human_ins_mini.json"}


@pytest.fixture(scope="module")
def generator() -> Iterator[ModuleType]:
    """The script, imported in-process (it is no package module)."""
    name = "make_mini_catalog_under_test"
    spec = importlib.util.spec_from_file_location(name, GENERATOR)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses look their module up while the class is built
    try:
        spec.loader.exec_module(module)
        yield module
    finally:
        del sys.modules[name]


def test_generator_reads_its_tables_beside_it(generator: ModuleType) -> None:
    assert GENERATOR.with_name("mini_catalog_tables.json") == generator.TABLES_FILE
    assert [category.name for category in generator.CATEGORIES] == [
        "shoes",
        "electronics",
        "apparel",
        "fitness",
        "home",
        "accessories",
        "kitchen",
        "books",
    ]


def test_generator_writes_the_bundled_files_byte_for_byte(
    generator: ModuleType, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    generator.main(["--out", str(tmp_path)])
    written = {path.name for path in tmp_path.iterdir()}
    assert written == EXPECTED
    for name in sorted(written):
        assert (tmp_path / name).read_bytes() == (BUNDLED / name).read_bytes(), name
    assert capsys.readouterr().out.count("wrote ") == len(EXPECTED)
