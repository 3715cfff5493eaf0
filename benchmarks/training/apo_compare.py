"""pi_ref vs A*PO vs GRPO on the mini test split, paired by seed.

    python -m benchmarks.training.apo_compare --out benchmarks/results/apo          # seeds 0-9
    python -m benchmarks.training.apo_compare --out /tmp/apo --seeds 0 --set steps=4  # a quick look
    python -m benchmarks.training.apo_compare --out /tmp/apo --algorithms apo         # A*PO only
    python -m benchmarks.training.apo_compare --out /tmp/apo --rounds 3               # A*PO in 3 rounds
    python -m benchmarks.training.apo_compare --out /tmp/apo --preset smollm2         # another preset

For each seed, an apo-agent preset (``--preset``, default `cpu-demo`) builds pi_ref,
evaluates it on the test split, trains it with A*PO and, from the same pi_ref, with GRPO,
and evaluates both (``--algorithms`` runs a subset). A*PO also spends its Stage 1 reference
episodes (offline, once per pi_ref); the report counts them, and its CPU time, both with
Stage 1 and without. With ``--rounds R`` A*PO runs R times in a row, each round taking the
policy the last one made as its pi_ref (a fresh Stage 1, and the KL anchor moves with it);
every round is reported against the first pi_ref, with the cost of all rounds so far.

Running the same command again reuses every run that finished with the same training
settings: from its kept record ``--out/runs/<name>/results.json`` (which holds all the
report needs, so ``--work`` may be gone, e.g. on another machine), else from ``--work``.
Written to ``--out``:

* ``results.md``: mean and 95% interval over seeds (Student-t, or BCa with ``--interval bca``
  and 10+ seeds) of each policy, per-seed rows, the paired per-seed differences A*PO - GRPO,
  and the CPU time and episodes to test-success levels that every run reaches;
* ``results.json``: every figure; ``learning_curves.png``: training success per algorithm;
  ``test_curves.png``: test success against CPU time and episodes (`benchmarks.training.apo_curves`);
* ``runs/<algorithm>-seed<k>/``: each run's metrics.csv, learning curve, config and record;
* ``policy/``: the (last round's) A*PO policy of the first seed (config.json +
  final-model/), which the ``apo`` benchmark agent plays by default.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import multiprocessing
import shlex
import shutil
import sys
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch

from apo_agent.__main__ import parse_config_value
from apo_agent.config import ALGORITHMS, TrainConfig
from apo_agent.evaluation import evaluate, evaluate_reference
from apo_agent.pipeline import run_pipeline
from apo_agent.presets import PRESETS
from apo_agent.runtime.checkpoints import latest_checkpoint
from apo_agent.runtime.metrics import moving_average, read_metrics
from benchmarks.intervals import BCA_MIN_SEEDS, METHODS
from benchmarks.machine import describe_machine
from benchmarks.markdown import row_line, table
from benchmarks.training.apo_curves import (
    CurvePoint,
    Estimate,
    TimeToTargets,
    curve_from_json,
    curves_json,
    estimate_cell,
    plot_curves,
    success_curve,
    time_to_targets,
    time_to_targets_lines,
)

LABELS = {"apo": "A*PO", "grpo": "GRPO"}
# Copied from the run's folder; the kept results.json is written from the run's full record.
KEPT_FILES = ("metrics.csv", "learning_curve.png", "config.json")
SMOOTHING_STEPS = 12  # the learning curves' moving average, in Stage 2 steps
# The objectives optimise the sampling policy itself; when the preset evaluates greedily the
# report also gives the same policies sampled at this temperature.
SAMPLED = 1.0


def policies_of(algorithms: Sequence[str], rounds: int = 1) -> list[str]:
    """The trained policies a comparison reports: "apo", "apo-round2", ..., "grpo"."""
    if rounds < 1:
        raise ValueError(f"rounds must be at least 1, got {rounds}")
    policies = []
    for algorithm in algorithms:
        policies.append(algorithm)
        if algorithm == "apo":
            policies += [f"apo-round{r}" for r in range(2, rounds + 1)]
    return policies


def run_name(policy: str, seed: int) -> str:
    """``apo-round2`` of seed 0 runs in ``apo-seed0-round2``."""
    algorithm, _, round_ = policy.partition("-")
    return f"{algorithm}-seed{seed}" + (f"-{round_}" if round_ else "")


def round_of(policy: str) -> int:
    return int(policy.partition("-round")[2] or 1)


def label(policy: str) -> str:
    algorithm = policy.partition("-")[0]
    return LABELS[algorithm] + (f", {round_of(policy)} rounds" if round_of(policy) > 1 else "")


def run_config(
    preset: str, overrides: dict[str, Any], seed: int, policy: str, work: Path, shared: Path
) -> TrainConfig:
    """The config of one (seed, policy) run of a comparison: ``preset`` with ``overrides``
    (an ``algorithm:field`` key only for that method), in ``work/<run name>``, resuming a
    checkpoint of the same settings there."""
    name = run_name(policy, seed)
    algorithm = policy.partition("-")[0]
    settings = {
        "torch_threads": 2,
        **{k: v for k, v in overrides.items() if ":" not in k},
        # "grpo:learning_rate" applies to GRPO's runs only: each method its tuned value.
        **{k.partition(":")[2]: v for k, v in overrides.items() if k.partition(":")[0] == algorithm},
        "seed": seed,
        "algorithm": algorithm,
        "output_dir": str(work / name),
        # pi_ref and Stage 1's returns depend on neither beta2 nor GRPO's settings:
        # comparisons that share ``shared`` build and sample them once per seed.
        "reference_dir": str(shared / f"reference-seed{seed}"),
        "value_cache_dir": str(shared / f"optimal-values-seed{seed}"),
    }
    if round_of(policy) > 1:  # pi_ref is the last round's policy, kept in this run's folder
        previous = earlier_rounds(policy)[-2]
        settings.update(
            model=str(work / run_name(previous, seed) / "final-model"),
            sft_epochs=0,
            reference_dir=None,
            value_cache_dir=None,
        )
    config = TrainConfig.from_preset(preset, **settings)
    config = dataclasses.replace(config, resume=can_resume(config))
    return config


def needed_entries(config: TrainConfig, policy: str) -> list[str]:
    """What a run's record must hold for the report: its test results, sampled ones when the
    preset evaluates greedily, the test curve of a first round that keeps checkpoints.

    A LoRA run's checkpoints resume it but draw no curve: they hold adapters, which
    `apo_agent.evaluation.evaluate` does not read."""
    needed = ["test"]
    if config.eval_temperature != SAMPLED:
        needed.append("test_sampled")
    if config.checkpoint_every and not config.lora_rank and round_of(policy) == 1:
        needed.append("test_curve")
    return needed


def run_all(
    out: Path,
    work: Path,
    seeds: list[int],
    overrides: dict[str, Any],
    algorithms: Sequence[str] = ALGORITHMS,
    rounds: int = 1,
    shared: Path | None = None,
    preset: str = "cpu-demo",
    train: bool = True,
    side_by_side: bool = False,
) -> dict[str, Any]:
    """Runs every (seed, policy) pipeline of ``preset``; returns the per-run records, each
    also kept in ``out/runs/<name>/results.json``. pi_ref and Stage 1's returns are kept in
    ``shared`` (default ``work``). With ``train=False`` only finished runs are returned. With
    ``side_by_side`` a seed's first-round policies run at once, one process each: paired runs
    then share the machine's load, which CPU time is not immune to."""
    shared = shared or work
    runs: dict[str, Any] = {}
    for seed in seeds:
        policies = policies_of(algorithms, rounds)
        together = [p for p in policies if round_of(p) == 1] if side_by_side and train else []
        if len(together) > 1:
            with ProcessPoolExecutor(len(together), mp_context=multiprocessing.get_context("spawn")) as pool:
                jobs = [
                    pool.submit(one_run, out, work, shared, preset, overrides, seed, p, train)
                    for p in together
                ]
                for policy, job in zip(together, jobs, strict=True):
                    if (record := job.result()) is not None:
                        runs[run_name(policy, seed)] = record
        for policy in policies:
            if policy not in together and (
                record := one_run(out, work, shared, preset, overrides, seed, policy, train)
            ):
                runs[run_name(policy, seed)] = record
    return runs


def one_run(
    out: Path,
    work: Path,
    shared: Path,
    preset: str,
    overrides: dict[str, Any],
    seed: int,
    policy: str,
    train: bool,
) -> dict[str, Any] | None:
    """One (seed, policy) run's record: kept, finished earlier, or trained now (None: not
    finished and ``train`` is off)."""
    name = run_name(policy, seed)
    config = run_config(preset, overrides, seed, policy, work, shared)
    kept = out / "runs" / name
    needed = needed_entries(config, policy)
    record = kept_run(kept / "results.json", config, needed)
    if record is not None:
        print(f"== {name} (kept record with the same settings: reused)", flush=True)
        return record
    finished = finished_run(config)
    if not finished and not train:
        print(f"== {name}: not finished, left out", flush=True)
        return None
    reused = " (finished earlier with the same settings: reused)" if finished else ""
    print(f"== {name}{reused}", flush=True)
    if not finished and round_of(policy) > 1 and not Path(config.model).is_dir():
        raise FileNotFoundError(
            f"{name} starts from {config.model}, which is gone (its round was reused from a "
            "kept record); run that round again in a fresh --work, or copy its folder back"
        )
    run = finished or run_pipeline(config)
    if "test_sampled" in needed:
        run["test_sampled"] = evaluate_sampled(config, run)
    if "test_curve" in needed:
        run["test_curve"] = success_curve(config, run)
    keep_run(kept, work / name, run)
    return run


def keep_run(kept: Path, folder: Path, run: dict[str, Any]) -> None:
    """Copies the run's files to ``kept`` and writes its whole record there, evaluations
    included, so that a later comparison needs nothing from ``folder``."""
    kept.mkdir(parents=True, exist_ok=True)
    for file in KEPT_FILES:
        if (folder / file).is_file():
            shutil.copy(folder / file, kept / file)
    record = dict(run)
    if "test_curve" in record:
        record["test_curve"] = [dataclasses.asdict(point) for point in record["test_curve"]]
    (kept / "results.json").write_text(json.dumps(record, indent=1, default=str) + "\n")


def kept_run(path: Path, config: TrainConfig, needed: Sequence[str]) -> dict[str, Any] | None:
    """The kept record at ``path`` if it was made with the same training settings as
    ``config`` and holds every entry in ``needed``, else None."""
    results = _read_results(path)
    if results is None or not same_training(results, config) or any(k not in results for k in needed):
        return None
    if "test_curve" in results:
        results["test_curve"] = curve_from_json(results["test_curve"])
    return results


def finished_run(config: TrainConfig) -> dict[str, Any] | None:
    """The results of a run that already finished with exactly these settings (so a stopped
    comparison picks up where it stopped), else None."""
    results = _read_results(Path(config.output_dir) / "results.json")
    final_model = Path(config.output_dir) / "final-model"
    if results is None or not same_training(results, config) or not final_model.is_dir():
        return None
    return {**results, "final_model": str(final_model)}  # where it is now, if the folder moved


def _read_results(path: Path) -> dict[str, Any] | None:
    if not path.is_file():
        return None
    try:
        return json.loads(path.read_text())
    except json.JSONDecodeError:
        return None  # cut short while being written: run it again


def can_resume(config: TrainConfig) -> bool:
    """Whether the run folder's latest checkpoint was made with ``config``'s training settings:
    a run stopped part-way (a session's end) goes on from it; one of other settings is ignored.

    A run of more ``steps`` also goes on from a shorter run's checkpoint, since ``steps`` only
    bounds the loop (the learning rate is constant, and a resumed run matches an uninterrupted
    one bit for bit: apo-agent's test_resume_gives_the_same_next_step_loss_as_an_uninterrupted_run).
    That is how a finished run is given more steps, e.g. to spend the CPU budget it left."""
    checkpoint = latest_checkpoint(config.output_dir)
    if checkpoint is None:
        return False
    stored = dict(
        torch.load(checkpoint / "state.pt", map_location="cpu", weights_only=False).get("config") or {}
    )
    if int(stored.get("steps", config.steps)) <= config.steps:
        stored["steps"] = config.steps
    return same_training({"config": stored}, config)


def same_training(results: dict[str, Any], config: TrainConfig) -> bool:
    """Whether a run's results were trained with ``config``'s training settings."""
    settings = json.loads(json.dumps(dataclasses.asdict(config), default=str))
    return _training_settings(results.get("config") or {}) == _training_settings(settings)


# Settings that change how fast a run goes or where it is written, not what it trains: seeds
# run side by side on one thread each, runs started by hand (``extra`` holds their command)
# and run folders moved since are reused by a later comparison.
RUNTIME_ONLY = (
    "torch_threads",
    "reference_batch_size",
    "progress",
    "output_dir",
    "reference_dir",
    "value_cache_dir",
    "resume",
    "extra",
    "save_rollouts",
)


# Settings only one algorithm reads: a change to GRPO's KL weight leaves A*PO runs as they were.
ALGORITHM_ONLY = {
    "apo": ("beta1", "beta2", "reference_samples", "goal_filter"),
    "grpo": ("group_size", "clip_eps", "grpo_epochs", "grpo_kl_coef"),
}


def _training_settings(settings: dict[str, Any]) -> dict[str, Any]:
    if "episodes_per_step" in settings:
        # Recorded before goals_per_step: GRPO's episodes were split into groups, so the goals
        # of a step were episodes_per_step / group_size (A*PO's: episodes_per_step).
        settings = dict(settings)
        episodes = settings.pop("episodes_per_step")
        group = settings.get("group_size", 1) if settings.get("algorithm") == "grpo" else 1
        settings.setdefault("goals_per_step", episodes // group)
    unread = [
        f
        for algorithm, fields in ALGORITHM_ONLY.items()
        if algorithm != settings.get("algorithm")
        for f in fields
    ]
    return {name: value for name, value in settings.items() if name not in (*RUNTIME_ONLY, *unread)}


def evaluate_sampled(config: TrainConfig, run: dict[str, Any]) -> dict[str, Any]:
    """pi_ref (evaluated once per reference, see `evaluate_reference`) and the trained policy
    on the test split, sampled."""
    sampled = dataclasses.replace(config, eval_temperature=SAMPLED)
    # Kept beside the run, so that a comparison run again (or a tuning) evaluates it once.
    path = Path(config.output_dir) / "test-sampled.json"
    key = {"trained": run["test"]["trained"], "temperature": SAMPLED, "test_goals": config.test_goals}
    stored = json.loads(path.read_text()) if path.is_file() else {}
    if stored.get("key") != key:
        trained = evaluate(
            run["final_model"], sampled, description="test evaluation, sampled: trained"
        ).summary()
        stored = {"key": key, "trained": trained}
        path.write_text(json.dumps(stored, indent=1))
    return {"reference": evaluate_reference(sampled, run["reference_model"]), "trained": stored["trained"]}


def policies_run(runs: dict[str, Any], seeds: list[int]) -> list[str]:
    """The policies that were trained, in report order (every seed trains the same ones)."""
    rounds = 1
    while run_name(f"apo-round{rounds + 1}", seeds[0]) in runs:
        rounds += 1
    return [p for p in policies_of(ALGORITHMS, rounds) if run_name(p, seeds[0]) in runs]


def first_run(runs: dict[str, Any], policies: list[str], seed: int) -> dict[str, Any]:
    """A run that started from the seed's first pi_ref (the warm start): every gain is against it."""
    return runs[run_name(policies[0], seed)]


def earlier_rounds(policy: str) -> list[str]:
    """The runs whose episodes and time ``policy`` includes: itself and the rounds before it."""
    if round_of(policy) == 1:
        return [policy]
    return policies_of(["apo"], round_of(policy))


def training_seconds(run: dict[str, Any]) -> float:
    """Stage 1's sampling (also when read from a cache another run filled) plus Stage 2."""
    times = run["wall_time_s"]
    if "stage2" in times:
        return float(times.get("stage1", 0.0) + times["stage2"])
    return float(times["training"])  # runs recorded before the stages were timed apart


def summarise(runs: dict[str, Any], seeds: list[int]) -> dict[str, Any]:
    """Per policy, one entry per seed: success, score, gain over the first pi_ref, episodes,
    wall-clock and CPU time (Stage 1 included, Stage 2 only, Stage 1's share in %)."""
    policies = policies_run(runs, seeds)
    rows: dict[str, dict[str, list[float]]] = {}
    for seed in seeds:
        first = first_run(runs, policies, seed)
        reference = first["test"]["reference"]
        rows.setdefault("pi_ref", {}).setdefault("success", []).append(reference["success"])
        rows["pi_ref"].setdefault("score", []).append(reference["score"])
        if "test_sampled" in first:
            rows["pi_ref"].setdefault("sampled_success", []).append(
                first["test_sampled"]["reference"]["success"]
            )
            rows["pi_ref"].setdefault("sampled_score", []).append(first["test_sampled"]["reference"]["score"])
        for policy in policies:
            run = runs[run_name(policy, seed)]
            so_far = [runs[run_name(p, seed)] for p in earlier_rounds(policy)]
            row = rows.setdefault(policy, {})
            row.setdefault("success", []).append(run["test"]["trained"]["success"])
            row.setdefault("score", []).append(run["test"]["trained"]["score"])
            row.setdefault("improvement", []).append(run["test"]["trained"]["success"] - reference["success"])
            row.setdefault("training_s", []).append(sum(training_seconds(r) for r in so_far))
            if all("cpu_time_s" in r for r in so_far):  # runs recorded before CPU time was kept have none
                stage1 = sum(r["cpu_time_s"]["stage1"] for r in so_far)
                stage2 = sum(r["cpu_time_s"]["stage2"] for r in so_far)
                row.setdefault("training_cpu_s", []).append(stage1 + stage2)
                row.setdefault("stage2_cpu_s", []).append(stage2)
                if stage1:
                    row.setdefault("stage1_cpu_share", []).append(100 * stage1 / (stage1 + stage2))
            row.setdefault("stage1_episodes", []).append(sum(r["stage1_episodes"] for r in so_far))
            row.setdefault("stage2_episodes", []).append(sum(r["stage2_episodes"] for r in so_far))
            if "test_sampled" in run:
                sampled = run["test_sampled"]["trained"]
                row.setdefault("sampled_success", []).append(sampled["success"])
                row.setdefault("sampled_score", []).append(sampled["score"])
                row.setdefault("sampled_improvement", []).append(
                    sampled["success"] - first["test_sampled"]["reference"]["success"]
                )
    return rows


def paired_differences(runs: dict[str, Any], seeds: list[int]) -> dict[str, dict[str, list[float]]]:
    """Per trained policy other than GRPO, per seed, its final test success and score minus
    GRPO's of the same seed (greedy; sampled too where every run has it). Both start from the
    seed's pi_ref, so the difference leaves out what the seeds' pi_refs do to both."""
    policies = policies_run(runs, seeds)
    if "grpo" not in policies:
        return {}
    differences: dict[str, dict[str, list[float]]] = {}
    for policy in policies:
        if policy == "grpo":
            continue
        pairs = [(runs[run_name(policy, s)], runs[run_name("grpo", s)]) for s in seeds]
        evaluations = ["test"]
        if all("test_sampled" in run for pair in pairs for run in pair):
            evaluations.append("test_sampled")
        differences[policy] = {
            f"{'sampled_' if evaluation == 'test_sampled' else ''}{measure}": [
                a[evaluation]["trained"][measure] - b[evaluation]["trained"][measure] for a, b in pairs
            ]
            for evaluation in evaluations
            for measure in ("success", "score")
        }
    return differences


DIFFERENCE_COLUMNS = {
    "success": "success (points)",
    "score": "score",
    "sampled_success": f"sampled success (points, T = {SAMPLED:g})",
    "sampled_score": "sampled score",
}


def signs(differences: Sequence[float]) -> tuple[int, int, int]:
    """Seeds above, equal to and below zero; differences of recorded percentages that agree to
    1e-6 are equal (28.999999999999996 - 29.0 is a tie)."""
    rounded = [round(d, 6) for d in differences]
    return sum(d > 0 for d in rounded), sum(d == 0 for d in rounded), sum(d < 0 for d in rounded)


@dataclass(frozen=True)
class PairedDifference:
    """One measure's per-seed differences of a policy from GRPO, and what summarises them."""

    values: list[float]
    """Per seed, the policy's final test figure minus GRPO's (`paired_differences`)."""
    estimates: dict[str, Estimate]
    """Their mean and paired 95% interval by method: Student-t, and BCa from `BCA_MIN_SEEDS` seeds."""
    signs: tuple[int, int, int]
    """Seeds above, equal to and below zero (`signs`)."""


def paired_summaries(
    differences: dict[str, dict[str, list[float]]], seeds: Sequence[int]
) -> dict[str, dict[str, PairedDifference]]:
    """Per policy, per measure of `paired_differences`, its `PairedDifference`."""
    methods = ["t"] + (["bca"] if len(seeds) >= BCA_MIN_SEEDS else [])
    return {
        policy: {
            measure: PairedDifference(values, {m: Estimate.of(values, m) for m in methods}, signs(values))
            for measure, values in columns.items()
        }
        for policy, columns in differences.items()
    }


@dataclass(frozen=True)
class Comparison:
    """Every figure of a comparison's report, as `compare` makes it from the runs' records."""

    preset: str
    machine: str
    seeds: list[int]
    policies: list[str]
    """The trained policies, in report order (`policies_run`)."""
    test_goals: int
    eval_temperature: float
    """The test evaluations' temperature (0: greedy)."""
    environment: str
    method: str
    """The intervals' method over seeds, a key of `benchmarks.intervals.METHODS`."""
    summary: dict[str, dict[str, list[float]]]
    """`summarise`: per policy (and "pi_ref"), per figure, one value per seed."""
    estimates: dict[str, dict[str, Estimate]]
    """The same figures' mean over seeds and 95% interval by ``method``."""
    paired: dict[str, dict[str, PairedDifference]]
    """Per trained policy other than GRPO, its paired differences from GRPO (empty without GRPO)."""
    curves: dict[str, dict[int, list[CurvePoint]]]
    """`test_curves`: each first-round policy's test success along training, per seed."""
    time_to_targets: TimeToTargets | None
    """The costs to test success levels every run reaches (None without test curves)."""

    def record(self, command: str) -> dict[str, Any]:
        """results.json: every figure."""
        return {
            "command": command,
            "machine": self.machine,
            "preset": self.preset,
            "interval": METHODS[self.method],
            "summary": self.summary,
            "paired_differences": {
                policy: {measure: d.values for measure, d in columns.items()}
                for policy, columns in self.paired.items()
            },
            "test_curves": curves_json(self.curves),
            "time_to_targets": None if self.time_to_targets is None else self.time_to_targets.record(),
        }


def compare(
    runs: dict[str, Any], seeds: list[int], preset: str = "cpu-demo", method: str = "t"
) -> Comparison:
    """The report's figures (see the module's docstring) from the runs' records; intervals
    over seeds by ``method``."""
    policies = policies_run(runs, seeds)
    some = first_run(runs, policies, seeds[0])
    config = some.get("config", {})
    summary = summarise(runs, seeds)
    curves = test_curves(runs, seeds)
    return Comparison(
        preset=preset,
        machine=describe_machine(),
        seeds=list(seeds),
        policies=policies,
        test_goals=some["test"]["reference"]["goals"],
        eval_temperature=config.get("eval_temperature", SAMPLED),
        environment=config.get("env_id", "WebShop"),
        method=method,
        summary=summary,
        estimates={
            policy: {figure: Estimate.of(values, method) for figure, values in row.items()}
            for policy, row in summary.items()
        },
        paired=paired_summaries(paired_differences(runs, seeds), seeds),
        curves=curves,
        time_to_targets=time_to_targets(curves, stage1_cpu(runs, curves), method) if curves else None,
    )


# Rendering: a `Comparison` as results.md.


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
    """results.md (see the module's docstring): the summary table, the sampled policies' where
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


def stage1_cpu(
    runs: dict[str, Any], curves: dict[str, dict[int, list[CurvePoint]]]
) -> dict[str, dict[int, float]]:
    """Per curve, its run's Stage 1 CPU seconds (0 where none, or none recorded)."""
    return {
        policy: {s: float(runs[run_name(policy, s)].get("cpu_time_s", {}).get("stage1", 0.0)) for s in seeds}
        for policy, seeds in curves.items()
    }


def test_curves(runs: dict[str, Any], seeds: list[int]) -> dict[str, dict[int, list[CurvePoint]]]:
    """Each first-round policy's test-success curve per seed (runs evaluated along training)."""
    curves: dict[str, dict[int, list[CurvePoint]]] = {}
    for policy in policies_run(runs, seeds):
        if round_of(policy) == 1 and all("test_curve" in runs[run_name(policy, s)] for s in seeds):
            curves[policy] = {s: runs[run_name(policy, s)]["test_curve"] for s in seeds}
    return curves


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


def keep_policy(out: Path, work: Path, seed: int, policy: str = "apo") -> None:
    """An A*PO policy of one seed, for the ``apo`` benchmark agent; where the run was reused
    from its kept record and its folder is gone, the policy kept before stays."""
    source = work / run_name(policy, seed)
    target = out / "policy"
    if not (source / "config.json").is_file() or not (source / "final-model").is_dir():
        kept = "the policy kept before stays" if target.is_dir() else "no policy is kept"
        print(f"note: {source} has no final model (its work folder is gone): {kept} in {target}")
        return
    shutil.rmtree(target, ignore_errors=True)
    target.mkdir(parents=True)
    shutil.copy(source / "config.json", target / "config.json")
    shutil.copytree(source / "final-model", target / "final-model")


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
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
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


if __name__ == "__main__":
    main()
