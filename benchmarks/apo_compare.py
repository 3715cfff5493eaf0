"""pi_ref vs A*PO vs GRPO on the mini test split, over several seeds, on CPU.

    python -m benchmarks.apo_compare --out benchmarks/results/apo          # 3 seeds
    python -m benchmarks.apo_compare --out /tmp/apo --seeds 0 --set steps=4  # a quick look
    python -m benchmarks.apo_compare --out /tmp/apo --algorithms apo         # A*PO only

For each seed, the `cpu-demo` preset of apo-agent builds pi_ref (a small model warm-started
on imperfect expert demonstrations), evaluates it on the test split, trains it with A*PO
and, from the same pi_ref, with GRPO at the same number of Stage 2 episodes, and evaluates
both (``--algorithms`` runs a subset). A*PO also spends its Stage 1 reference episodes
(offline, once per pi_ref); the table gives both counts and the wall-clock of every stage.
Running the same command again reuses every run in ``--work`` that finished with the same
settings, so a stopped comparison goes on where it stopped. Written to ``--out``:

* ``results.md``: the table (mean ± std over seeds, then per seed), the machine, the command;
* ``results.json``: every figure; ``learning_curves.png``: training success per algorithm;
* ``runs/<algorithm>-seed<k>/``: each run's metrics.csv, learning curve and results.json;
* ``policy/``: the A*PO policy of the first seed (config.json + final-model/), which the
  ``apo`` benchmark agent plays by default.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import shlex
import shutil
import statistics
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from apo_agent.__main__ import parse_config_value
from apo_agent.config import ALGORITHMS, TrainConfig
from apo_agent.metrics import read_metrics
from apo_agent.pipeline import evaluate_reference, evaluate_saved, run_pipeline
from benchmarks.machine import describe_machine

LABELS = {"apo": "A*PO", "grpo": "GRPO"}
KEPT_FILES = ("metrics.csv", "learning_curve.png", "results.json", "config.json")
# The objectives optimise the sampling policy itself; when the preset evaluates greedily the
# report also gives the same policies sampled at this temperature.
SAMPLED = 1.0


def run_all(
    out: Path,
    work: Path,
    seeds: list[int],
    overrides: dict[str, Any],
    algorithms: Sequence[str] = ALGORITHMS,
) -> dict[str, Any]:
    """Runs every (seed, algorithm) pipeline; returns the per-run results."""
    runs: dict[str, Any] = {}
    for seed in seeds:
        for algorithm in algorithms:
            name = f"{algorithm}-seed{seed}"
            config = TrainConfig.from_preset(
                "cpu-demo",
                **{
                    "torch_threads": 2,
                    **overrides,
                    "seed": seed,
                    "algorithm": algorithm,
                    "output_dir": str(work / name),
                    "reference_dir": str(work / f"reference-seed{seed}"),
                    "resume": False,
                },
            )
            finished = finished_run(config)
            reused = " (finished earlier with the same settings: reused)" if finished else ""
            print(f"== {name}{reused}", flush=True)
            runs[name] = finished or run_pipeline(config)
            if config.eval_temperature != SAMPLED:
                runs[name]["test_sampled"] = evaluate_sampled(config, runs[name])
            kept = out / "runs" / name
            kept.mkdir(parents=True, exist_ok=True)
            for file in KEPT_FILES:
                if (work / name / file).is_file():
                    shutil.copy(work / name / file, kept / file)
    return runs


def finished_run(config: TrainConfig) -> dict[str, Any] | None:
    """The results of a run that already finished with exactly these settings (so a stopped
    comparison picks up where it stopped), else None."""
    path = Path(config.output_dir) / "results.json"
    if not path.is_file():
        return None
    try:
        results = json.loads(path.read_text())
    except json.JSONDecodeError:
        return None  # cut short while being written: run it again
    settings = json.loads(json.dumps(dataclasses.asdict(config), default=str))
    same = _training_settings(results.get("config") or {}) == _training_settings(settings)
    if not same or not Path(results.get("final_model", "")).is_dir():
        return None
    return dict(results)


# Settings that change how fast a run goes, not what it trains, so seeds run side by side on
# one thread each are reused by a later comparison that runs on two.
RUNTIME_ONLY = ("torch_threads", "progress")


def _training_settings(settings: dict[str, Any]) -> dict[str, Any]:
    return {name: value for name, value in settings.items() if name not in RUNTIME_ONLY}


def evaluate_sampled(config: TrainConfig, run: dict[str, Any]) -> dict[str, Any]:
    """pi_ref (evaluated once per reference, see `evaluate_reference`) and the trained policy
    on the test split, sampled."""
    sampled = dataclasses.replace(config, eval_temperature=SAMPLED)
    return {
        "reference": evaluate_reference(sampled, run["reference_model"]),
        "trained": evaluate_saved(sampled, run["final_model"], "test evaluation, sampled: trained"),
    }


def _mean_std(values: list[float]) -> str:
    if len(values) == 1:
        return f"{values[0]:.1f}"
    return f"{statistics.fmean(values):.1f} ± {statistics.stdev(values):.1f}"


def algorithms_run(runs: dict[str, Any], seeds: list[int]) -> list[str]:
    """The algorithms that ran, in `ALGORITHMS` order (every seed runs the same ones)."""
    return [a for a in ALGORITHMS if f"{a}-seed{seeds[0]}" in runs]


def summarise(runs: dict[str, Any], seeds: list[int]) -> dict[str, Any]:
    """Per policy: success, score and wall-clock over seeds."""
    algorithms = algorithms_run(runs, seeds)
    rows: dict[str, dict[str, list[float]]] = {}
    for seed in seeds:
        # Every run of a seed starts from the same pi_ref: read it off the first.
        reference = runs[f"{algorithms[0]}-seed{seed}"]["test"]["reference"]
        rows.setdefault("pi_ref", {}).setdefault("success", []).append(reference["success"])
        rows["pi_ref"].setdefault("score", []).append(reference["score"])
        for algorithm in algorithms:
            run = runs[f"{algorithm}-seed{seed}"]
            row = rows.setdefault(algorithm, {})
            row.setdefault("success", []).append(run["test"]["trained"]["success"])
            row.setdefault("score", []).append(run["test"]["trained"]["score"])
            row.setdefault("training_s", []).append(run["wall_time_s"]["training"])
            row.setdefault("stage1_episodes", []).append(run["stage1_episodes"])
            row.setdefault("stage2_episodes", []).append(run["stage2_episodes"])
            row.setdefault("improvement", []).append(run["improvement"]["success"])
            if "test_sampled" in run:
                sampled = run["test_sampled"]
                row.setdefault("sampled_success", []).append(sampled["trained"]["success"])
                row.setdefault("sampled_score", []).append(sampled["trained"]["score"])
                row.setdefault("sampled_improvement", []).append(
                    sampled["trained"]["success"] - sampled["reference"]["success"]
                )
                if algorithm == algorithms[0]:
                    rows["pi_ref"].setdefault("sampled_success", []).append(sampled["reference"]["success"])
                    rows["pi_ref"].setdefault("sampled_score", []).append(sampled["reference"]["score"])
    return rows


def markdown(rows: dict[str, Any], runs: dict[str, Any], seeds: list[int], command: str) -> str:
    algorithms = algorithms_run(runs, seeds)
    some = runs[f"{algorithms[0]}-seed{seeds[0]}"]
    goals = some["test"]["reference"]["goals"]
    temperature = some.get("config", {}).get("eval_temperature", SAMPLED)
    decoding = (
        "greedy decoding (temperature 0)"
        if temperature == 0
        else f"one sampled episode each (temperature {temperature:g})"
    )
    title = " vs ".join(LABELS[a] for a in algorithms)
    lines = [
        f"# {title} on the CPU demo (WebShop-Mini-Text-v0, test split)",
        "",
        f"Command: `{command}`  ",
        f"Machine: {describe_machine()}  ",
        f"Seeds: {', '.join(map(str, seeds))}; {goals} test goals, {decoding}. "
        "Success and score in %, mean ± std over seeds.",
        "",
        "| policy | success % | score | gain in success (points) | Stage 1 episodes | "
        "Stage 2 episodes | training wall-clock (s) |",
        "|---|---|---|---|---|---|---|",
        f"| pi_ref (warm start) | {_mean_std(rows['pi_ref']['success'])} | "
        f"{_mean_std(rows['pi_ref']['score'])} | | | | |",
    ]
    for algorithm in algorithms:
        row = rows[algorithm]
        lines.append(
            f"| after {LABELS[algorithm]} | {_mean_std(row['success'])} | {_mean_std(row['score'])} | "
            f"{_mean_std(row['improvement'])} | {row['stage1_episodes'][0]:.0f} | "
            f"{row['stage2_episodes'][0]:.0f} | {_mean_std(row['training_s'])} |"
        )
    if "sampled_success" in rows["pi_ref"]:
        lines += [
            "",
            f"The same policies sampled at temperature {SAMPLED:g} (the policy itself, which both "
            "objectives optimise):",
            "",
            "| policy | success % | score | gain in success (points) |",
            "|---|---|---|---|",
            f"| pi_ref (warm start) | {_mean_std(rows['pi_ref']['sampled_success'])} | "
            f"{_mean_std(rows['pi_ref']['sampled_score'])} | |",
        ]
        for algorithm in algorithms:
            row = rows[algorithm]
            lines.append(
                f"| after {LABELS[algorithm]} | {_mean_std(row['sampled_success'])} | "
                f"{_mean_std(row['sampled_score'])} | {_mean_std(row['sampled_improvement'])} |"
            )
    labels = [LABELS[a] for a in algorithms]
    lines += [
        "",
        "Training wall-clock covers Stage 1 (A*PO only) and Stage 2, not the warm start or the test "
        "evaluations. Per seed:",
        "",
        "| seed | pi_ref success / score | "
        + " | ".join(
            [f"{label} success / score" for label in labels] + [f"{label} training s" for label in labels]
        )
        + " |",
        "|---|---|" + "---|" * (2 * len(algorithms)),
    ]
    for seed in seeds:
        trained = [runs[f"{a}-seed{seed}"] for a in algorithms]
        reference = trained[0]["test"]["reference"]
        cells = [
            f"{r['test']['trained']['success']:.1f} / {r['test']['trained']['score']:.1f}" for r in trained
        ]
        cells += [f"{r['wall_time_s']['training']:.0f}" for r in trained]
        lines.append(
            f"| {seed} | {reference['success']:.1f} / {reference['score']:.1f} | " + " | ".join(cells) + " |"
        )
    return "\n".join(lines) + "\n"


def plot(out: Path, seeds: list[int], algorithms: Sequence[str] = ALGORITHMS) -> Path:
    """Training success against Stage 2 episodes, one line per run."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, axis = plt.subplots(figsize=(6.5, 3.8))
    colours = {"apo": "tab:blue", "grpo": "tab:orange"}
    for algorithm in algorithms:
        for index, seed in enumerate(seeds):
            rows = read_metrics(out / "runs" / f"{algorithm}-seed{seed}" / "metrics.csv")
            xs = [r["episodes"] for r in rows]
            ys = [100 * r["charts/success"] for r in rows]
            label = LABELS[algorithm] if index == 0 else None
            axis.plot(xs, ys, color=colours[algorithm], alpha=0.7, label=label)
    axis.set_xlabel("Stage 2 episodes")
    axis.set_ylabel("training success % (per step)")
    axis.set_title("CPU demo: training success, one line per seed", fontsize=10)
    axis.grid(alpha=0.3)
    axis.legend()
    figure.tight_layout()
    path = out / "learning_curves.png"
    figure.savefig(path, dpi=110)
    plt.close(figure)
    return path


def keep_policy(out: Path, work: Path, seed: int) -> None:
    """The A*PO policy of one seed, for the ``apo`` benchmark agent."""
    target = out / "policy"
    shutil.rmtree(target, ignore_errors=True)
    target.mkdir(parents=True)
    shutil.copy(work / f"apo-seed{seed}" / "config.json", target / "config.json")
    shutil.copytree(work / f"apo-seed{seed}" / "final-model", target / "final-model")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=Path("benchmarks/results/apo"))
    parser.add_argument("--work", type=Path, default=Path("runs/apo-compare"), help="models and checkpoints")
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument(
        "--algorithms", nargs="+", choices=ALGORITHMS, default=list(ALGORITHMS), help="which to train"
    )
    parser.add_argument("--set", action="append", default=[], metavar="FIELD=VALUE", help="config override")
    arguments = parser.parse_args(argv)
    overrides = {}
    for item in arguments.set:
        name, _, text = item.partition("=")
        overrides[name] = parse_config_value(name, text)
    command = "python -m benchmarks.apo_compare " + shlex.join(argv if argv is not None else sys.argv[1:])
    arguments.out.mkdir(parents=True, exist_ok=True)
    print(describe_machine(), flush=True)
    algorithms = [a for a in ALGORITHMS if a in arguments.algorithms]
    runs = run_all(arguments.out, arguments.work, arguments.seeds, overrides, algorithms)
    rows = summarise(runs, arguments.seeds)
    table = markdown(rows, runs, arguments.seeds, command)
    (arguments.out / "results.md").write_text(table)
    (arguments.out / "results.json").write_text(
        json.dumps({"command": command, "machine": describe_machine(), "summary": rows}, indent=2) + "\n"
    )
    plot(arguments.out, arguments.seeds, algorithms)
    if "apo" in algorithms:
        keep_policy(arguments.out, arguments.work, arguments.seeds[0])
    print(table)


if __name__ == "__main__":
    main()
