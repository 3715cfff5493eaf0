r"""A*PO on a WebShop policy, in two stages; GRPO on the same rollouts for comparison.

Notation. A goal x is a shopping instruction (one WebShop goal of the train split); an
episode y is everything the agent says while pursuing it: the tokens of all its turns,
y = (y_1, ..., y_T), each sampled given the history h_t (instruction, pages seen, earlier
answers). Observation tokens are context, never scored. The return R(x, y) is the
episode's WebShop reward (in [0, 1]; success is R = 1). pi is the policy being trained,
pi_ref the frozen reference it starts from, and

    log pi(y | x) = sum_t log pi(y_t | h_t)        (a sum over the agent's tokens only).

A*PO (Brantley et al. 2025, arXiv 2505.20686) targets the KL-regularised optimum
pi*(y | x) ∝ pi_ref(y | x) exp(R(x, y) / beta), whose value is
V*(x) = beta log E_{y ~ pi_ref}[exp(R(x, y) / beta)] and whose log-ratio is
beta log(pi*(y|x) / pi_ref(y|x)) = R(x, y) - V*(x): the optimal advantage.

Stage 1, `estimate_optimal_values` (offline, once, cached): for each training goal draw N
episodes from pi_ref, with returns r_1..r_N, and estimate

    V*(x) = beta1 * log( (1/N) * sum_i exp(r_i / beta1) )

with a log-sum-exp (no overflow for small beta1). beta1 -> 0 gives max_i r_i, beta1 -> inf
the mean. Goals whose N returns are all zero are left out (``goal_filter``, as TRL does).

Stage 2, in `train` with one `apo_update` per step (online): each step samples a batch of
goals, runs ONE episode per goal with the current pi, and minimises the least-squares
regression of the policy's log-ratio onto the optimal advantage,

    L(pi) = mean_x ( beta2 * sum_t [log pi(y_t | h_t) - log pi_ref(y_t | h_t)] - (R(x, y) - V*(x)) )^2,

with AdamW and gradient clipping. No critic, no groups, no ratio clipping: V* is fixed,
so one sample per goal suffices. Its minimiser is pi* at beta = beta2; the square also
keeps pi close to pi_ref (a log-ratio far from (R - V*) / beta2 costs quadratically).

GRPO (Shao et al. 2024), ``algorithm="grpo"``: each step runs G episodes for each of the
same number P of goals (``goals_per_step``, as the paper compares them: G times A*PO's
episodes per step), A_i = (R_i - mean_G R) / (std_G R + eps)
for every token of episode i, and minimises the token-mean of
-min(rho_t A_i, clip(rho_t, 1 - eps, 1 + eps) A_i), rho_t = pi(y_t | h_t) / pi_old(y_t | h_t)
(+ an optional k3 KL term to pi_ref).

`train` reads top to bottom: `set_up` -> Stage 1 (`estimate_training_values`) ->
`goal_pool` -> Stage 2 (`optimise_online`, with `evaluate_on_dev` and checkpoints) ->
`save_final_model`; it resumes from the latest checkpoint in ``output_dir``.
"""

from __future__ import annotations

import dataclasses
import json
import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
import torch
from tqdm.auto import tqdm

from apo_agent.config import PROMPT_FIELDS, RLConfig, TrainConfig
from apo_agent.engines import RolloutEngine, make_engine
from apo_agent.evaluation import evaluate
from apo_agent.model.policy import LMPolicy, resolve_device
from apo_agent.objectives import apo_loss, grpo_advantages, grpo_token_losses
from apo_agent.optimal_values import GoalValue, ReferenceRewardCache, estimate_optimal_values
from apo_agent.rollout.envs import EnvSpec, describe_envs, env_spec, make_envs, split_goals
from apo_agent.rollout.episodes import Episode, collect_episodes
from apo_agent.rollout.goals import with_goals
from apo_agent.rollout.records import write_token_records
from apo_agent.rollout.tokens import PromptEncoder, prompt_encoder
from apo_agent.runtime.checkpoints import latest_checkpoint, load_checkpoint, save_checkpoint
from apo_agent.runtime.cpu import configure_cpu
from apo_agent.runtime.lock import locked_folder
from apo_agent.runtime.metrics import MetricsLogger, plot_learning_curve, read_metrics
from apo_agent.runtime.seeding import seed_everything, stage_two_seed
from apo_agent.warm_start.demonstrations import option_variants_of
from webshop_gym.data.model import Goal

__all__ = [  # env_spec, prompt_encoder and split_goals moved to apo_agent.rollout; kept importable here
    "Run",
    "TrainResult",
    "TrainingGoals",
    "apo_update",
    "env_spec",
    "grpo_update",
    "prompt_encoder",
    "split_goals",
    "train",
]


@dataclass
class TrainResult:
    """What `train` leaves behind."""

    policy: LMPolicy
    output_dir: Path
    steps: int
    metrics_path: Path
    curve_path: Path
    model_dir: Path
    optimal_values: dict[int, GoalValue]
    wall_time_s: float
    stage1_s: float
    """What sampling Stage 1's reference episodes took (when they were sampled, possibly by an
    earlier run that shared the cache); 0 for GRPO."""
    stage1_cpu_s: float
    """The CPU time of the same."""
    engine: RolloutEngine
    """The run's rollout engine, holding the trained weights: an evaluation after training plays
    on it instead of starting a second one (with vLLM, a second copy of the weights and KV cache)."""


@dataclass
class Run:
    """What `set_up` makes and the stages share."""

    config: TrainConfig
    output_dir: Path
    policy: LMPolicy
    encoder: PromptEncoder
    spec: EnvSpec
    train_envs: list[gym.Env]
    """Set up once to play the training goals by number (`TrainingGoals.playing`)."""
    goals: TrainingGoals
    """The training goals, by number."""
    engine: RolloutEngine
    """Samples the episodes (`apo_agent.engines`); synced with ``policy`` after every update."""
    optimizer: torch.optim.Optimizer
    generator: np.random.Generator
    """Draws Stage 2's goals and env seeds."""
    checkpoint: Path | None
    """The checkpoint this run resumed from."""
    start_step: int = 0
    values: dict[int, GoalValue] = field(default_factory=dict)
    """V* by goal number: from Stage 1, or from the checkpoint."""
    stage1_s: float = 0.0
    """Seconds that sampling Stage 1's reference episodes took (read from their caches)."""
    stage1_cpu_s: float = 0.0
    """The CPU seconds of the same."""
    dev_envs: list[gym.Env] = field(default_factory=list)
    """Made at the first dev evaluation."""

    @property
    def goal_numbers(self) -> list[int]:
        """Every training goal's number, as `collect_episodes` and ``values`` know it."""
        return self.goals.numbers


@dataclass(frozen=True)
class TrainingGoals:
    """The goals Stage 1 and Stage 2 train on, numbered: the train split's first
    ``train_goals`` goals (0..n-1), then the ``rl_option_variants`` option variants of them
    (n..), an ablation of the CPU demo (`apo_agent.warm_start.demonstrations.option_variant`).

    Made once in `set_up`; the envs then play goal numbers (`playing`), so that rollouts
    need not know which goals are variants."""

    split_goals: list[int]
    variants: list[Goal]
    split_goal_at: Callable[[int], Goal]

    @property
    def numbers(self) -> list[int]:
        return list(range(len(self.split_goals) + len(self.variants)))

    def playing(self, envs: Sequence[gym.Env]) -> list[gym.Env]:
        """``envs`` playing goal number g. With variants every goal is played by content (the
        split goals, then the variants); without, goal g is split goal g."""
        if not self.variants:
            return list(envs)
        return with_goals(envs, [*map(self.split_goal_at, self.split_goals), *self.variants])

    def cached_parts(
        self, envs: Sequence[gym.Env], key: dict[str, Any], rl_option_variants: int
    ) -> list[tuple[int, list[int], list[gym.Env], dict[str, Any]]]:
        """Stage 1's parts, each cached and seeded on its own, numbered from 0 within it:
        (offset of its numbers, its numbers, envs that play them, its cache key). The
        variants are cached apart, so that the split goals' cache also serves runs without
        variants."""
        parts = [(0, list(self.split_goals), list(envs), key)]
        if self.variants:
            variant_key = {**key, "rl_option_variants": rl_option_variants}
            numbers = list(range(len(self.variants)))
            parts.append((len(self.split_goals), numbers, with_goals(envs, self.variants), variant_key))
        return parts


# ---- set-up helpers -------------------------------------------------------------------------
def load_policy(model: str, config: TrainConfig) -> LMPolicy:
    return LMPolicy.load(
        model,
        device=config.device,
        bf16=config.bf16,
        lora_rank=config.lora_rank,
        lora_alpha=config.lora_alpha,
        lora_dropout=config.lora_dropout,
        gradient_checkpointing=config.gradient_checkpointing,
    )


def rollout_engine(policy: LMPolicy, config: TrainConfig) -> RolloutEngine:
    """``config.rollout_engine`` for ``policy``: room for the longest prompt and answer."""
    if config.rollout_engine == "transformers":
        return make_engine("transformers", policy)
    return make_engine(
        config.rollout_engine,
        policy,
        max_model_len=config.max_prompt_tokens + config.max_new_tokens,
        seed=config.seed,
    )


# ---- the training run -------------------------------------------------------------------------
def train(config: TrainConfig, model: str | None = None) -> TrainResult:
    """Stage 1 then Stage 2 (A*PO), or GRPO; starts from ``model`` (default ``config.model``).

    Raises :class:`~apo_agent.runtime.lock.FolderInUseError` if another process is training into
    ``config.output_dir``."""
    with locked_folder(config.output_dir):
        return _train(config, model)


def _train(config: TrainConfig, model: str | None) -> TrainResult:
    started = time.perf_counter()
    run = set_up(config, model or config.model)
    if config.algorithm == "apo":
        # A resumed run reads Stage 1 back from its cache: its cost counts (a CPU budget, the
        # record) though its values come from the checkpoint.
        values = estimate_training_values(run)
        run.values = run.values if run.checkpoint is not None else values
    optimise_online(run, goal_pool(run))
    return save_final_model(run, started)


def set_up(config: TrainConfig, model: str) -> Run:
    """Seeds the run once, loads the policy (and its frozen reference), makes the train envs
    and the optimiser, and restores the latest checkpoint when there is one."""
    output_dir = Path(config.output_dir)
    output_dir.mkdir(parents=True, exist_ok=True)
    (output_dir / "config.json").write_text(json.dumps(config.to_dict(), indent=2, default=str))
    configure_cpu(config.torch_threads, resolve_device(config.device))
    generator = seed_everything(config.seed)
    policy = load_policy(model, config)
    spec = env_spec(config)
    envs = make_envs(spec, "train", config.num_envs)
    split = split_goals(envs[0], config.train_goals)
    goals = TrainingGoals(
        split_goals=split,
        variants=option_variants_of(envs[0], split, config.rl_option_variants, config.seed),
        split_goal_at=envs[0].unwrapped.goal_at,  # type: ignore[attr-defined]
    )
    optimizer = torch.optim.AdamW(
        policy.trainable_parameters(), lr=config.learning_rate, weight_decay=config.weight_decay
    )
    checkpoint = latest_checkpoint(output_dir) if config.resume else None
    run = Run(
        config=config,
        output_dir=output_dir,
        policy=policy,
        encoder=prompt_encoder(policy.tokenizer, config),
        spec=spec,
        train_envs=goals.playing(envs),
        goals=goals,
        engine=rollout_engine(policy, config),
        optimizer=optimizer,
        generator=generator,
        checkpoint=checkpoint,
    )
    if checkpoint is not None:
        run.start_step, run.values = load_checkpoint(checkpoint, policy, optimizer, generator)
        run.engine.sync_weights(policy.model)
        tqdm.write(f"resuming from {checkpoint} (step {run.start_step})")
    return run


def estimate_training_values(run: Run) -> dict[int, GoalValue]:
    """Stage 1: V*(x) of every training goal, from N episodes of the frozen pi_ref (cached).

    Each part of the training goals (`TrainingGoals.cached_parts`) has a cache of its own."""
    config = run.config
    folder = config.value_cache_dir or run.output_dir / "optimal-values"
    with run.policy.reference() as reference:
        key = _reference_cache_key(reference.fingerprint(), run.spec, config)
        # Stage 1 runs before any update: an engine of its own (vLLM) still holds the starting
        # weights, pi_ref's; the transformers engine samples the frozen reference itself, as it
        # does for a resumed run (whose engine holds trained weights) missing part of its cache.
        fresh_engine = config.rollout_engine != "transformers" and run.checkpoint is None
        sampler = run.engine if fresh_engine else reference
        # Offline generation: every reference episode at once, up to reference_batch_size.
        count = len(run.goals.numbers)
        envs = make_envs(
            run.spec, "train", min(config.reference_batch_size, count * config.reference_samples)
        )
        values: dict[int, GoalValue] = {}
        run.stage1_s = run.stage1_cpu_s = 0.0
        for offset, numbers, part_envs, part_key in run.goals.cached_parts(
            envs, key, config.rl_option_variants
        ):
            cache = ReferenceRewardCache(folder, part_key)
            part = estimate_optimal_values(
                sampler,
                part_envs,
                run.encoder,
                numbers,
                samples=config.reference_samples,
                beta1=config.beta1,
                max_new_tokens=config.max_new_tokens,
                temperature=config.temperature,
                seed=config.seed,
                cache=cache,
                progress=config.progress,
            )
            seconds, cpu_seconds = cache.cost_of(len(numbers) * config.reference_samples)
            run.stage1_s += seconds
            run.stage1_cpu_s += cpu_seconds
            for g, value in part.items():
                values[offset + g] = dataclasses.replace(value, goal_index=offset + g)
    return values


def _reference_cache_key(reference_fingerprint: str, spec: EnvSpec, config: TrainConfig) -> dict[str, Any]:
    del spec  # the envs are named by the run's arguments, as before the spec was Gymnasium's
    return {
        "reference_weights": reference_fingerprint,
        "env": describe_envs(config),
        "split": "train",
        **{name: getattr(config, name) for name in (*PROMPT_FIELDS, "max_new_tokens", "temperature", "seed")},
    }


def goal_pool(run: Run) -> list[int]:
    """The goals Stage 2 draws from: every training goal for GRPO; for A*PO those with a V*
    that ``goal_filter`` keeps."""
    if run.config.algorithm != "apo":
        return run.goal_numbers
    goal_filter = run.config.goal_filter
    pool = [g for g in run.goal_numbers if g in run.values and run.values[g].kept_by(goal_filter)]
    if not pool:
        returns = "zero" if goal_filter == "all_zero" else "equal"
        raise ValueError(
            f"goal_filter={goal_filter!r} leaves no training goal: pi_ref's N reference returns are all "
            f"{returns} on every goal; set goal_filter='none', raise reference_samples, or start from "
            "a stronger or less deterministic pi_ref"
        )
    return pool


def optimise_online(run: Run, pool: Sequence[int]) -> None:
    """Stage 2: each step plays a batch of on-policy episodes from ``pool`` and makes one update
    (`apo_update` or `grpo_update`); one metrics row per step, dev evaluations and checkpoints."""
    config = run.config
    if run.checkpoint is None:  # Stage 2 samples the same whether Stage 1 ran or was read from its cache
        seed_everything(stage_two_seed(config.seed))
    metrics_path = run.output_dir / "metrics.csv"
    logger = MetricsLogger(
        metrics_path,
        resume_step=run.start_step if run.checkpoint is not None else None,
        tensorboard_dir=run.output_dir / "tensorboard" if config.tensorboard else None,
        wandb_project=config.wandb_project,
        run_config=config.to_dict(),
    )
    episodes_before = run.start_step * config.episodes_per_step
    elapsed_before = _elapsed_before(metrics_path, "wall_time_s")
    cpu_before = _elapsed_before(metrics_path, "cpu_time_s")
    if run.start_step == 0 and config.eval_every:
        logger.log({"step": 0, "episodes": 0, "wall_time_s": 0.0, "cpu_time_s": 0.0, **evaluate_on_dev(run)})
    # A resumed run that had already spent its CPU budget has no steps left.
    first_step = config.steps if _out_of_budget(run, cpu_before) else run.start_step
    bar = tqdm(
        range(first_step, config.steps), desc=f"Stage 2 ({config.algorithm})", disable=not config.progress
    )
    stage2_started, stage2_cpu_started = time.perf_counter(), time.process_time()
    last_saved = run.start_step if run.checkpoint is not None else None
    for step in bar:
        rollout_started = time.perf_counter()
        episodes = collect_episodes(
            run.engine,
            run.train_envs,
            run.encoder,
            _step_requests(pool, config, run.generator),
            max_new_tokens=config.max_new_tokens,
            temperature=config.temperature,
            description="rollouts",
            progress=False,
        )
        if config.save_rollouts:
            write_token_records(episodes, run.output_dir / "rollouts.jsonl", step=step + 1)
        update_started = time.perf_counter()
        if config.algorithm == "apo":
            losses = apo_update(run.policy, run.optimizer, episodes, run.values, config)
        else:
            losses = grpo_update(run.policy, run.optimizer, episodes, config)
        run.engine.sync_weights(run.policy.model)  # the next rollouts sample the updated policy
        finished = time.perf_counter()
        row = {
            "step": step + 1,
            "episodes": episodes_before + (step + 1 - run.start_step) * config.episodes_per_step,
            "wall_time_s": elapsed_before + finished - stage2_started,
            # CPU time of all the process's threads: a fair clock when other work shares the machine.
            "cpu_time_s": cpu_before + time.process_time() - stage2_cpu_started,
            **_episode_metrics(episodes),
            **losses,
            "time/rollout_s": update_started - rollout_started,
            "time/update_s": finished - update_started,
        }
        last = (step + 1 == config.steps) or _out_of_budget(run, row["cpu_time_s"])
        if config.eval_every and ((step + 1) % config.eval_every == 0 or last):
            row.update(evaluate_on_dev(run))
        logger.log(row)
        bar.set_postfix(success=f"{row['charts/success']:.2f}", loss=f"{row['losses/loss']:.4f}")
        if last or (config.checkpoint_every and (step + 1) % config.checkpoint_every == 0):
            _save_checkpoint(run, step + 1)
            last_saved = step + 1
        if last:
            if step + 1 < config.steps:
                tqdm.write(f"CPU budget of {config.cpu_budget_s:g} s reached after step {step + 1}")
            break
    bar.close()
    logger.close()
    if last_saved is None:  # nothing to train (steps already done): keep the state resumable
        _save_checkpoint(run, run.start_step)


def _out_of_budget(run: Run, stage2_cpu_s: float) -> bool:
    """Whether Stage 1's sampling plus ``stage2_cpu_s`` of Stage 2 reach ``cpu_budget_s``."""
    budget = run.config.cpu_budget_s
    return budget is not None and run.stage1_cpu_s + stage2_cpu_s >= budget


def evaluate_on_dev(run: Run) -> dict[str, float]:
    """Success and score on the dev split's first ``eval_goals`` goals (one episode each)."""
    config = run.config
    run.dev_envs = run.dev_envs or make_envs(run.spec, "dev", config.num_envs)
    result = evaluate(
        run.engine,
        config,
        split="dev",
        goals=split_goals(run.dev_envs[0], config.eval_goals),
        envs=run.dev_envs,
        reseed=False,  # Stage 2's random stream goes on as if no evaluation had run
        description="dev evaluation",
    )
    return {"eval/success": result.success / 100.0, "eval/score": result.score / 100.0}


def save_final_model(run: Run, started: float) -> TrainResult:
    """Writes ``final-model/`` and the learning curve (``started``: when the run began, by
    `time.perf_counter`)."""
    model_dir = run.output_dir / "final-model"
    run.policy.save(model_dir)
    metrics_path = run.output_dir / "metrics.csv"
    curve = plot_learning_curve(
        read_metrics(metrics_path),
        run.output_dir / "learning_curve.png",
        title=f"{run.config.algorithm} on {run.config.env_id}",
    )
    return TrainResult(
        policy=run.policy,
        output_dir=run.output_dir,
        steps=run.config.steps,
        metrics_path=metrics_path,
        curve_path=curve,
        model_dir=model_dir,
        optimal_values=run.values,
        wall_time_s=time.perf_counter() - started,
        stage1_s=run.stage1_s,
        stage1_cpu_s=run.stage1_cpu_s,
        engine=run.engine,
    )


def _save_checkpoint(run: Run, step: int) -> None:
    save_checkpoint(
        run.output_dir, step, run.policy, run.optimizer, run.generator, run.values, run.config.to_dict()
    )


def _elapsed_before(metrics_path: Path, column: str) -> float:
    rows = read_metrics(metrics_path)
    return float(rows[-1].get(column, 0.0)) if rows else 0.0


def _step_requests(
    goal_pool: Sequence[int], config: RLConfig, generator: np.random.Generator
) -> list[tuple[int, int]]:
    """(goal, env seed) pairs for one step: ``goals_per_step`` goals, A*PO one episode per
    goal, GRPO group_size."""
    per_goal = config.group_size if config.algorithm == "grpo" else 1
    count = config.goals_per_step
    goals = generator.choice(len(goal_pool), size=count, replace=count > len(goal_pool))
    return [(int(goal_pool[g]), int(generator.integers(2**31))) for g in goals for _ in range(per_goal)]


def _episode_metrics(episodes: Sequence[Episode]) -> dict[str, float]:
    # -log pi of the sampled tokens estimates the policy's entropy per token (at temperature
    # 1): with the log-ratio to pi_ref, it shows how far an update moved the policy.
    logprobs = [
        lp
        for e in episodes
        for s in e.sequences
        for lp, agent in zip(s.logprobs, s.agent_mask, strict=True)
        if agent and lp is not None
    ]
    return {
        "charts/token_entropy": -statistics.fmean(logprobs) if logprobs else float("nan"),
        "charts/success": statistics.fmean(e.success for e in episodes),
        "charts/score": statistics.fmean(e.score for e in episodes),
        "charts/return": statistics.fmean(e.reward for e in episodes),
        "charts/episode_steps": statistics.fmean(e.steps for e in episodes),
        "charts/invalid_actions": statistics.fmean(e.invalid_actions for e in episodes),
        "charts/agent_tokens": statistics.fmean(e.agent_tokens for e in episodes),
        "charts/truncated_prompts": float(sum(e.truncated_prompts for e in episodes)),
    }


# ---- the two updates ------------------------------------------------------------------------------
def _micro_batches(items: Sequence[object], size: int) -> list[list[int]]:
    """Index lists of consecutive chunks of ``items``, each at most ``size`` long."""
    return [list(range(i, min(i + size, len(items)))) for i in range(0, len(items), size)]


def _episode_token_logprobs(policy: LMPolicy, episodes: Sequence[Episode]) -> list[torch.Tensor]:
    """log pi(y_t | h_t) of every agent token, one tensor per episode; one batched
    `token_logprobs` call for all the episodes' sequences (both algorithms score alike)."""
    per_sequence = policy.token_logprobs([s for e in episodes for s in e.sequences])
    tokens, index = [], 0
    for episode in episodes:
        count = len(episode.sequences)
        tokens.append(torch.cat(per_sequence[index : index + count]))
        index += count
    return tokens


def _episode_logprob_sums(policy: LMPolicy, episodes: Sequence[Episode]) -> torch.Tensor:
    """sum_t log pi(y_t | h_t) per episode (over all its sequences' agent tokens)."""
    return torch.stack([t.sum() for t in _episode_token_logprobs(policy, episodes)])


def apo_update(
    policy: LMPolicy,
    optimizer: torch.optim.Optimizer,
    episodes: Sequence[Episode],
    values: dict[int, GoalValue],
    config: RLConfig,
) -> dict[str, float]:
    """One A*PO step: the squared regression of beta2 * log(pi / pi_ref) onto R - V*."""
    batches = _micro_batches(episodes, config.micro_batch_episodes)
    with torch.no_grad(), policy.reference() as reference:
        reference_sums = torch.cat(
            [_episode_logprob_sums(reference, [episodes[i] for i in b]) for b in batches]
        )
    rewards = torch.tensor([e.reward for e in episodes], dtype=torch.float32, device=policy.device)
    optimal = torch.tensor(
        [values[e.goal_index].value for e in episodes], dtype=torch.float32, device=policy.device
    )
    policy.model.train()
    optimizer.zero_grad(set_to_none=True)
    total_loss, log_ratios = 0.0, []
    for batch in batches:
        sums = _episode_logprob_sums(policy, [episodes[i] for i in batch])
        log_ratio = sums - reference_sums[batch]
        # apo_loss is a mean over the micro-batch; weight it so the step's gradient is the full-batch mean.
        loss = apo_loss(log_ratio, rewards[batch], optimal[batch], config.beta2) * (
            len(batch) / len(episodes)
        )
        loss.backward()
        total_loss += float(loss.detach())
        log_ratios.append(log_ratio.detach())
    grad_norm = torch.nn.utils.clip_grad_norm_(policy.trainable_parameters(), config.max_grad_norm)
    optimizer.step()
    return {
        "losses/loss": total_loss,
        "losses/kl": float(torch.cat(log_ratios).mean()),
        "losses/advantage": float((rewards - optimal).mean()),
        "losses/grad_norm": float(grad_norm),
    }


def grpo_update(
    policy: LMPolicy, optimizer: torch.optim.Optimizer, episodes: Sequence[Episode], config: RLConfig
) -> dict[str, float]:
    """GRPO: ``grpo_epochs`` updates of the clipped surrogate with group-normalised advantages."""
    rewards = torch.tensor([e.reward for e in episodes], dtype=torch.float32)
    advantages = grpo_advantages(rewards, config.group_size)
    total_tokens = max(1, sum(e.agent_tokens for e in episodes))
    use_kl = config.grpo_kl_coef > 0
    # Episodes with advantage 0 contribute no gradient (unless the KL term is on): skip their passes.
    active = [i for i in range(len(episodes)) if use_kl or advantages[i] != 0]
    batches = [[active[j] for j in b] for b in _micro_batches(active, config.micro_batch_episodes)]

    def token_logprobs(model: LMPolicy, batch: list[int]) -> list[torch.Tensor]:
        return _episode_token_logprobs(model, [episodes[i] for i in batch]) if batch else []

    old: dict[int, torch.Tensor] = {}
    ref: dict[int, torch.Tensor] = {}
    with torch.no_grad():
        if config.grpo_epochs > 1:
            for batch in batches:
                old.update(zip(batch, token_logprobs(policy, batch), strict=True))
        if use_kl:
            with policy.reference() as reference:
                for batch in batches:
                    ref.update(zip(batch, token_logprobs(reference, batch), strict=True))
    policy.model.train()
    total_loss, clipped, kl, grad_norm = 0.0, [], [], torch.tensor(0.0)
    for _ in range(config.grpo_epochs):
        optimizer.zero_grad(set_to_none=True)
        for batch in batches:
            current = token_logprobs(policy, batch)
            losses = []
            for i, logprobs in zip(batch, current, strict=True):
                per_token, flags = grpo_token_losses(
                    logprobs,
                    old.get(i, logprobs.detach()),
                    advantages[i].to(logprobs.device).expand_as(logprobs),
                    config.clip_eps,
                    ref.get(i),
                    config.grpo_kl_coef,
                )
                losses.append(per_token.sum())
                clipped.append(flags)
                if i in ref:
                    kl.append(float((logprobs - ref[i]).detach().sum()))
            loss = torch.stack(losses).sum() / total_tokens
            loss.backward()
            total_loss += float(loss.detach()) / config.grpo_epochs
        grad_norm = torch.nn.utils.clip_grad_norm_(policy.trainable_parameters(), config.max_grad_norm)
        optimizer.step()
    return {
        "losses/loss": total_loss,
        "losses/kl": statistics.fmean(kl) if kl else float("nan"),
        "losses/advantage": float(advantages.abs().mean()),
        "losses/clip_fraction": float(torch.cat(clipped).mean()) if clipped else 0.0,
        "losses/grad_norm": float(grad_norm),
    }
