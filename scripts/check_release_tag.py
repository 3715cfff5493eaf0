"""Checks that a release tag names the version of every package: `v0.1.0` needs 0.1.0 everywhere.

    python scripts/check_release_tag.py v0.1.0      # the release workflow passes $GITHUB_REF_NAME

Each package under packages/ states its version either in its pyproject.toml (``version``) or,
as hatch's dynamic version, in the file ``[tool.hatch.version] path`` names (``__version__ =
"..."``). Reads the files only: the release runner has nothing installed. Exits 1, naming each
package that differs, so that a tag is never published with mismatched packages.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

import tomllib  # Python 3.11+: the release workflow runs 3.11

ROOT = Path(__file__).resolve().parents[1]
VERSION_LINE = re.compile(r"""^__version__\s*=\s*["']([^"']+)["']""", re.MULTILINE)


def package_versions(packages: Path = ROOT / "packages") -> dict[str, str]:
    """{distribution name: version} of every package folder with a pyproject.toml."""
    versions: dict[str, str] = {}
    for pyproject in sorted(packages.glob("*/pyproject.toml")):
        config = tomllib.loads(pyproject.read_text(encoding="utf-8"))
        project = config["project"]
        if "version" in project:
            versions[project["name"]] = project["version"]
            continue
        source = pyproject.parent / config["tool"]["hatch"]["version"]["path"]
        found = VERSION_LINE.search(source.read_text(encoding="utf-8"))
        if found is None:
            raise ValueError(f"{source} has no __version__ line")
        versions[project["name"]] = found.group(1)
    if not versions:
        raise ValueError(f"no package under {packages}")
    return versions


def mismatches(tag: str, versions: dict[str, str]) -> list[str]:
    """One line per package whose version is not the tag's (``v`` prefix dropped).

    >>> mismatches("v0.2.0", {"a": "0.2.0", "b": "0.1.0"})
    ['b is 0.1.0, the tag says 0.2.0']
    """
    wanted = tag.removeprefix("refs/tags/").removeprefix("v")
    return [
        f"{name} is {version}, the tag says {wanted}"
        for name, version in versions.items()
        if version != wanted
    ]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("tag", help="the release tag, e.g. v0.1.0")
    parser.add_argument("--packages", type=Path, default=ROOT / "packages", help=argparse.SUPPRESS)
    arguments = parser.parse_args(argv)
    versions = package_versions(arguments.packages)
    wrong = mismatches(arguments.tag, versions)
    for line in wrong:
        print(f"error: {line}", file=sys.stderr)
    if not wrong:
        print(f"{arguments.tag}: " + ", ".join(f"{name} {version}" for name, version in versions.items()))
    return 1 if wrong else 0


if __name__ == "__main__":
    sys.exit(main())
