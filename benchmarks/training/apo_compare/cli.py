"""The command line: ``python -m benchmarks.training.apo_compare`` (see the package's docstring)."""

from __future__ import annotations

import argparse
import json
import shlex
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from apo_agent.__main__ import parse_config_value
from apo_agent.config import ALGORITHMS
from apo_agent.presets import PRESETS
from benchmarks.intervals import BCA_MIN_SEEDS
from benchmarks.machine import describe_machine
from benchmarks.training import apo_compare
from benchmarks.training.apo_compare.analysis import compare
from benchmarks.training.apo_compare.report import label, markdown, plot
from benchmarks.training.apo_compare.runs import keep_policy, policies_of, run_all, run_name
from benchmarks.training.apo_curves import plot_curves


def parse_overrides(items: Sequence[str]) -> dict[str, Any]:
    """``["steps=4", "grpo:learning_rate=1e-4"]`` -> {"steps": 4, "grpo:learning_rate": 0.0001}:
    a field for every run, or with an algorithm's prefix for that method's runs only."""
    overrides = {}
    for item in items:
        name, _, text = item.partition("=")
        prefix, _, field = name.rpartition(":")
        if prefix and prefix not in ALGORITHMS:
            raise ValueError(
                f"--set {item}: write [ALGORITHM:]FIELD=VALUE with ALGORITHM one of {ALGORITHMS}"
            )
        overrides[name] = parse_config_value(field, text)
    return overrides


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.training.apo_compare", description=apo_compare.__doc__.split("\n\n")[0]
    )
    parser.add_argument("--out", type=Path, default=Path("benchmarks/results/apo"))
    parser.add_argument("--work", type=Path, default=Path("runs/apo-compare"), help="models and checkpoints")
    parser.add_argument(
        "--shared",
        type=Path,
        help="pi_ref and Stage 1 returns per seed, shared by comparisons (default --work)",
    )
    parser.add_argument("--preset", default="cpu-demo", choices=sorted(PRESETS), help="apo-agent preset")
    parser.add_argument("--seeds", type=int, nargs="+", default=list(range(10)))
    parser.add_argument(
        "--algorithms", nargs="+", choices=ALGORITHMS, default=list(ALGORITHMS), help="which to train"
    )
    parser.add_argument(
        "--rounds", type=int, default=1, help="A*PO rounds, each from the last one's policy (default 1)"
    )
    parser.add_argument(
        "--interval",
        choices=("t", "bca"),
        default="t",
        help=f"intervals over seeds: Student-t (default) or BCa bootstrap ({BCA_MIN_SEEDS}+ seeds)",
    )
    parser.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="[ALGORITHM:]FIELD=VALUE",
        help="config override, for every run or (apo:/grpo:) one method's",
    )
    parser.add_argument(
        "--side-by-side",
        action="store_true",
        help="run each seed's A*PO and GRPO at once (one process each), so the pair shares the load",
    )
    parser.add_argument(
        "--report-only",
        action="store_true",
        help="train nothing: report the seeds whose runs have all finished (runs side by side, then this)",
    )
    parser.add_argument(
        "--keep-policy",
        action="store_true",
        help="copy the first seed's A*PO policy into OUT/policy (a few MB: only the one record the "
        "`apo` benchmark agent plays keeps one)",
    )
    arguments = parser.parse_args(argv)
    if arguments.interval == "bca" and len(arguments.seeds) < BCA_MIN_SEEDS:
        parser.error(f"--interval bca needs at least {BCA_MIN_SEEDS} seeds")
    try:
        overrides = parse_overrides(arguments.set)
    except ValueError as error:
        parser.error(str(error))
    command = "python -m benchmarks.training.apo_compare " + shlex.join(
        argv if argv is not None else sys.argv[1:]
    )
    arguments.out.mkdir(parents=True, exist_ok=True)
    print(describe_machine(), flush=True)
    algorithms = [a for a in ALGORITHMS if a in arguments.algorithms]
    if arguments.rounds < 1 or (arguments.rounds > 1 and "apo" not in algorithms):
        parser.error("--rounds takes a whole number from 1, and more than 1 needs --algorithms apo")
    runs = run_all(
        arguments.out,
        arguments.work,
        arguments.seeds,
        overrides,
        algorithms,
        arguments.rounds,
        arguments.shared,
        arguments.preset,
        train=not arguments.report_only,
        side_by_side=arguments.side_by_side,
    )
    policies = policies_of(algorithms, arguments.rounds)
    seeds = [s for s in arguments.seeds if all(run_name(p, s) in runs for p in policies)]
    if not seeds:
        parser.exit(1, "no seed has all its runs finished: nothing to report\n")
    if seeds != arguments.seeds:
        print(f"reporting seeds {seeds}: the others have unfinished runs", flush=True)
    comparison = compare(runs, seeds, arguments.preset, arguments.interval)
    report = markdown(comparison, command)
    (arguments.out / "results.md").write_text(report)
    (arguments.out / "results.json").write_text(json.dumps(comparison.record(command), indent=2) + "\n")
    plot(arguments.out, seeds, policies, arguments.preset)
    if comparison.curves:
        labels = {p: label(p) for p in comparison.curves}
        plot_curves(comparison.curves, labels, arguments.out / "test_curves.png")
    if arguments.keep_policy and "apo" in algorithms:
        keep_policy(arguments.out, arguments.work, seeds[0], policies_of(["apo"], arguments.rounds)[-1])
    print(report)
