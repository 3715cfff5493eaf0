"""Split manifests: which goals the train, dev and test splits hold, and one hash that names them.

A score on "the test split" can be compared with another only if both played the same
goals. `split_manifest` lists the goal numbers (`webshop_gym.data.model.Goal.position`) of
each split of a catalogue's goals, cut as `webshop_gym.data.goals.goal_split` cuts them,
and a SHA-256 over them. Goals are listed by number, so a goal's index in the goal list is
its place among all the numbers; for the mini catalogue and synthetic goals number and
index are the same, and for human goals of real data the number is the paper's. Two runs
with the same hash played the same goal numbers of a catalogue of the same name and the
same goal source in each split (the goals' texts are not hashed: `webshop_gym.data.goals`
and its tests keep them). Every benchmark result records the hash (``benchmarks/harness/run.py``);
an env tells it with ``env.unwrapped.split_manifest``.

The mini catalogue's manifests ship with the package (`MINI_MANIFESTS`) and a test checks
that the computed ones equal them, so a change to the splits cannot pass unnoticed. Real
catalogues' goals are computed from their data, so their manifests are computed when
asked for: ``python -m webshop_gym.data.splits 1k`` prints them.

Example:
    >>> from webshop_gym.data.catalog import load_catalog
    >>> manifest = split_manifest(load_catalog("mini"), "human")
    >>> manifest.catalogue, manifest.goal_source
    ('mini', 'human')
    >>> {name: len(numbers) for name, numbers in manifest.splits.items()}
    {'train': 630, 'dev': 100, 'test': 100}
    >>> manifest == load_manifests(MINI_MANIFESTS)[0]
    True
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import weakref
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from webshop_gym.data.goals import GoalSource, Split, build_goals, goal_positions, goal_split
from webshop_gym.data.model import BaseCatalog

__all__ = [
    "MINI_MANIFESTS",
    "SPLIT_NAMES",
    "SplitManifest",
    "dump_manifests",
    "load_manifests",
    "manifest_hash",
    "split_manifest",
]

SPLIT_NAMES: tuple[Split, ...] = ("train", "dev", "test")
GOAL_SOURCES: tuple[GoalSource, ...] = ("human", "synthetic")
# The mini catalogue's manifests, human then synthetic goals (`python -m webshop_gym.data.splits mini`).
MINI_MANIFESTS = Path(__file__).with_name("mini_splits.json")
_HASH_TAG = "webshop-gym split manifest 1"  # changes only if the hashed bytes change meaning

_REWRITE_HINT = "python -m webshop_gym.data.splits mini > src/webshop_gym/data/mini_splits.json"


@dataclass(frozen=True, eq=False)
class SplitManifest:
    """The goal numbers of each split of one catalogue's goals of one source, and their hash.

    Attributes:
        catalogue: The catalogue's name (`BaseCatalog.name`: ``"mini"``, ``"webshop-1k"``, ...).
        goal_source: ``"human"`` or ``"synthetic"``.
        splits: Split name (`SPLIT_NAMES`) -> the goal numbers it holds, ascending (read-only int64).
        sha256: `manifest_hash` of the above.
    """

    catalogue: str
    goal_source: str
    splits: Mapping[str, np.ndarray]
    sha256: str

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, SplitManifest):
            return NotImplemented
        return (
            (self.catalogue, self.goal_source, self.sha256)
            == (other.catalogue, other.goal_source, other.sha256)
            and self.splits.keys() == other.splits.keys()
            and all(np.array_equal(self.splits[name], other.splits[name]) for name in self.splits)
        )

    def __hash__(self) -> int:
        return hash((self.catalogue, self.goal_source, self.sha256))

    def __repr__(self) -> str:
        sizes = ", ".join(f"{name}={len(numbers)}" for name, numbers in self.splits.items())
        return (
            f"SplitManifest(catalogue={self.catalogue!r}, goal_source={self.goal_source!r}, "
            f"goals: {sizes}, sha256={self.sha256[:12]}...)"
        )

    def to_json(self) -> dict[str, Any]:
        """The manifest as JSON data (`from_json` reads it back)."""
        return {
            "catalogue": self.catalogue,
            "goal_source": self.goal_source,
            "sha256": self.sha256,
            "splits": {name: self.splits[name].tolist() for name in SPLIT_NAMES},
        }

    @classmethod
    def from_json(cls, data: object) -> SplitManifest:
        """A manifest from `to_json` data, its hash checked.

        Raises:
            ValueError: The data is not a manifest, or its hash does not match its splits.
        """
        fields = {"catalogue", "goal_source", "sha256", "splits"}
        if not isinstance(data, Mapping) or set(data) != fields:
            raise ValueError(f"a split manifest is an object with exactly the fields {sorted(fields)}")
        splits = data["splits"]
        if not isinstance(splits, Mapping) or set(splits) != set(SPLIT_NAMES):
            raise ValueError(f"a split manifest's splits are exactly {', '.join(SPLIT_NAMES)}")
        numbers: dict[str, np.ndarray] = {}
        for name in SPLIT_NAMES:
            values = splits[name]
            if not isinstance(values, list) or not all(type(v) is int for v in values):
                raise ValueError(f"split {name!r} of a manifest must be a list of goal numbers (ints)")
            numbers[name] = _frozen(np.array(values, dtype=np.int64))
        catalogue, goal_source = data["catalogue"], data["goal_source"]
        if not isinstance(catalogue, str) or goal_source not in GOAL_SOURCES:
            raise ValueError(
                "a split manifest names a catalogue (a string) and goal_source 'human' or 'synthetic'"
            )
        expected = manifest_hash(catalogue, goal_source, numbers)
        if data["sha256"] != expected:
            raise ValueError(
                f"the {goal_source} split manifest of {catalogue!r} says sha256 {data['sha256']!r}, but its "
                f"splits hash to {expected!r}: it was edited by hand; write it again from the code"
            )
        return cls(catalogue, goal_source, numbers, expected)


def manifest_hash(catalogue: str, goal_source: str, splits: Mapping[str, Sequence[int] | np.ndarray]) -> str:
    """SHA-256 (hex) of a tag, the catalogue name and goal source (as JSON), then per split in
    `SPLIT_NAMES` order its name, its size and its goal numbers as little-endian int64.

    >>> manifest_hash("mini", "human", {"train": [2], "dev": [1], "test": [0]})[:12]
    'aac6105cfd79'
    """
    digest = hashlib.sha256(json.dumps([_HASH_TAG, catalogue, goal_source]).encode())
    for name in SPLIT_NAMES:
        numbers = np.asarray(splits[name], dtype="<i8")
        digest.update(f"\n{name}:{len(numbers)}\n".encode())
        digest.update(numbers.tobytes())
    return digest.hexdigest()


# One manifest per catalogue and goal source: envs ask for it, and a large catalogue's
# synthetic goals number in the millions.
_MANIFESTS: weakref.WeakKeyDictionary[BaseCatalog, dict[str, SplitManifest]] = weakref.WeakKeyDictionary()


def split_manifest(catalog: BaseCatalog, goals: GoalSource) -> SplitManifest:
    """The split manifest of ``catalog``'s ``goals`` (computed once per catalogue and source).

    Args:
        catalog: The catalogue (`webshop_gym.data.catalog.load_catalog`).
        goals: ``"human"`` or ``"synthetic"``.

    Raises:
        ValueError: ``goals`` is neither ``"human"`` nor ``"synthetic"``.
    """
    if goals not in GOAL_SOURCES:
        raise ValueError(f"goals must be 'human' or 'synthetic', got {goals!r}")
    cached = _MANIFESTS.setdefault(catalog, {})
    manifest = cached.get(goals)
    if manifest is None:
        positions = goal_positions(build_goals(catalog, goals))
        splits: dict[str, np.ndarray] = {}
        for name in SPLIT_NAMES:
            indices = goal_split(catalog.name, len(positions), name, positions=positions)
            splits[name] = _numbers(positions, indices)
        manifest = cached[goals] = SplitManifest(
            catalog.name, goals, splits, manifest_hash(catalog.name, goals, splits)
        )
    return manifest


def _numbers(positions: Sequence[int], indices: range) -> np.ndarray:
    """The goal numbers at ``indices`` (a copy, never a view of a store's memory map)."""
    chosen = positions[indices.start : indices.stop]
    if isinstance(chosen, range):  # a store's synthetic goals: numbered 0..n-1
        return _frozen(np.arange(chosen.start, chosen.stop, dtype=np.int64))
    return _frozen(np.array(chosen, dtype=np.int64))


def _frozen(array: np.ndarray) -> np.ndarray:
    array.flags.writeable = False
    return array


def dump_manifests(manifests: Sequence[SplitManifest]) -> str:
    """Manifests as a JSON list, one line per split (the format of `MINI_MANIFESTS`)."""
    parts = []
    for manifest in manifests:
        data = manifest.to_json()
        splits = ",\n".join(f'      "{name}": {json.dumps(data["splits"][name])}' for name in SPLIT_NAMES)
        header = ",\n".join(
            f"    {json.dumps(key)}: {json.dumps(data[key])}"
            for key in ("catalogue", "goal_source", "sha256")
        )
        parts.append(f'  {{\n{header},\n    "splits": {{\n{splits}\n    }}\n  }}')
    return "[\n" + ",\n".join(parts) + "\n]\n"


def load_manifests(path: str | os.PathLike[str]) -> list[SplitManifest]:
    """The manifests of a file written by `dump_manifests`, each hash checked.

    Raises:
        ValueError: The file is not a list of manifests, or a hash does not match.
    """
    data = json.loads(Path(path).read_text(encoding="utf-8"))
    if not isinstance(data, list):
        raise ValueError(f"{path} must hold a JSON list of split manifests")
    try:
        return [SplitManifest.from_json(entry) for entry in data]
    except ValueError as error:
        raise ValueError(f"{path}: {error} (from packages/webshop-gym: {_REWRITE_HINT})") from None


def main(argv: Sequence[str] | None = None) -> None:
    """Prints the human and synthetic split manifests of a catalogue as JSON."""
    from webshop_gym.data.catalog import load_catalog
    from webshop_gym.data.locations import resolve_catalog

    parser = argparse.ArgumentParser(prog="python -m webshop_gym.data.splits", description=main.__doc__)
    parser.add_argument(
        "catalog", nargs="?", default="mini", help="'mini', '1k', 'full' or a folder (default: mini)"
    )
    args = parser.parse_args(argv)
    catalog = load_catalog(resolve_catalog(args.catalog))
    print(dump_manifests([split_manifest(catalog, source) for source in GOAL_SOURCES]), end="")


if __name__ == "__main__":
    main()
