"""benchmarks.env.ray_pool's set-up of the original WebShop: paths pointed at the 1k set, checkout
untouched."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from benchmarks.env.ray_pool import (
    ORIGINAL_DATA_FILES,
    link_original_checkout,
    original_data_source,
    report,
)

# The way the original's web_agent_site/utils.py finds its data: relative to its own file.
PATHS_MODULE = """
from os.path import abspath, dirname, join

BASE_DIR = dirname(abspath(__file__))
DATA = {name: join(BASE_DIR, "..", "data", name) for name in %r}
"""


@pytest.fixture
def checkout(tmp_path: Path) -> Path:
    """A folder laid out as a checkout of the original, with a module that finds data as it does."""
    root = tmp_path / "WebShop"
    (root / "web_agent_site" / "envs").mkdir(parents=True)
    (root / "web_agent_site" / "__init__.py").write_text("")
    (root / "web_agent_site" / "envs" / "web_agent_text_env.py").write_text("")
    (root / "web_agent_site" / "utils.py").write_text(PATHS_MODULE % sorted(ORIGINAL_DATA_FILES))
    return root


def test_the_checkouts_code_reads_the_1k_files_from_the_linked_folder(
    checkout: Path, tmp_path: Path, webshop_1k: Path
) -> None:
    before = sorted(path.relative_to(checkout) for path in checkout.rglob("*"))
    site = link_original_checkout(checkout, webshop_1k, tmp_path / "site")
    program = (
        f"import sys; sys.path.insert(0, {str(site)!r}); import web_agent_site.utils as utils; "
        "print(utils.__file__); "
        "[print(name, open(path, 'rb').read().hex()) for name, path in utils.DATA.items()]"
    )
    shown = subprocess.run([sys.executable, "-B", "-c", program], capture_output=True, text=True, check=True)
    module, *files = shown.stdout.splitlines()
    assert (
        Path(module).resolve() == (checkout / "web_agent_site" / "utils.py").resolve()
    )  # the checkout's code
    for line in files:
        name, content = line.split()
        assert bytes.fromhex(content) == original_data_source(webshop_1k, name).read_bytes(), name
    assert sorted(path.relative_to(checkout) for path in checkout.rglob("*")) == before


def test_a_folder_that_is_not_the_original_is_refused_with_the_clone_command(
    tmp_path: Path, webshop_1k: Path
) -> None:
    with pytest.raises(SystemExit, match=re.escape("git clone https://github.com/princeton-nlp/WebShop")):
        link_original_checkout(tmp_path, webshop_1k, tmp_path / "site")


def test_a_missing_1k_file_is_named(checkout: Path, tmp_path: Path) -> None:
    with pytest.raises(SystemExit, match=re.escape("items_shuffle_1000.json not found")):
        link_original_checkout(checkout, tmp_path / "empty", tmp_path / "site")


def memory(pss: float) -> list[dict[str, float]]:
    return [{"rss": pss + 40, "anonymous": pss - 10, "pss": pss, "private": pss - 5}]


def test_without_the_original_the_record_says_how_to_measure_it() -> None:
    one = {"envs": 1, "memory": memory(38.0), "steps": 45, "seconds": 0.15}
    batch = {"envs": 8, "memory": memory(66.0) * 8, "steps": 360, "seconds": 1.2, "built": 4.4}
    figures = {
        "results": {
            "one env, one process, no Ray": one,
            "bare Ray actors (nothing in them)": {
                "envs": 0,
                "memory": memory(50.0) * 8,
                "steps": 0,
                "seconds": 0.0,
            },
            "8 actors x 1 env": batch,
            "4 actors x 16 envs": {**batch, "envs": 64, "memory": memory(75.0) * 4},
        },
        "skipped": [],
        "actors": [8],
        "pooled": "4 actors x 16 envs",
        "store_mb": 3.0,
        "rounds": 3,
        "ray_version": "2.60.0",
        "cpus": 2,
        "cpus_per_actor": 0.03,
        "load_average": [1.0, 1.0, 1.0],
        "original_commit": None,
    }
    lines = report(figures)
    assert lines[0].startswith("| setting | processes | envs |")
    assert lines[2] == "| one env, one process, no Ray | 1 | 1 | 78 | 28 | 38 | 78 | 38 | 38.0 |  | 300 |"
    # A cell with nothing to say stays empty, as the recorded ray_pool.md writes it: "|  |".
    assert lines[3] == "| bare Ray actors (nothing in them) | 8 | 0 | 90 | 40 | 50 | 720 | 400 |  |  |  |"
    assert lines[5].endswith("| 300 | 4.7 | 4.4 s | 300 |")  # PSS per env: 4 x 75 MB over 64 envs
    assert "Not measured here" in lines[-1]
    assert "nox -s bench -- ray-pool --original /path/to/WebShop" in lines[-1]
