"""Proves that `pip install webshop-gym` (no extras) stays light, then runs the core tests on it.

    python scripts/check_minimal_install.py [--dist dist]

Installs the core wheel alone into a fresh venv and fails if torch, transformers, Flask,
spaCy, pyserini or a Java bridge came with it, or if the install exceeds 250 MB. Prints the
installed size and the largest distributions, then adds the test tools and runs the
webshop-gym tests that need nothing but the core, against the installed wheel.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CONSTRAINTS = ROOT / "constraints.txt"
FORBIDDEN = {"torch", "transformers", "flask", "spacy", "pyserini", "pyjnius", "jnius", "waitress"}
LIMIT_MB = 250
# Test files whose subject is the core install (extras have their own sessions).
CORE_TESTS = [
    "test_actions.py",
    "test_catalog.py",
    "test_envs.py",
    "test_goals.py",
    "test_mini_catalog.py",
    "test_policies.py",
    "test_random_actions.py",
    "test_reference.py",
    "test_render.py",
    "test_reward.py",
    "test_search_documents.py",
    "test_shaping.py",
    "test_shop.py",
]


def pip_install(python: str, *requirements: str) -> None:
    subprocess.run([python, "-m", "pip", "install", "-q", "-c", str(CONSTRAINTS), *requirements], check=True)


def purelib(python: str) -> Path:
    code = "import sysconfig; print(sysconfig.get_paths()['purelib'])"
    return Path(subprocess.check_output([python, "-c", code], text=True).strip())


def folder_size(path: Path) -> int:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file() and not f.is_symlink())


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--dist", type=Path, default=ROOT / "dist")
    args = parser.parse_args()
    wheels = sorted(args.dist.resolve().glob("webshop_gym-*.whl"))
    if not wheels:
        sys.exit(f"no webshop-gym wheel in {args.dist}: run `python scripts/build_packages.py` first")
    with tempfile.TemporaryDirectory(prefix="minimal-install-") as tmp:
        env_dir = Path(tmp) / "venv"
        venv.EnvBuilder(with_pip=True).create(env_dir)
        python = str(env_dir / "bin" / "python")
        site = purelib(python)
        before = {p.name for p in site.iterdir()}  # pip itself, before anything is installed
        baseline = folder_size(site)
        pip_install(python, str(wheels[-1]))
        listed = json.loads(subprocess.check_output([python, "-m", "pip", "list", "--format", "json"]))
        installed_mb = (folder_size(site) - baseline) / 1e6
        added = [p for p in site.iterdir() if p.is_dir() and p.name not in before and "-info" not in p.name]
        sizes = sorted(((folder_size(p) / 1e6, p.name) for p in added), reverse=True)
        print(f"installed: {len(listed)} distributions, {installed_mb:.1f} MB (limit {LIMIT_MB} MB)")
        print("largest:", ", ".join(f"{name} {mb:.1f} MB" for mb, name in sizes[:8]))
        heavy = sorted({d["name"].lower() for d in listed} & FORBIDDEN)
        if heavy:
            sys.exit(f"the core install pulled {heavy}: move them behind an extra")
        if installed_mb > LIMIT_MB:
            sys.exit(f"the core install takes {installed_mb:.1f} MB, over {LIMIT_MB} MB")
        pip_install(python, "pytest>=8", "hypothesis>=6", "thefuzz>=0.22")  # test tools only
        tests = ROOT / "packages" / "webshop-gym" / "tests"
        # From outside the repo, in importlib mode, so that webshop_gym comes from the wheel.
        pytest = [python, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--import-mode=importlib"]
        # The remote id's server is the `web` extra: the `extra-web` and `fast` test suites cover it.
        pytest += ["-k", "not Remote"]
        subprocess.run(
            [*pytest, "--rootdir", str(ROOT), *(str(tests / t) for t in CORE_TESTS)], check=True, cwd=tmp
        )


if __name__ == "__main__":
    main()
