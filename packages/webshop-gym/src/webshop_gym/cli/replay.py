"""The ``replay`` subcommand of ``webshop-gym`` (listed in `webshop_gym.cli.COMMANDS`).

``webshop-gym replay FILE...`` re-runs recorded trajectories (`webshop_gym.trajectories`)
through the env and checks that every observation and reward comes out as recorded (no
extra needed).
"""

from __future__ import annotations

import argparse
import sys
import warnings
from pathlib import Path

__all__ = ["add_replay_command", "run_replay"]


def add_replay_command(subparsers: argparse._SubParsersAction) -> argparse.ArgumentParser:
    """Adds ``replay`` to a ``webshop-gym`` subcommand parser."""
    parser = subparsers.add_parser(
        "replay",
        help="re-run recorded trajectories and check that they reproduce",
        description=(
            "Re-run each episode of trajectory files (from `webshop-gym serve` or TrajectoryRecorder) "
            "through a fresh env built from the recorded arguments; exit 1 if any observation, "
            "reward or end flag differs."
        ),
    )
    parser.add_argument(
        "files",
        nargs="+",
        type=Path,
        help="trajectory .jsonl, .jsonl.gz or .jsonl.xz files, or folders of them",
    )
    parser.add_argument("--catalog", default=None, help="use this catalogue instead of the recorded one")
    return parser


def _trajectory_files(paths: list[Path]) -> list[Path]:
    files: list[Path] = []
    for path in paths:
        if path.is_dir():
            files.extend(sorted(p for suffix in ("", ".gz", ".xz") for p in path.glob(f"*.jsonl{suffix}")))
        else:
            files.append(path)
    return files


def run_replay(args: argparse.Namespace) -> int:
    from webshop_gym.trajectories import read_trajectories, replay

    failures = episodes = 0
    for path in _trajectory_files(args.files):
        try:
            with warnings.catch_warnings():  # said below, once, in the command's own words
                warnings.simplefilter("ignore", RuntimeWarning)
                recorded = read_trajectories(path)
        except (OSError, ValueError) as error:
            print(f"{path}: cannot read: {error}", file=sys.stderr)
            failures += 1
            continue
        if recorded.dropped_torn_line:
            print(f"{path}: skipped a torn last line (a write cut short by a crash)")
        for number, episode in enumerate(recorded.episodes, start=1):
            episodes += 1
            try:
                result = replay(episode, catalog=args.catalog)
            except (FileNotFoundError, ValueError) as error:
                print(f"{path} episode {number}: cannot replay: {error}", file=sys.stderr)
                failures += 1
                continue
            verdict = "reproduced" if result.matches else "DIFFERS"
            branch = episode.branch_of
            branched = f" (episode {branch[0] + 1} to step {branch[1]}, then its own)" if branch else ""
            print(
                f"{path} episode {number}{branched}: goal {episode.header['goal_index']}, "
                f"{len(episode.steps)} steps, return {result.recorded_return:.4f} recorded / "
                f"{result.replayed_return:.4f} replayed: {verdict}"
            )
            for mismatch in result.mismatches:
                print(f"    {mismatch}")
            failures += not result.matches
    print(f"{episodes} episodes replayed, {failures} failed")
    return 1 if failures else 0
