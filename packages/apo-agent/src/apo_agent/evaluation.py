"""Success and score of a policy on one episode per goal of a split: one `evaluate` for every use.

`evaluate` takes the policy as it comes: a loaded `LMPolicy`, a rollout engine (training's dev
evaluations sample on the run's own engine), or a saved model's folder, optionally with a
Stage 2 checkpoint's weights put into it. It plays one episode per goal, seeded per goal
(`apo_agent.runtime.seeding.evaluation_seed`), so a policy scores the same wherever it is
evaluated. pi_ref's test evaluation is kept beside pi_ref by `evaluate_reference`, since the
A*PO and GRPO runs of a seed share it.
"""

from __future__ import annotations

import json
import statistics
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import gymnasium as gym

from apo_agent.config import TrainConfig
from apo_agent.engines import RolloutEngine, make_engine
from apo_agent.model.policy import LMPolicy
from apo_agent.rollout.envs import env_spec, make_envs, split_goals
from apo_agent.rollout.episodes import Episode, collect_episodes
from apo_agent.rollout.tokens import prompt_encoder
from apo_agent.runtime.checkpoints import load_weights
from apo_agent.runtime.lock import locked_folder
from apo_agent.runtime.seeding import evaluation_seed, seed_everything
from apo_agent.warm_start.reference import reference_folder, reference_settings


@dataclass
class EvalResult:
    """Aggregates over one episode per goal (success and score in percent, as the paper reports)."""

    success: float
    score: float
    steps: float
    invalid_actions: float
    goals: int
    episodes: list[Episode] = field(default_factory=list, repr=False)

    def summary(self) -> dict[str, Any]:
        return {
            "success": self.success,
            "score": self.score,
            "steps": self.steps,
            "invalid_actions": self.invalid_actions,
            "goals": self.goals,
        }


def evaluate(
    policy: LMPolicy | RolloutEngine | str | Path,
    config: TrainConfig,
    *,
    split: str = "test",
    goals: Sequence[int] | None = None,
    checkpoint: str | Path | None = None,
    envs: Sequence[gym.Env] | None = None,
    reseed: bool = True,
    description: str = "evaluation",
) -> EvalResult:
    """One episode per goal; success = share of purchases with R == 1, score = 100 * mean R.

    Args:
        policy: What plays: an `LMPolicy`, a rollout engine, or a saved model's folder.
        config: The run's settings: env, prompts, ``eval_temperature``, ``seed``, device.
        split: The split whose goals are played.
        goals: Which goals of the split, as indices within it (`split_goals` gives the
            first n). Default: the first ``test_goals`` on the test split, every goal of
            another split.
        checkpoint: A Stage 2 checkpoint whose trained weights go into ``policy`` (a saved
            pi_ref) first. Checkpoints hold full fine-tuning weights only (``lora_rank=0``).
        envs: Envs of ``split`` to play in (default: ``num_envs`` new ones).
        reseed: Seed Python and torch from ``config.seed`` first, as a fresh process does
            (a saved policy then evaluates the same wherever it is evaluated). Training's dev
            evaluations pass False, to leave Stage 2's random stream alone.
        description: Progress-bar label.
    """
    if checkpoint is not None and config.lora_rank:
        raise ValueError("checkpoints hold full fine-tuning weights; evaluate final-model/ of a LoRA run")
    if reseed:
        seed_everything(config.seed)
    if isinstance(policy, (str, Path)):
        policy = LMPolicy.load(str(policy), device=config.device, bf16=config.bf16, with_reference=False)
    if checkpoint is not None:
        if not isinstance(policy, LMPolicy):
            raise ValueError("a checkpoint's weights go into a policy, not into a rollout engine")
        load_weights(checkpoint, policy)
    envs = list(envs) if envs is not None else make_envs(env_spec(config), split, config.num_envs)
    if goals is None:
        goals = split_goals(envs[0], config.test_goals if split == "test" else None)
    player: LMPolicy | RolloutEngine = policy
    if isinstance(policy, LMPolicy) and config.rollout_engine != "transformers":
        # A run that samples on vLLM is evaluated on it too: the same distribution as the
        # policy's (tests/test_vllm.py) for a fraction of the CPU time.
        player = make_engine(
            config.rollout_engine,
            policy,
            max_model_len=config.max_prompt_tokens + config.max_new_tokens,
            seed=config.seed,
        )
    episodes = collect_episodes(
        player,
        envs,
        prompt_encoder(player.tokenizer, config),
        [(goal, evaluation_seed(config.seed, goal)) for goal in goals],
        max_new_tokens=config.max_new_tokens,
        temperature=config.eval_temperature,
        description=description,
        progress=config.progress,
    )
    return EvalResult(
        success=100.0 * statistics.fmean(e.success for e in episodes),
        score=100.0 * statistics.fmean(e.score for e in episodes),
        steps=statistics.fmean(e.steps for e in episodes),
        invalid_actions=statistics.fmean(e.invalid_actions for e in episodes),
        goals=len(episodes),
        episodes=episodes,
    )


def evaluate_reference(config: TrainConfig, reference_path: str) -> dict[str, Any]:
    """pi_ref's `evaluate` summary on the test split, kept beside it: runs that share pi_ref
    (A*PO and GRPO of a seed) and evaluate it the same way (test goals, temperature)
    evaluate it once."""
    with locked_folder(reference_folder(config), role="reference_dir", wait=True):
        path = reference_folder(config) / "test-evaluation.json"
        key = {
            "reference": reference_settings(config),
            "test_goals": config.test_goals,
            "eval_temperature": config.eval_temperature,
        }
        entries = json.loads(path.read_text())["evaluations"] if path.is_file() else []  # one per key
        for entry in entries:
            if entry["key"] == key:
                return dict(entry["result"])
        result = evaluate(reference_path, config, description="test evaluation: pi_ref").summary()
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps({"evaluations": [*entries, {"key": key, "result": result}]}, indent=2))
        return result
