"""What a SmolLM2 preset (default: `smollm2`, full scale) costs per unit of work, measured on
the CPU, and the run it implies.

    python -m benchmarks.smollm2_costs --out benchmarks/results/smollm2-costs.md

On one torch thread: the warm start's step (a batch of demonstration sequences, all
weights), pi_ref's episodes (a batch of ``num_envs`` greedy constrained episodes, as Stage 1
and evaluation play them), and one Stage 2 update (A*PO, LoRA, one episode per
micro-batch), with the tokens per episode (prompt tokens the model reads over all turns,
and the agent tokens it writes). CPU seconds (``time.process_time``) are given beside wall
seconds: on a shared machine they are the steadier figure. The estimate multiplies them by
the preset's counts.
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

from benchmarks.machine import markdown_record


def clocks() -> tuple[float, float]:
    return time.perf_counter(), time.process_time()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--episodes", type=int, default=8, help="pi_ref episodes (one batch of num_envs)")
    parser.add_argument("--preset", default="smollm2", help="the apo-agent preset whose counts are estimated")
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args(argv)

    import torch

    from apo_agent.config import TrainConfig
    from apo_agent.optimal_values import GoalValue
    from apo_agent.policy import LMPolicy
    from apo_agent.rollout import collect_episodes, make_envs
    from apo_agent.trainer import apo_update, env_spec, prompt_encoder
    from apo_agent.warm_start import collect_demonstrations, supervised_warm_start

    config = TrainConfig.from_preset(args.preset, device="cpu")
    torch.set_num_threads(1)
    torch.manual_seed(0)
    spec = env_spec(config)
    envs = make_envs(spec, "train", config.num_envs)
    figures: dict[str, float] = {}

    # Warm start: a few batches of demonstration sequences, all weights trained.
    policy = LMPolicy.load(config.model, device="cpu", with_reference=False, gradient_checkpointing=True)
    encoder = prompt_encoder(policy.tokenizer, config)
    demonstrations = collect_demonstrations(
        envs,
        encoder,
        list(range(8)),
        skip_options_prob=config.demo_skip_options_prob,
        random_action_prob=config.demo_random_action_prob,
        product=config.demo_product,
        option_variants=0,
        seed=0,
        progress=False,
    )
    sequences = [s for e in demonstrations for s in e.sequences][: 3 * config.sft_batch_size]
    wall, cpu = clocks()
    supervised_warm_start(
        policy,
        sequences,
        epochs=1,
        learning_rate=config.sft_learning_rate,
        batch_size=config.sft_batch_size,
        seed=0,
        progress=False,
    )
    steps = -(-len(sequences) // config.sft_batch_size)
    figures["warm-start step (batch of 8 sequences): wall s"] = (time.perf_counter() - wall) / steps
    figures["warm-start step (batch of 8 sequences): CPU s"] = (time.process_time() - cpu) / steps
    figures["demonstration sequences per goal"] = len([s for e in demonstrations for s in e.sequences]) / len(
        demonstrations
    )
    del policy

    # pi_ref's episodes, then one A*PO update with LoRA.
    policy = LMPolicy.load(
        config.model,
        device="cpu",
        lora_rank=config.lora_rank,
        lora_alpha=config.lora_alpha,
        gradient_checkpointing=True,
    )
    wall, cpu = clocks()
    episodes = collect_episodes(
        policy,
        envs,
        encoder,
        [(g, g) for g in range(args.episodes)],
        max_new_tokens=config.max_new_tokens,
        temperature=config.temperature,
        progress=False,
    )
    figures["pi_ref episode (batched by 8): wall s"] = (time.perf_counter() - wall) / len(episodes)
    figures["pi_ref episode (batched by 8): CPU s"] = (time.process_time() - cpu) / len(episodes)
    figures["steps per episode"] = statistics.fmean(e.steps for e in episodes)
    figures["prompt tokens read per episode"] = statistics.fmean(
        sum(s.agent_mask.count(False) for s in e.sequences) for e in episodes
    )
    figures["agent tokens per episode"] = statistics.fmean(e.agent_tokens for e in episodes)
    figures["pi_ref success on these train goals"] = statistics.fmean(e.success for e in episodes)
    values = {e.goal_index: GoalValue(e.goal_index, e.reward + 0.1, (e.reward,)) for e in episodes}
    optimizer = torch.optim.AdamW(policy.trainable_parameters(), lr=config.learning_rate)
    wall, cpu = clocks()
    apo_update(policy, optimizer, episodes, values, config)
    figures["Stage 2 update per episode (LoRA): wall s"] = (time.perf_counter() - wall) / len(episodes)
    figures["Stage 2 update per episode (LoRA): CPU s"] = (time.process_time() - cpu) / len(episodes)

    train_goals = config.train_goals or 630
    demo_goals = config.demo_goals or 630
    sft_steps = (
        config.sft_epochs
        * demo_goals
        * figures["demonstration sequences per goal"]
        * (1 + config.demo_option_variants)
        / config.sft_batch_size
    )
    episode_cpu = figures["pi_ref episode (batched by 8): CPU s"]
    estimate = {
        "warm start": sft_steps * figures["warm-start step (batch of 8 sequences): CPU s"],
        "Stage 1": train_goals * config.reference_samples * episode_cpu,
        "Stage 2": config.steps
        * config.episodes_per_step
        * (episode_cpu + figures["Stage 2 update per episode (LoRA): CPU s"]),
        "two test evaluations (100 goals)": 2 * 100 * episode_cpu,
    }
    lines = ["| measured (one torch thread) | value |", "|---|---:|"]
    lines += [f"| {name} | {value:.2f} |" for name, value in figures.items()]
    lines += ["", f"| the `{args.preset}` preset, estimated | CPU hours |", "|---|---:|"]
    lines += [f"| {name} | {seconds / 3600:.1f} |" for name, seconds in estimate.items()]
    lines.append(f"| total | {sum(estimate.values()) / 3600:.1f} |")
    title = f"# SmolLM2-135M-Instruct on CPU: costs of the {args.preset} preset"
    text = markdown_record(title, lines, "benchmarks.smollm2_costs", argv)
    if args.out is not None:
        args.out.write_text(text)
    print(text)


if __name__ == "__main__":
    main()
