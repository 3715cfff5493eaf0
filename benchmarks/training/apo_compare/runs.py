"""Running and reusing a comparison's runs: each (seed, policy) run's config, trained, reused
from its kept record or its finished run folder, or resumed from a checkpoint of the same
training settings; the sampled evaluation of greedy presets, and the kept policy.
"""

from __future__ import annotations

import dataclasses
import json
import multiprocessing
import shutil
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

import torch

from apo_agent.config import ALGORITHMS, TrainConfig
from apo_agent.evaluation import evaluate, evaluate_reference
from apo_agent.pipeline import run_pipeline
from apo_agent.runtime.checkpoints import latest_checkpoint
from benchmarks.training.apo_curves import curve_from_json, success_curve

# The objectives optimise the sampling policy itself; when the preset evaluates greedily the
# report also gives the same policies sampled at this temperature.
SAMPLED = 1.0
# Copied from the run's folder; the kept results.json is written from the run's full record.
KEPT_FILES = ("metrics.csv", "learning_curve.png", "config.json")


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


def earlier_rounds(policy: str) -> list[str]:
    """The runs whose episodes and time ``policy`` includes: itself and the rounds before it."""
    if round_of(policy) == 1:
        return [policy]
    return policies_of(["apo"], round_of(policy))


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
