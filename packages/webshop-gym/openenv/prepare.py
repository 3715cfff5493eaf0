"""Makes webshop_env/ a self-contained Docker build context: webshop-gym copied into vendor/, then locked.

The image is built from webshop_env/ alone (``openenv build`` and ``openenv push`` send only
that folder), and webshop-gym is not on PyPI yet, so its sources (pyproject.toml, README.md,
src/) are copied to ``webshop_env/vendor/webshop-gym`` (git-ignored), which webshop_env's
pyproject.toml names as webshop-gym's source. With ``--lock``, ``uv lock`` then brings uv.lock
up to date (the image installs it with ``uv sync --frozen``). ``nox -s build -- openenv`` runs both.

    python packages/webshop-gym/openenv/prepare.py [--lock] [--env-dir DIR]
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
from pathlib import Path

HERE = Path(__file__).resolve().parent
WEBSHOP_GYM = HERE.parent
ENV_DIR = HERE / "webshop_env"
# What a build of webshop-gym reads.
SOURCES = ("pyproject.toml", "README.md", "src")
# Written into the copy, so that a later run replaces only a folder this script made.
MARKER = ".copied-by-prepare"
SKIPPED = shutil.ignore_patterns("__pycache__", "*.pyc", "*.egg-info")


def vendor_webshop_gym(env_dir: Path = ENV_DIR) -> Path:
    """Copies webshop-gym's sources to ``env_dir/vendor/webshop-gym`` (a new copy); returns that folder."""
    target = env_dir / "vendor" / "webshop-gym"
    if target.exists():
        if not (target / MARKER).exists():
            raise FileExistsError(
                f"{target} exists and was not written by this script: move it away, then re-run"
            )
        shutil.rmtree(target)
    target.mkdir(parents=True)
    for name in SOURCES:
        source = WEBSHOP_GYM / name
        if source.is_dir():
            shutil.copytree(source, target / name, ignore=SKIPPED)
        else:
            shutil.copy2(source, target / name)
    (target / MARKER).write_text(
        "webshop-gym's sources for the image; rewritten by packages/webshop-gym/openenv/prepare.py\n"
    )
    return target


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lock", action="store_true", help="then run uv lock in the env folder")
    parser.add_argument("--env-dir", type=Path, default=ENV_DIR, help="the env folder (default: %(default)s)")
    args = parser.parse_args()
    target = vendor_webshop_gym(args.env_dir)
    print(f"webshop-gym copied to {target}")
    if args.lock:
        subprocess.run(["uv", "lock", "--directory", str(args.env_dir)], check=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
