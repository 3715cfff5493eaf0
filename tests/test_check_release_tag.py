"""scripts/check_release_tag.py: a release tag must equal every package's version."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def check():
    spec = importlib.util.spec_from_file_location(
        "check_release_tag", ROOT / "scripts" / "check_release_tag.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_reads_each_package_version_where_hatch_takes_it(check):
    versions = check.package_versions()
    assert set(versions) == {"webshop-gym", "shared-prompts", "apo-agent"}
    for name, module in (
        ("webshop-gym", "webshop_gym"),
        ("shared-prompts", "shared_prompts"),
        ("apo-agent", "apo_agent"),
    ):
        source = (ROOT / "packages" / name / "src" / module / "__init__.py").read_text(encoding="utf-8")
        assert re.search(rf'^__version__ = "{re.escape(versions[name])}"$', source, re.MULTILINE)


def test_the_current_versions_pass_and_any_other_tag_fails(check, capsys):
    version = next(iter(check.package_versions().values()))
    assert check.main([f"v{version}"]) == 0
    assert check.main(["v999.0.0"]) == 1
    assert "the tag says 999.0.0" in capsys.readouterr().err


def test_one_package_behind_fails_the_tag(check, tmp_path, capsys):
    for name, version in (("a", "1.2.0"), ("b", "1.1.0")):
        (tmp_path / name / "src").mkdir(parents=True)
        (tmp_path / name / "src" / "__init__.py").write_text(f'__version__ = "{version}"\n')
        (tmp_path / name / "pyproject.toml").write_text(
            f'[project]\nname = "{name}"\ndynamic = ["version"]\n'
            '[tool.hatch.version]\npath = "src/__init__.py"\n'
        )
    (tmp_path / "c").mkdir()
    (tmp_path / "c" / "pyproject.toml").write_text('[project]\nname = "c"\nversion = "1.2.0"\n')
    assert check.package_versions(tmp_path) == {"a": "1.2.0", "b": "1.1.0", "c": "1.2.0"}
    assert check.main(["v1.2.0", "--packages", str(tmp_path)]) == 1
    assert capsys.readouterr().err.strip() == "error: b is 1.1.0, the tag says 1.2.0"
