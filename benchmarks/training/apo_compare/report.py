"""Rendering: a `Comparison` (`benchmarks.training.apo_compare.analysis`) as results.md, and the
training curves as learning_curves.png.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from apo_agent.config import ALGORITHMS
from apo_agent.runtime.metrics import moving_average, read_metrics
from benchmarks.intervals import BCA_MIN_SEEDS, METHODS
from benchmarks.markdown import row_line, table
from benchmarks.training.apo_compare.analysis import Comparison, PairedDifference
from benchmarks.training.apo_compare.runs import SAMPLED, earlier_rounds, round_of, run_name
from benchmarks.training.apo_curves import estimate_cell, time_to_targets_lines

LABELS = {"apo": "A*PO", "grpo": "GRPO"}
SMOOTHING_STEPS = 12  # the learning curves' moving average, in Stage 2 steps


def label(policy: str) -> str:
    algorithm = policy.partition("-")[0]
    return LABELS[algorithm] + (f", {round_of(policy)} rounds" if round_of(policy) > 1 else "")


DIFFERENCE_COLUMNS = {
    "success": "success (points)",
    "score": "score",
    "sampled_success": f"sampled success (points, T = {SAMPLED:g})",
    "sampled_score": "sampled score",
}


def signed(difference: float) -> str:
    """``"+1.0"``, ``"-3.0"``, and ``"0.0"`` for a tie (not "-0.0" for -3.6e-15)."""
    text = f"{difference:+.1f}"
    return "0.0" if text in ("+0.0", "-0.0") else text


def difference_lines(paired: dict[str, dict[str, PairedDifference]], seeds: list[int]) -> list[str]:
    """Per policy, the per-seed table of its differences from GRPO, their mean [95% paired
    t-interval] (and BCa from `BCA_MIN_SEEDS` seeds) and the sign count."""
    lines: list[str] = []
    for policy, columns in paired.items():
        rows = [
            [seed, *(signed(d.values[index]) for d in columns.values())] for index, seed in enumerate(seeds)
        ]
        for interval_method in next(iter(columns.values())).estimates:
            rows.append(
                [f"mean [95% {METHODS[interval_method]}]"]
                + [estimate_cell(d.estimates[interval_method]) for d in columns.values()]
            )
        rows.append(
            [f"seeds {label(policy)} above / equal / below"]
            + [" / ".join(map(str, d.signs)) for d in columns.values()]
        )
        lines += [
            "",
            f"### {label(policy)} - GRPO",
            "",
            *table(["seed", *(DIFFERENCE_COLUMNS[c] for c in columns)], rows),
        ]
    return lines


def markdown(comparison: Comparison, command: str) -> str:
    """results.md (see the package's docstring): the summary table, the sampled policies' where
    the preset evaluates greedily, the per-seed table, the paired differences and the costs to
    every run's targets."""
    policies, seeds, estimates = comparison.policies, comparison.seeds, comparison.estimates
    temperature = comparison.eval_temperature
    decoding = (
        "greedy decoding (temperature 0)"
        if temperature == 0
        else f"one sampled episode each (temperature {temperature:g})"
    )
    title = " vs ".join(LABELS[a] for a in ALGORITHMS if a in policies)
    method = METHODS[comparison.method]

    def cell(policy: str, figure: str, digits: int = 1) -> str:
        return estimate_cell(estimates[policy][figure], digits) if figure in estimates[policy] else ""

    def count(policy: str, figure: str) -> str:  # episodes: the same in every seed unless a budget cut them
        values = estimates[policy][figure].values
        return f"{values[0]:.0f}" if len(set(values)) == 1 else cell(policy, figure, 0)

    # pi_ref's empty cells are written "| |", the rows below it "|  |": as the recorded results have them.
    main = table(
        [
            "policy",
            "success %",
            "score",
            "gain in success (points)",
            "Stage 1 episodes",
            "Stage 2 episodes",
            "training CPU s, Stage 1 included",
            "training CPU s, Stage 2 only",
            "training wall-clock s",
        ],
        [],
    )
    main.append(
        row_line(
            ["pi_ref (warm start)", cell("pi_ref", "success"), cell("pi_ref", "score"), *[""] * 6],
            tight_empty=True,
        )
    )
    main += [
        row_line(
            [
                f"after {label(policy)}",
                cell(policy, "success"),
                cell(policy, "score"),
                cell(policy, "improvement"),
                count(policy, "stage1_episodes"),
                count(policy, "stage2_episodes"),
                cell(policy, "training_cpu_s", 0),
                cell(policy, "stage2_cpu_s", 0),
                cell(policy, "training_s", 0),
            ]
        )
        for policy in policies
    ]
    lines = [
        f"# {title}, apo-agent preset `{comparison.preset}` ({comparison.environment}, test split)",
        "",
        f"Command: `{command}`  ",
        f"Machine: {comparison.machine}  ",
        f"Seeds: {', '.join(map(str, seeds))}; {comparison.test_goals} test goals, {decoding}. "
        f"Success and score in %, mean [95% {method}] over the {len(seeds)} seeds.",
        "",
        *main,
        "",
        "Training time covers Stage 1 (A*PO only) and Stage 2 (of every round so far), not the warm "
        "start or the test evaluations. CPU time (all the process's threads) is the clock to compare "
        "when other work shares the machine; wall-clock is given for completeness.",
    ]
    for policy in policies:
        if "stage1_cpu_share" in estimates[policy]:
            lines.append(
                f"Stage 1's share of {label(policy)}'s training CPU time: "
                f"{cell(policy, 'stage1_cpu_share')} %."
            )
    if any(round_of(p) > 1 for p in policies):
        lines += [
            "",
            "Each A*PO round after the first takes the last round's policy as its pi_ref (its own "
            "Stage 1, and the KL anchor moves with it); gains are against the warm start, and the "
            "episodes and times add up the rounds so far.",
        ]
    if "sampled_success" in estimates["pi_ref"]:
        lines += [
            "",
            f"The same policies sampled at temperature {SAMPLED:g} (the policy itself, which both "
            "objectives optimise):",
            "",
            *table(["policy", "success %", "score", "gain in success (points)"], []),
            row_line(
                [
                    "pi_ref (warm start)",
                    cell("pi_ref", "sampled_success"),
                    cell("pi_ref", "sampled_score"),
                    "",
                ],
                tight_empty=True,
            ),
            *(
                row_line(
                    [
                        f"after {label(policy)}",
                        cell(policy, "sampled_success"),
                        cell(policy, "sampled_score"),
                        cell(policy, "sampled_improvement"),
                    ]
                )
                for policy in policies
            ),
        ]
    labels = [label(p) for p in policies]
    summary = comparison.summary
    per_seed = []
    for index, seed in enumerate(seeds):
        cells = [seed, f"{summary['pi_ref']['success'][index]:.1f} / {summary['pi_ref']['score'][index]:.1f}"]
        cells += [f"{summary[p]['success'][index]:.1f} / {summary[p]['score'][index]:.1f}" for p in policies]
        for policy in policies:  # the rounds so far
            row = summary[policy]
            cells += [f"{row[k][index]:.0f}" if k in row else "" for k in ("training_cpu_s", "stage2_cpu_s")]
        per_seed.append(cells)
    lines += [
        "",
        "Per seed (CPU s: Stage 1 included, then Stage 2 only):",
        "",
        *table(
            ["seed", "pi_ref success / score"]
            + [f"{name} success / score" for name in labels]
            + [c for name in labels for c in (f"{name} CPU s, Stage 1 incl.", f"{name} CPU s, Stage 2")],
            per_seed,
        ),
    ]
    if comparison.paired:
        lines += [
            "",
            "## Paired differences, seed by seed",
            "",
            "Both methods train from the same pi_ref in each seed; the difference of their final test "
            "success and score per seed, its mean over seeds with a paired 95% interval (Student-t; "
            f"BCa too from {BCA_MIN_SEEDS} seeds), and how many seeds it is above, equal to and below zero.",
            *difference_lines(comparison.paired, seeds),
        ]
    if comparison.time_to_targets is not None:
        names = {p: label(p) for p in comparison.curves}
        lines += [
            "",
            "## Time to reach test success levels that every run reaches",
            "",
            "Test success (greedy) of pi_ref and of every checkpoint, against the training CPU time and "
            "the episodes sampled, Stage 1 included ([test_curves.png](test_curves.png)). Targets: the "
            "largest success every run of every method reaches on its test curve (the top), and the "
            "level halfway to it from the best pi_ref of any seed; every seed reaches both, so each "
            "mean is over all seeds. A run's cost to a target is interpolated between the evaluations "
            f"around it; mean [95% {method}] over seeds.",
            "",
            *time_to_targets_lines(comparison.time_to_targets, names),
        ]
    return "\n".join(lines) + "\n"


def episodes_before(out: Path, policy: str, seed: int) -> int:
    """Stage 2 episodes of the A*PO rounds before this one (0 for a first round), from the
    kept metrics.csv files."""
    total = 0
    for earlier in earlier_rounds(policy)[:-1]:
        rows = read_metrics(out / "runs" / run_name(earlier, seed) / "metrics.csv")
        total += rows[-1]["episodes"] if rows else 0
    return total


def training_curve(out: Path, policy: str, seed: int) -> tuple[list[int], list[float]]:
    """Stage 2 episodes (counting on from the rounds before) and training success % per step."""
    offset = episodes_before(out, policy, seed)
    rows = read_metrics(out / "runs" / run_name(policy, seed) / "metrics.csv")
    rows = [r for r in rows if "charts/success" in r]  # not the dev evaluation before step 1
    return [offset + r["episodes"] for r in rows], [100 * r["charts/success"] for r in rows]


def plot(out: Path, seeds: list[int], policies: Sequence[str] = ALGORITHMS, preset: str = "cpu-demo") -> Path:
    """Training success against Stage 2 episodes, one line per run; later A*PO rounds go on
    from where the round before them ended."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, axis = plt.subplots(figsize=(6.5, 3.8))
    colours = {"apo": "tab:blue", "grpo": "tab:orange"}
    for policy in policies:
        algorithm = policy.partition("-")[0]
        for index, seed in enumerate(seeds):
            xs, ys = training_curve(out, policy, seed)
            first_line = index == 0 and round_of(policy) == 1
            if index == 0 and round_of(policy) > 1:  # a new pi_ref, and new goals with signal
                start = episodes_before(out, policy, seed)
                axis.axvline(start, color="grey", linestyle=":", linewidth=1)
                axis.annotate(f" round {round_of(policy)}", (start, 2), color="grey", fontsize=8)
            axis.plot(xs, ys, color=colours[algorithm], alpha=0.12, linewidth=0.8)
            axis.plot(
                xs,
                moving_average(ys, SMOOTHING_STEPS),
                color=colours[algorithm],
                alpha=0.9,
                label=LABELS[algorithm] if first_line else None,
            )
    axis.set_xlabel("Stage 2 episodes")
    axis.set_ylabel("training success %")
    axis.set_title(
        f"{preset}: training success per step (faint) and over {SMOOTHING_STEPS} steps, one line per seed",
        fontsize=9,
    )
    axis.grid(alpha=0.3)
    axis.legend()
    figure.tight_layout()
    path = out / "learning_curves.png"
    figure.savefig(path, dpi=110)
    plt.close(figure)
    return path
