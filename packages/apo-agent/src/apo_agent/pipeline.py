"""The whole job, end to end: make pi_ref, evaluate it, train (A*PO or GRPO), evaluate again.

`run_pipeline` is what ``python -m apo_agent`` runs: pi_ref
(`apo_agent.warm_start.reference.build_reference`), its test evaluation
(`apo_agent.evaluation`), `apo_agent.trainer.train`, and the trained policy's test
evaluation, written to ``<output_dir>/results.json``. A finished step is reused when the
pipeline runs again with the same settings.
"""

from __future__ import annotations

import dataclasses
import json
import time
from pathlib import Path
from typing import Any

import torch

from apo_agent.config import TrainConfig
from apo_agent.evaluation import evaluate, evaluate_reference
from apo_agent.model.policy import resolve_device
from apo_agent.runtime.cpu import configure_cpu
from apo_agent.runtime.lock import locked_folder
from apo_agent.runtime.metrics import read_metrics
from apo_agent.trainer import train
from apo_agent.warm_start.reference import build_reference

__all__ = ["results_table", "run_pipeline"]


def run_pipeline(config: TrainConfig) -> dict[str, Any]:
    """pi_ref -> test evaluation -> training -> test evaluation; returns (and writes) the results.

    Raises :class:`~apo_agent.runtime.lock.FolderInUseError` if another process is writing to
    ``config.output_dir``."""
    with locked_folder(config.output_dir):
        return _run_pipeline(config)


def _run_pipeline(config: TrainConfig) -> dict[str, Any]:
    started = time.perf_counter()
    output_dir = Path(config.output_dir)
    output_dir.mkdir(parents=True, exist_ok=True)
    configure_cpu(config.torch_threads, resolve_device(config.device))

    reference_path = build_reference(config)
    reference_done = time.perf_counter()
    reference_result = evaluate_reference(config, reference_path)

    training = train(config, model=reference_path)
    trained_done = time.perf_counter()
    trained_result = evaluate(
        training.engine, config, description=f"test evaluation: after {config.algorithm}"
    ).summary()
    finished = time.perf_counter()

    last_step = read_metrics(training.metrics_path)[-1]
    results = {
        "config": dataclasses.asdict(config),
        "reference_model": reference_path,
        "test": {"reference": reference_result, "trained": trained_result},
        "improvement": {
            "success": trained_result["success"] - reference_result["success"],
            "score": trained_result["score"] - reference_result["score"],
        },
        "stage2_episodes": int(last_step.get("episodes", 0)),  # fewer than steps allow under cpu_budget_s
        "stage2_steps": int(last_step.get("step", 0)),
        "stage1_episodes": (
            len(training.optimal_values) * config.reference_samples if config.algorithm == "apo" else 0
        ),
        "goals_trained": sum(v.kept_by(config.goal_filter) for v in training.optimal_values.values()),
        "wall_time_s": {
            "reference": reference_done - started,
            "training": training.wall_time_s,
            # Sampling Stage 1's episodes, also when this run read them from a shared cache.
            "stage1": training.stage1_s,
            "stage2": float(last_step["wall_time_s"]),
            "test_evaluation": finished - trained_done,
            "total": finished - started,
        },
        # The training stages in CPU seconds (every thread of the process): on a machine that
        # other work shares, the fairer clock.
        "cpu_time_s": {"stage1": training.stage1_cpu_s, "stage2": float(last_step["cpu_time_s"])},
        # The most GPU memory torch held at once in this process (training and evaluations).
        "peak_gpu_memory_gib": (
            torch.cuda.max_memory_allocated() / 2**30 if torch.cuda.is_available() else None
        ),
        "metrics": str(training.metrics_path),
        "learning_curve": str(training.curve_path),
        "final_model": str(training.model_dir),
    }
    (output_dir / "results.json").write_text(json.dumps(results, indent=2, default=str))
    return results


def results_table(results: dict[str, Any]) -> str:
    """A Markdown table of pi_ref vs the trained policy on the test split."""
    reference, trained = results["test"]["reference"], results["test"]["trained"]
    algorithm = results["config"]["algorithm"]
    lines = [
        f"| policy ({results['config']['env_id']}, test, {trained['goals']} goals) | success % | score |",
        "|---|---|---|",
        f"| pi_ref | {reference['success']:.1f} | {reference['score']:.1f} |",
        f"| after {algorithm} | {trained['success']:.1f} | {trained['score']:.1f} |",
    ]
    return "\n".join(lines)
