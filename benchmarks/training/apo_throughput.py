"""Rollout and update throughput of apo-agent (A*PO and GRPO) with a randomly initialised model.

    python -m benchmarks.training.apo_throughput --arch qwen2.5-1.5b --device cuda   # on a GPU
    python -m benchmarks.training.apo_throughput --arch tiny --device cpu --steps 1  # a quick CPU check

Nothing is downloaded: the model is built from its architecture alone with random weights
(``qwen2.5-1.5b``: 28 layers, hidden size 1536, 12 attention heads sharing 2 key-value
heads, MLP 8960, vocabulary 151,936, tied embeddings), and the tokenizer is trained locally
on the shop's text (a random model's ids beyond that vocabulary decode to nothing). A random
model writes random answers, mostly invalid actions, so episodes run to ``--max-steps`` with
answers of up to ``--max-new-tokens``: the figures measure speed, not quality.

For each algorithm it runs ``--steps`` training steps (after one warm-up step) of
``--episodes`` episodes over ``--envs`` envs, with the ``gpu-1.5b`` preset's settings
(whole conversations as context, bf16 autocast and gradient checkpointing on CUDA), and
prints: agent tokens sampled per second during rollouts, rollout and update time per step,
how many episodes the update used, and peak GPU memory. A*PO's V* is fixed at 0 for every
goal: Stage 1 is a rollout like any other, and the update costs the same whatever V* is.
A random model's returns are nearly all equal, and GRPO leaves out episodes whose
group-normalised advantage is 0, so the returns are replaced by random draws before each
update: both updates then use every episode (the table shows how many they used).

If JAX is installed, bm25s imports it, and JAX takes 75% of the GPU's memory at start: run
with ``JAX_PLATFORMS=cpu`` (or ``XLA_PYTHON_CLIENT_PREALLOCATE=false``).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import gymnasium as gym
import torch

import webshop_gym  # noqa: F401  (registers the ids)
from apo_agent.config import TrainConfig
from apo_agent.model.policy import LMPolicy, resolve_device
from apo_agent.model.tiny import product_ids, shop_texts, train_tokenizer
from apo_agent.objectives import grpo_advantages
from apo_agent.optimal_values import GoalValue
from apo_agent.rollout.episodes import collect_episodes
from apo_agent.rollout.tokens import prompt_encoder
from apo_agent.trainer import apo_update, grpo_update
from benchmarks.machine import describe_machine
from benchmarks.markdown import table

ARCHITECTURES: dict[str, dict[str, Any]] = {
    "qwen2.5-1.5b": dict(
        vocab_size=151_936,
        hidden_size=1536,
        intermediate_size=8960,
        num_hidden_layers=28,
        num_attention_heads=12,
        num_key_value_heads=2,
        max_position_embeddings=32_768,
        rope_theta=1_000_000.0,
        rms_norm_eps=1e-6,
        tie_word_embeddings=True,
    ),
    "tiny": dict(
        hidden_size=64,
        intermediate_size=128,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=8192,
        tie_word_embeddings=True,
    ),
}


def build_policy(arch: str, device: str, tokenizer: Any) -> LMPolicy:
    """A Qwen2 model of the named architecture with random weights, wrapped as a policy with pi_ref."""
    from transformers import Qwen2Config, Qwen2ForCausalLM

    settings = {"vocab_size": len(tokenizer), **ARCHITECTURES[arch]}
    config = Qwen2Config(**settings, eos_token_id=tokenizer.eos_token_id, pad_token_id=tokenizer.pad_token_id)
    torch_device = resolve_device(device)
    model = Qwen2ForCausalLM(config).to(torch_device)
    on_gpu = torch_device.type == "cuda"
    if on_gpu:
        model.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})
    policy = LMPolicy(model, tokenizer, torch_device, bf16=on_gpu)
    policy.freeze_reference()
    return policy


def measure(policy: LMPolicy, config: TrainConfig, envs: list[gym.Env], steps: int) -> dict[str, float]:
    """Mean rollout / update figures over ``steps`` steps after one warm-up step."""
    encoder = prompt_encoder(policy.tokenizer, config)
    optimizer = torch.optim.AdamW(policy.trainable_parameters(), lr=config.learning_rate)
    goals, per_goal = config.goals_per_step, config.episodes_per_step // config.goals_per_step
    values = {g: GoalValue(g, 0.0, (0.0,)) for g in range(goals)}
    random_returns = torch.Generator().manual_seed(0)
    rows = []
    for step in range(steps + 1):
        if policy.device.type == "cuda":
            torch.cuda.synchronize()
        started = time.perf_counter()
        requests = [(g, step * 1000 + g * per_goal + k) for g in range(goals) for k in range(per_goal)]
        episodes = collect_episodes(
            policy,
            envs,
            encoder,
            requests,
            max_new_tokens=config.max_new_tokens,
            temperature=1.0,
            progress=False,
        )
        rolled = time.perf_counter()
        for episode in episodes:  # random returns: GRPO's groups are not all equal (see above)
            episode.reward = float(torch.rand((), generator=random_returns))
        if config.algorithm == "apo":
            apo_update(policy, optimizer, episodes, values, config)
        else:
            grpo_update(policy, optimizer, episodes, config)
        if policy.device.type == "cuda":
            torch.cuda.synchronize()
        finished = time.perf_counter()
        tokens = sum(e.agent_tokens for e in episodes)
        updated = len(episodes)
        if config.algorithm == "grpo":  # GRPO skips episodes whose advantage is 0
            rewards = torch.tensor([e.reward for e in episodes])
            updated = int((grpo_advantages(rewards, config.group_size) != 0).sum())
        if step > 0:  # the first step warms up kernels and allocators
            rows.append((tokens / (rolled - started), rolled - started, finished - rolled, tokens, updated))
    return {
        "tokens_per_s": statistics.fmean(r[0] for r in rows),
        "rollout_s": statistics.fmean(r[1] for r in rows),
        "update_s": statistics.fmean(r[2] for r in rows),
        "agent_tokens": statistics.fmean(r[3] for r in rows),
        "updated_episodes": statistics.fmean(r[4] for r in rows),
    }


def main(argv: list[str] | None = None) -> dict[str, Any]:
    """Measures both algorithms, prints (and with ``--out`` writes) the table; returns the
    figures: ``{"A*PO": measure(...), "GRPO": measure(...)}`` plus the set-up they ran on."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--arch", choices=sorted(ARCHITECTURES), default="qwen2.5-1.5b")
    parser.add_argument("--device", default="auto")
    parser.add_argument("--steps", type=int, default=3, help="measured steps per algorithm")
    parser.add_argument("--episodes", type=int, default=64, help="episodes per step")
    parser.add_argument("--envs", type=int, default=64, help="envs stepped side by side (generation batch)")
    parser.add_argument("--group-size", type=int, default=8, help="GRPO episodes per goal")
    parser.add_argument("--max-steps", type=int, default=5, help="actions per episode")
    parser.add_argument("--max-new-tokens", type=int, default=128)
    parser.add_argument("--out", type=Path, help="also write the table to this Markdown file")
    arguments = parser.parse_args(argv)

    torch.manual_seed(0)
    env = gym.make("WebShop-Mini-Text-v0", split="train")
    tokenizer = train_tokenizer(shop_texts(env), vocab_size=3000, whole_tokens=product_ids(env))
    policy = build_policy(arguments.arch, arguments.device, tokenizer)
    envs = [
        gym.make("WebShop-Mini-Text-v0", split="train", max_steps=arguments.max_steps)
        for _ in range(arguments.envs)
    ]
    device = policy.device
    results: dict[str, Any] = {
        "setup": {
            "arch": arguments.arch,
            "parameters": sum(p.numel() for p in policy.model.parameters()),
            "hardware": torch.cuda.get_device_name(device) if device.type == "cuda" else describe_machine(),
            "command": " ".join(argv if argv is not None else sys.argv[1:]),
            **{k: getattr(arguments, k) for k in ("episodes", "envs", "max_steps", "max_new_tokens")},
        },
        "algorithms": {},
    }
    for algorithm in ("apo", "grpo"):
        config = TrainConfig.from_preset(
            "gpu-1.5b",
            model=f"random-{arguments.arch}",  # a label: the model is built above
            device=str(device),
            algorithm=algorithm,
            # The same episodes per step for both: this measures the cost of an episode.
            goals_per_step=arguments.episodes // (arguments.group_size if algorithm == "grpo" else 1),
            num_envs=arguments.envs,
            group_size=arguments.group_size,
            max_steps=arguments.max_steps,
            max_new_tokens=arguments.max_new_tokens,
            micro_batch_episodes=min(4, arguments.episodes),
        )
        if device.type == "cuda":
            torch.cuda.reset_peak_memory_stats(device)
        figures = measure(policy, config, envs, arguments.steps)
        figures["peak_gpu_gib"] = (
            torch.cuda.max_memory_allocated(device) / 2**30 if device.type == "cuda" else None
        )
        results["algorithms"]["A*PO" if algorithm == "apo" else "GRPO"] = figures
    text = markdown(results)
    print(text)
    if arguments.out is not None:
        arguments.out.parent.mkdir(parents=True, exist_ok=True)
        arguments.out.write_text(text)
    return results


def markdown(results: dict[str, Any]) -> str:
    """`main`'s results as the recorded Markdown page."""
    setup = results["setup"]
    header = ["algorithm", "rollout tokens/s", "rollout s/step", "update s/step", "agent tokens/step"]
    header += ["episodes in the update", "peak GPU GiB"]
    rows = [
        [
            name,
            f"{f['tokens_per_s']:.0f}",
            f"{f['rollout_s']:.2f}",
            f"{f['update_s']:.2f}",
            f"{f['agent_tokens']:.0f}",
            f"{f['updated_episodes']:.0f}",
            "-" if f["peak_gpu_gib"] is None else f"{f['peak_gpu_gib']:.1f}",
        ]
        for name, f in results["algorithms"].items()
    ]
    lines = [
        f"# apo-agent throughput: {setup['arch']} ({setup['parameters'] / 1e6:.0f} M parameters, "
        "random weights)",
        "",
        f"Device: {setup['hardware']}  ",
        f"Command: `python -m benchmarks.training.apo_throughput {setup['command']}`",
        "",
        f"{setup['episodes']} episodes per step, {setup['envs']} envs, up to {setup['max_steps']} actions "
        f"of up to {setup['max_new_tokens']} tokens, whole conversations as context.",
        "",
        *table(header, rows, numeric=[False] + [True] * 6),
    ]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    main()
