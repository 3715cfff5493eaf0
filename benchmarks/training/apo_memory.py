"""Peak memory (RSS) and time of one A*PO Stage 2 update of a real model on CPU.

    python -m benchmarks.training.apo_memory --out benchmarks/results/apo-memory.md

Each setting runs in a fresh process (its peak resident set size is the update's, not an
earlier one's): load the policy (SmolLM2-135M-Instruct by default), make synthetic episodes
of a fixed shape (real token ids of a shop page; what the tokens say does not change memory
or time), and time one `apo_agent.trainer.apo_update` (pi_ref's log-probs, the policy's with
gradients, AdamW). The shapes:

* ``full``: one token sequence per episode, ``turns`` turns of ``prompt`` + ``answer``
  tokens each (``context="full"``, the default of the GPU presets);
* ``last_observation``: one sequence per turn (the CPU demo's context).

The settings compare scoring with full-vocabulary logits (``logit_chunk=0``, what the
policy did before) with the chunked output head (`apo_agent.model.policy.LOGIT_CHUNK`), and
gradient checkpointing on and off.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from benchmarks.machine import peak_rss_mb
from benchmarks.markdown import markdown_record

# name: (lora_rank, logit_chunk (0: full logits), gradient checkpointing, episodes per micro-batch, context)
SETTINGS: dict[str, tuple[int, int, bool, int, str]] = {
    "before: full logits, no checkpointing, LoRA": (8, 0, False, 1, "full"),
    "chunked head, no checkpointing, LoRA": (8, 512, False, 1, "full"),
    "chunked head + checkpointing, LoRA": (8, 512, True, 1, "full"),
    "chunked head + checkpointing, LoRA, 4 episodes": (8, 512, True, 4, "full"),
    "chunked head + checkpointing, full fine-tuning": (0, 512, True, 1, "full"),
    "chunked head + checkpointing, LoRA, last_observation": (8, 512, True, 1, "last_observation"),
}


def measure(
    model: str,
    lora_rank: int,
    logit_chunk: int,
    checkpointing: bool,
    episodes: int,
    context: str,
    shape: dict,
) -> dict[str, Any]:
    """One update in this process; returns its figures."""
    import torch

    from apo_agent.config import TrainConfig
    from apo_agent.model.policy import LMPolicy
    from apo_agent.model.sequences import TokenSequence
    from apo_agent.optimal_values import GoalValue
    from apo_agent.rollout.episodes import Episode
    from apo_agent.trainer import apo_update

    torch.set_num_threads(1)
    torch.manual_seed(0)
    policy = LMPolicy.load(model, device="cpu", lora_rank=lora_rank, gradient_checkpointing=checkpointing)
    policy.logit_chunk = logit_chunk or None
    page = "Back to Search [SEP] Page 1 (Total results: 50) [SEP] Next > [SEP] B078GWRC1J [SEP] "
    page += "Bright Citrus Deodorant by Earth Mama, Natural and Safe for Sensitive Skin [SEP] $10.99 [SEP] "
    text_ids = policy.tokenizer(page * 200, add_special_tokens=False)["input_ids"]
    prompt, answer, turns = shape["prompt"], shape["answer"], shape["turns"]

    def turn(offset: int) -> tuple[list[int], list[bool]]:
        ids = text_ids[offset % 500 : offset % 500 + prompt + answer]
        return ids, [False] * prompt + [True] * answer

    def episode(index: int) -> Episode:
        if context == "full":
            ids, mask = [], []
            for t in range(turns):
                more, more_mask = turn(index + t)
                ids += more
                mask += more_mask
            sequences = [TokenSequence(ids, mask)]
        else:
            sequences = [TokenSequence(*turn(index + t)) for t in range(turns)]
        return Episode(
            index, index, sequences, [], reward=0.5, score=0.5, success=False, steps=turns, invalid_actions=0
        )

    batch = [episode(i) for i in range(episodes)]
    values = {e.goal_index: GoalValue(e.goal_index, 0.1, (0.1,)) for e in batch}
    config = TrainConfig(model=model, lora_rank=lora_rank, micro_batch_episodes=episodes, sft_epochs=0)
    optimizer = torch.optim.AdamW(policy.trainable_parameters(), lr=1e-5)
    loaded_rss = peak_rss_mb() / 1024
    started = time.perf_counter()
    metrics = apo_update(policy, optimizer, batch, values, config)
    seconds = time.perf_counter() - started
    return {
        "peak_rss_gib": peak_rss_mb() / 1024,
        "rss_after_load_gib": loaded_rss,
        "update_s": seconds,
        "tokens": sum(len(s.ids) for e in batch for s in e.sequences),
        "agent_tokens": sum(e.agent_tokens for e in batch),
        "loss": metrics["losses/loss"],
        "trainable_parameters": sum(p.numel() for p in policy.trainable_parameters()),
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--model", default="smollm2")
    parser.add_argument("--turns", type=int, default=8)
    parser.add_argument("--prompt", type=int, default=344, help="prompt tokens per turn")
    parser.add_argument("--answer", type=int, default=40, help="agent tokens per turn")
    parser.add_argument("--only", nargs="*", default=None, help="setting names (default: all)")
    parser.add_argument("--out", type=Path, default=None, help="Markdown file for the table")
    parser.add_argument("--child", default=None, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    shape = {"turns": args.turns, "prompt": args.prompt, "answer": args.answer}
    if args.child is not None:
        print(json.dumps(measure(args.model, *SETTINGS[args.child], shape)))
        return
    rows = []
    for name in args.only or list(SETTINGS):
        command = [
            sys.executable,
            "-m",
            "benchmarks.training.apo_memory",
            "--model",
            args.model,
            "--child",
            name,
        ]
        command += ["--turns", str(args.turns), "--prompt", str(args.prompt), "--answer", str(args.answer)]
        done = subprocess.run(command, capture_output=True, text=True, check=False)
        if done.returncode != 0:
            result: dict[str, Any] = {"error": done.stderr.strip().splitlines()[-1][:200]}
        else:
            result = json.loads(done.stdout.strip().splitlines()[-1])
        rows.append((name, result))
        print(name, result, flush=True)
    lines = [
        "| setting | episodes x tokens (agent) | peak RSS GiB | RSS after load GiB | update s | loss |",
        "|---|---|---:|---:|---:|---:|",
    ]
    for name, r in rows:
        if "error" in r:
            lines.append(f"| {name} | | failed: {r['error']} | | | |")
            continue
        episodes = SETTINGS[name][3]
        lines.append(
            f"| {name} | {episodes} x {r['tokens'] // episodes} ({r['agent_tokens'] // episodes}) | "
            f"{r['peak_rss_gib']:.2f} | {r['rss_after_load_gib']:.2f} | {r['update_s']:.1f} | "
            f"{r['loss']:.4f} |"
        )
    title = f"# One A*PO update of {args.model} on CPU: peak memory"
    shape_line = (
        f"{args.turns} turns of {args.prompt} prompt + {args.answer} agent tokens per episode; "
        "one torch thread."
    )
    text = markdown_record(title, [shape_line, "", *lines], "benchmarks.training.apo_memory", argv)
    if args.out is not None:
        args.out.write_text(text)
    print(text)


if __name__ == "__main__":
    main()
