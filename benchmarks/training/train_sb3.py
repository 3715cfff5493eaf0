"""Trains MaskablePPO (sb3-contrib) on the bundled catalogue through `DiscreteActions`.

    python -m benchmarks.training.train_sb3 --out benchmarks/results/sb3

Training plays the train split of ``WebShop-Mini-Text-v0`` with the shaped reward
(potential-based, so the best policy is unchanged); every ``--eval-every`` steps the
deterministic policy plays the dev split with the original reward through the benchmark
runner. Training stops at ``--timesteps`` or after ``--max-minutes`` of wall time,
whichever comes first. Written to ``--out``:

* ``policy.zip`` + ``encoder.json``: the policy (``MaskableActorCriticPolicy.save``) and the
  feature shape, loaded by the ``sb3`` agent (``--set sb3.policy=.../policy.zip``);
* ``progress.csv``: per evaluation: steps, minutes, training episodes so far, mean score
  and success of the last 200 training episodes, dev score and success;
* ``learning_curve.png`` and ``train.json`` (configuration, command, machine, final figures).

The test-split figures come from the benchmark runner (``--agents sb3``), like every agent's.
"""

from __future__ import annotations

import argparse
import csv
import json
import shlex
import sys
import time
from collections import deque
from dataclasses import asdict, dataclass, fields
from pathlib import Path
from typing import Any

import gymnasium as gym

import webshop_gym  # noqa: F401  (registers the ids)
from benchmarks.harness.agents.sb3 import SB3Agent, save_encoder_config
from benchmarks.harness.run import env_spec, run_agent
from benchmarks.machine import describe_machine
from webshop_gym.wrappers import DiscreteActions, EncoderConfig

TRAINING_WINDOW = 200  # training episodes averaged in each progress row


@dataclass
class TrainConfig:
    """What `train` does; every field is a command-line option of the same name."""

    env_id: str = "WebShop-Mini-Text-v0"
    """The env to train and evaluate on."""
    train_split: str = "train"
    """Goals played in training."""
    eval_split: str = "dev"
    """Goals of the periodic evaluation (the test split stays for the benchmark)."""
    timesteps: int = 1_000_000
    """Env steps to train at most."""
    max_minutes: float = 18.0
    """Wall-clock budget; training stops at the first rollout boundary past it."""
    n_envs: int = 8
    """Envs stepped together (one process: a DummyVecEnv)."""
    n_steps: int = 128
    """Steps per env between updates."""
    batch_size: int = 256
    n_epochs: int = 4
    learning_rate: float = 3e-4
    gamma: float = 0.99
    """Discount, also the shaping discount of the env's shaped reward."""
    gae_lambda: float = 0.95
    ent_coef: float = 0.01
    hidden: int = 64
    """Units of each of the two hidden layers of the policy and value networks."""
    max_actions: int = 64
    hash_dim: int = 256
    eval_every: int = 25_000
    """Env steps between evaluations."""
    eval_episodes: int = 100
    seed: int = 0

    def __post_init__(self) -> None:
        if self.batch_size > self.n_envs * self.n_steps:
            raise ValueError(
                f"batch_size={self.batch_size} exceeds the rollout size n_envs * n_steps = "
                f"{self.n_envs * self.n_steps}; lower batch_size or raise n_steps"
            )
        if self.timesteps < 1 or self.max_minutes <= 0 or self.eval_every < 1:
            raise ValueError("timesteps, max_minutes and eval_every must be positive")


def make_training_env(config: TrainConfig, encoder: EncoderConfig) -> gym.Env:
    env = gym.make(config.env_id, split=config.train_split, reward="shaped", shaping_discount=config.gamma)
    return DiscreteActions(env, encoder)


def evaluate(policy: Any, encoder: EncoderConfig, config: TrainConfig, split: str) -> dict[str, float]:
    """Score and success % of the deterministic policy on ``eval_episodes`` goals of ``split``."""
    records = run_agent(
        "sb3",
        lambda: SB3Agent(policy, encoder),
        env_spec(config.env_id, split),
        episodes=config.eval_episodes,
        n_envs=8,
        seed=config.seed,
        progress=False,
    )
    n = len(records)
    return {
        "score": 100 * sum(r["score"] for r in records) / n,
        "success": 100 * sum(r["success"] for r in records) / n,
        "steps": sum(r["steps"] for r in records) / n,
    }


def train(config: TrainConfig, out: Path, command: str = "") -> dict[str, Any]:
    """Trains, evaluates periodically, saves the policy and the learning curve."""
    import torch
    from sb3_contrib import MaskablePPO
    from stable_baselines3.common.callbacks import BaseCallback
    from stable_baselines3.common.vec_env import DummyVecEnv

    torch.set_num_threads(1)
    out.mkdir(parents=True, exist_ok=True)
    encoder = EncoderConfig(max_actions=config.max_actions, hash_dim=config.hash_dim)
    envs = DummyVecEnv([lambda: make_training_env(config, encoder) for _ in range(config.n_envs)])
    envs.seed(config.seed)
    model = MaskablePPO(
        "MlpPolicy",
        envs,
        n_steps=config.n_steps,
        batch_size=config.batch_size,
        n_epochs=config.n_epochs,
        learning_rate=config.learning_rate,
        gamma=config.gamma,
        gae_lambda=config.gae_lambda,
        ent_coef=config.ent_coef,
        policy_kwargs={"net_arch": {"pi": [config.hidden] * 2, "vf": [config.hidden] * 2}},
        seed=config.seed,
        device="cpu",
        verbose=0,
    )
    started = time.perf_counter()
    progress: list[dict[str, float]] = []
    recent: deque[tuple[float, bool]] = deque(maxlen=TRAINING_WINDOW)
    finished = [0]

    def log_evaluation(steps: int) -> None:
        figures = evaluate(model.policy, encoder, config, config.eval_split)
        n = max(1, len(recent))
        row = {
            "timesteps": steps,
            "minutes": round((time.perf_counter() - started) / 60, 2),
            "train_episodes": finished[0],
            "train_score": round(100 * sum(s for s, _ in recent) / n, 2),
            "train_success": round(100 * sum(ok for _, ok in recent) / n, 2),
            f"{config.eval_split}_score": round(figures["score"], 2),
            f"{config.eval_split}_success": round(figures["success"], 2),
            f"{config.eval_split}_steps": round(figures["steps"], 2),
        }
        progress.append(row)
        print(" | ".join(f"{k} {v}" for k, v in row.items()), flush=True)

    class Progress(BaseCallback):
        def __init__(self) -> None:
            super().__init__()
            self.next_eval = config.eval_every

        def _on_step(self) -> bool:
            for done, info in zip(self.locals["dones"], self.locals["infos"], strict=True):
                if done:
                    finished[0] += 1
                    recent.append((float(info.get("score", 0.0)), bool(info.get("success", False))))
            if self.num_timesteps >= self.next_eval:
                self.next_eval += config.eval_every
                log_evaluation(self.num_timesteps)
            return time.perf_counter() - started < 60 * config.max_minutes

    log_evaluation(0)
    model.learn(total_timesteps=config.timesteps, callback=Progress(), progress_bar=False)
    if progress[-1]["timesteps"] != model.num_timesteps:
        log_evaluation(model.num_timesteps)
    minutes = (time.perf_counter() - started) / 60

    policy_path = out / "policy.zip"
    model.policy.save(str(policy_path))
    save_encoder_config(encoder, policy_path)
    with (out / "progress.csv").open("w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(progress[0]))
        writer.writeheader()
        writer.writerows(progress)
    plot_learning_curve(progress, config.eval_split, out / "learning_curve.png")
    summary = {
        "command": command,
        "machine": describe_machine(),
        "config": asdict(config),
        "timesteps": model.num_timesteps,
        "minutes": round(minutes, 2),
        "train_episodes": finished[0],
        "final": progress[-1],
        "best_eval": max(progress, key=lambda row: row[f"{config.eval_split}_score"]),
    }
    (out / "train.json").write_text(json.dumps(summary, indent=2) + "\n")
    envs.close()
    return summary


def plot_learning_curve(progress: list[dict[str, float]], eval_split: str, path: Path) -> Path:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    steps = [row["timesteps"] for row in progress]
    figure, (left, right) = plt.subplots(1, 2, figsize=(10, 3.8))
    for axis, metric in ((left, "score"), (right, "success")):
        axis.plot(
            steps, [row[f"train_{metric}"] for row in progress], marker=".", label="train (last 200 episodes)"
        )
        axis.plot(
            steps,
            [row[f"{eval_split}_{metric}"] for row in progress],
            marker=".",
            label=f"{eval_split} split",
        )
        axis.set_xlabel("env steps")
        axis.set_ylabel(metric if metric == "score" else "success %")
        axis.set_ylim(0, 100)
        axis.grid(alpha=0.3)
        axis.legend(fontsize=8)
    figure.suptitle("MaskablePPO on WebShop-Mini-Text-v0 (DiscreteActions wrapper)", fontsize=10)
    figure.tight_layout()
    figure.savefig(path, dpi=110)
    plt.close(figure)
    return path


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    for spec in fields(TrainConfig):
        parser.add_argument(f"--{spec.name.replace('_', '-')}", type=type(spec.default), default=spec.default)
    parser.add_argument("--out", type=Path, required=True)
    args = vars(parser.parse_args(argv))
    out = args.pop("out")
    command = "python -m benchmarks.training.train_sb3 " + shlex.join(sys.argv[1:] if argv is None else argv)
    print(f"machine: {describe_machine()}")
    summary = train(TrainConfig(**args), out, command)
    print(json.dumps(summary["final"]))


if __name__ == "__main__":
    main()
