"""Two agents' runs on the same goals, compared goal by goal.

    python -m benchmarks.harness.paired RUN_A.jsonl.xz RUN_B.jsonl.xz --names pi_ref "A*PO" --out record.md

Each file is an episode file of `benchmarks.harness.run` (``episodes/*.jsonl.xz``, a
`webshop_gym.trajectories` file; `benchmarks.harness.report.read_episode_file`). The runs must
have played the same goals (split manifest and goal numbers); each goal's episode of B is
set against A's. Printed: success and score of each, and of B - A, as means over goals with
95% bootstrap intervals (`benchmarks.intervals`) that resample goals (the pairs stay together, so the
interval of the difference is narrower than the two intervals suggest).
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks.harness.report import read_episode_file
from benchmarks.intervals import interval
from benchmarks.markdown import markdown_record, table


def load_episodes(path: Path) -> dict[tuple[str, int], dict[str, Any]]:
    """The episodes of one file by (split manifest, goal number)."""
    records = read_episode_file(path)
    if not records:
        raise ValueError(f"{path} holds no episodes")
    by_goal = {(str(r.get("split_manifest")), int(r["goal_index"])): r for r in records}
    if len(by_goal) != len(records):
        raise ValueError(f"{path} plays a goal more than once; pair runs of one episode per goal")
    return by_goal


def paired_values(
    first: dict[tuple[str, int], dict[str, Any]], second: dict[tuple[str, int], dict[str, Any]]
) -> dict[str, np.ndarray]:
    """Per goal, success and score (in %) of each run, in the goals' order."""
    if first.keys() != second.keys():
        only = sorted(first.keys() ^ second.keys())[:3]
        raise ValueError(
            f"the runs played different goals (e.g. {only}); run both on the same split and --episodes"
        )
    goals = sorted(first)
    return {
        f"{measure}_{side}": np.array([100.0 * float(run[goal][measure]) for goal in goals])
        for side, run in (("a", first), ("b", second))
        for measure in ("success", "score")
    }


def compare(first: Path, second: Path, names: Sequence[str]) -> dict[str, Any]:
    """Success and score of each run and of ``second`` - ``first``: per row, mean and interval.

    Returns ``{"goals": n, "rows": {name: {"success": (mean, low, high), "score": (...)}}}``
    with the rows A, B and "B - A" in that order.
    """
    values = paired_values(load_episodes(first), load_episodes(second))

    def summary(array: np.ndarray) -> tuple[float, float, float]:
        low, high = interval(array)
        return float(array.mean()), low, high

    rows: dict[str, dict[str, tuple[float, float, float]]] = {}
    for side, name in zip("ab", names, strict=True):
        rows[name] = {m: summary(values[f"{m}_{side}"]) for m in ("success", "score")}
    rows[f"{names[1]} - {names[0]}"] = {
        m: summary(values[f"{m}_b"] - values[f"{m}_a"]) for m in ("success", "score")
    }
    return {"goals": len(values["success_a"]), "rows": rows}


def render(comparison: dict[str, Any]) -> list[str]:
    """The comparison as a Markdown table (lines)."""

    def cell(figures: tuple[float, float, float]) -> str:
        mean, low, high = figures
        return f"{mean:.1f} [{low:.1f}, {high:.1f}]"

    rows = [[name, cell(r["success"]), cell(r["score"])] for name, r in comparison["rows"].items()]
    return table([f"run ({comparison['goals']} goals)", "success %", "score"], rows)


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.harness.paired",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("first", type=Path, help="episode file of run A")
    parser.add_argument("second", type=Path, help="episode file of run B (compared with A)")
    parser.add_argument("--names", nargs=2, default=("A", "B"), metavar=("A", "B"))
    parser.add_argument("--out", type=Path)
    args = parser.parse_args(argv)
    lines = render(compare(args.first, args.second, args.names))
    lines += [
        "",
        "Mean over goals [95% bootstrap interval, resampling goals; the difference keeps each "
        "goal's two episodes together].",
    ]
    text = markdown_record(
        f"# {args.names[1]} vs {args.names[0]}, goal by goal", lines, "benchmarks.harness.paired", argv
    )
    if args.out is not None:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(text)
    print(text)


if __name__ == "__main__":
    main()
