"""Builds the sdist and wheel of every package into one folder and checks them with twine.

    python scripts/build_packages.py [--out dist]

The release workflow (.github/workflows/release.yml) and `nox -s build` both run this
script, so CI-built and locally built artefacts are the same.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# In dependency order: each package only needs the ones before it.
PACKAGES = ("webshop-gym", "shared-prompts", "apo-agent")


def build(out: Path) -> list[Path]:
    """Builds every package into ``out`` (emptied first); returns the artefacts."""
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    for package in PACKAGES:
        source = ROOT / "packages" / package
        if not (source / "pyproject.toml").is_file():
            raise SystemExit(f"packages/{package}/pyproject.toml is missing: every package must build")
        subprocess.run([sys.executable, "-m", "build", "--outdir", str(out), str(source)], check=True)
    artefacts = sorted(out.iterdir())
    subprocess.run([sys.executable, "-m", "twine", "check", "--strict", *map(str, artefacts)], check=True)
    return artefacts


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--out", type=Path, default=ROOT / "dist")
    args = parser.parse_args()
    for artefact in build(args.out.resolve()):
        print(artefact.relative_to(ROOT) if artefact.is_relative_to(ROOT) else artefact)


if __name__ == "__main__":
    main()
