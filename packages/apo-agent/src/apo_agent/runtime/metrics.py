"""Metrics: one CSV row per step (namespaced names, CleanRL style), optional TensorBoard / W&B,
and the learning-curve plot."""

from __future__ import annotations

import csv
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

COLUMNS = (
    "step",
    "episodes",
    "wall_time_s",
    "cpu_time_s",
    "charts/success",
    "charts/score",
    "charts/return",
    "charts/episode_steps",
    "charts/invalid_actions",
    "charts/agent_tokens",
    "charts/truncated_prompts",
    "charts/token_entropy",
    "losses/loss",
    "losses/kl",
    "losses/advantage",
    "losses/clip_fraction",
    "losses/grad_norm",
    "time/rollout_s",
    "time/update_s",
    "eval/success",
    "eval/score",
)


class MetricsLogger:
    """Appends rows to ``metrics.csv``; on resume keeps the rows up to the checkpoint's step.

    Args:
        path: The CSV file.
        resume_step: Keep existing rows with ``step <= resume_step`` (None: start afresh).
        tensorboard_dir: Also write TensorBoard events here.
        wandb_project: Also log to this W&B project.
        run_config: Stored with the W&B run.
    """

    def __init__(
        self,
        path: str | Path,
        resume_step: int | None = None,
        tensorboard_dir: str | Path | None = None,
        wandb_project: str | None = None,
        run_config: dict[str, Any] | None = None,
    ) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        kept = [
            row for row in read_metrics(self.path) if resume_step is not None and row["step"] <= resume_step
        ]
        with self.path.open("w", newline="") as handle:
            writer = csv.DictWriter(handle, fieldnames=COLUMNS)
            writer.writeheader()
            writer.writerows({k: _cell(row.get(k)) for k in COLUMNS} for row in kept)
        self._tensorboard = None
        if tensorboard_dir is not None:
            try:
                from torch.utils.tensorboard import SummaryWriter
            except ImportError as error:
                raise ImportError(
                    "tensorboard=True needs tensorboard: pip install 'apo-agent[tensorboard]'"
                ) from error
            self._tensorboard = SummaryWriter(str(tensorboard_dir))
        self._wandb = None
        if wandb_project is not None:
            try:
                import wandb
            except ImportError as error:
                raise ImportError("wandb_project needs wandb: pip install 'apo-agent[wandb]'") from error
            self._wandb = wandb.init(project=wandb_project, config=run_config, resume="allow")

    def log(self, row: dict[str, Any]) -> None:
        unknown = set(row) - set(COLUMNS)
        if unknown:
            raise KeyError(
                f"unknown metric names {sorted(unknown)}; add them to apo_agent.runtime.metrics.COLUMNS"
            )
        with self.path.open("a", newline="") as handle:
            csv.DictWriter(handle, fieldnames=COLUMNS).writerow({k: _cell(row.get(k)) for k in COLUMNS})
        numbers = {k: float(v) for k, v in row.items() if k != "step" and v is not None}
        if self._tensorboard is not None:
            for name, value in numbers.items():
                self._tensorboard.add_scalar(name, value, row["step"])
        if self._wandb is not None:
            self._wandb.log(numbers, step=row["step"])

    def close(self) -> None:
        if self._tensorboard is not None:
            self._tensorboard.close()
        if self._wandb is not None:
            self._wandb.finish()


def _cell(value: Any) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""
    return f"{value:.6g}" if isinstance(value, float) else str(value)


def read_metrics(path: str | Path) -> list[dict[str, Any]]:
    """The rows of a metrics CSV, numbers parsed (empty cells left out)."""
    path = Path(path)
    if not path.is_file():
        return []
    with path.open(newline="") as handle:
        return [
            {
                k: (int(v) if k in ("step", "episodes") else float(v))
                for k, v in row.items()
                if v not in ("", None)
            }
            for row in csv.DictReader(handle)
        ]


def plot_learning_curve(rows: Sequence[dict[str, Any]], path: str | Path, title: str = "") -> Path:
    """Training success/score (moving average over 5 steps) and dev evaluations, against episodes."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, axes = plt.subplots(1, 2, figsize=(10, 3.6))
    for axis, key, label in ((axes[0], "success", "success"), (axes[1], "score", "score (mean R)")):
        train = [(r["episodes"], r[f"charts/{key}"]) for r in rows if f"charts/{key}" in r]
        if train:
            xs, ys = zip(*train, strict=True)
            axis.plot(xs, ys, color="tab:blue", alpha=0.3, label="training episodes")
            axis.plot(xs, moving_average(ys, 5), color="tab:blue", label="training (moving avg. 5)")
        evals = [(r["episodes"], r[f"eval/{key}"]) for r in rows if f"eval/{key}" in r]
        if evals:
            xs, ys = zip(*evals, strict=True)
            axis.plot(xs, ys, "o-", color="tab:orange", label="dev evaluation")
        axis.set_xlabel("Stage 2 episodes")
        axis.set_ylabel(label)
        axis.grid(alpha=0.3)
    axes[0].legend(fontsize=8)
    if title:
        figure.suptitle(title, fontsize=10)
    figure.tight_layout()
    path = Path(path)
    figure.savefig(path, dpi=110)
    plt.close(figure)
    return path


def moving_average(values: Sequence[float], window: int) -> list[float]:
    """The mean of each value and the (up to) ``window - 1`` before it: per-step training
    success from 32 episodes is too noisy to read by eye."""
    if window < 1:
        raise ValueError(f"window must be at least 1, got {window}")
    out = []
    for i in range(len(values)):
        chunk = values[max(0, i - window + 1) : i + 1]
        out.append(sum(chunk) / len(chunk))
    return out
