"""Prompt tokens of the LLM agent's episodes, and what reusing cached prompt prefixes saves.

    python -m benchmarks.prompt_tokens --episodes 3 --out benchmarks/results/prompt-tokens.md

Every turn the llm agent (`benchmarks.agents.llm`) sends the whole conversation again: the
system prompt, the last ``--history-turns`` turns (prompt and answer) and the new turn
(instruction, page, actions). This plays the first ``--episodes`` goals of
WebShop-Mini-Text-v0's test split with a transformers model (default SmolLM2-135M-Instruct,
greedy, one env) in each of ``--modes``, each goal twice: every prompt read whole, then with
``reuse_prefix`` (each prompt starts from the cached keys and values of the longest token
prefix it shares with an earlier sequence). Per episode it prints the turns, the prompt
tokens sent (summed over turns), the prompt tokens the model computed, the answer tokens it
generated, CPU seconds (``time.process_time``: the fair figure on a shared machine) and wall
seconds, and whether both ways gave the same answers at every turn; it exits 1 where they
differ. Modes: ``free`` (answers in free text), ``constrained`` (only the page's actions),
and either with ``-think`` (a free thought first).
"""

from __future__ import annotations

import argparse
import dataclasses
import statistics
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from benchmarks.machine import markdown_record

MODES = ("free", "constrained", "free-think", "constrained-think")
ENV_ID, SPLIT = "WebShop-Mini-Text-v0", "test"


@dataclasses.dataclass
class Episode:
    """One goal played one way."""

    mode: str
    goal: int
    reuse: bool
    outputs: list[str]
    sent: int
    processed: int
    generated: int
    cpu_s: float
    wall_s: float


def play(agent: Any, env: Any, goal: int, mode: str, reuse: bool) -> Episode:
    """Plays goal ``goal`` to its end and counts what the agent's backend read and wrote."""
    backend = agent.backend
    before = dataclasses.replace(backend.token_counts)
    wall, cpu = time.perf_counter(), time.process_time()
    observation, info = env.reset(seed=goal, options={"goal_index": goal})
    agent.reset(seed=goal)
    outputs, done = [], False
    while not done:
        action = agent.act(observation, info)
        outputs.append(agent.last_output)
        observation, _, terminated, truncated, info = env.step(action)
        done = terminated or truncated
    after = backend.token_counts
    return Episode(
        mode,
        goal,
        reuse,
        outputs,
        after.sent - before.sent,
        after.processed - before.processed,
        after.generated - before.generated,
        time.process_time() - cpu,
        time.perf_counter() - wall,
    )


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--model", default="smollm2", help="hub name, local folder or smollm2")
    parser.add_argument("--episodes", type=int, default=3, help="goals 0..N-1 of the test split")
    parser.add_argument("--modes", nargs="+", choices=MODES, default=["free", "constrained"])
    parser.add_argument("--history-turns", type=int, default=2)
    parser.add_argument("--max-new-tokens", type=int, default=48)
    parser.add_argument("--threads", type=int, default=1, help="torch CPU threads")
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args(argv)
    if args.episodes < 1:
        parser.error("--episodes must be at least 1")

    import gymnasium as gym

    import webshop_gym  # noqa: F401  (registers the ids)
    from benchmarks.agents import make_factory
    from shared_prompts import system_prompt

    env = gym.make(ENV_ID, split=SPLIT)
    episodes: list[Episode] = []
    system_tokens = 0
    for mode in args.modes:
        agents: dict[bool, Any] = {}
        for reuse in (False, True):
            options = {
                "model": args.model,
                "cpu_threads": str(args.threads),
                "history_turns": str(args.history_turns),
                "max_new_tokens": str(args.max_new_tokens),
                "constrained": str(mode.startswith("constrained")),
                "think": str(mode.endswith("-think")),
                "reuse_prefix": str(reuse),
            }
            agents[reuse] = make_factory("llm", options)()
        tokenizer = agents[False].backend.tokenizer
        system = [{"role": "system", "content": system_prompt(agents[False].prompts)}]
        text = tokenizer.apply_chat_template(system, tokenize=False)
        system_tokens = len(tokenizer(text, add_special_tokens=False)["input_ids"])
        for goal in range(args.episodes):
            for reuse in (False, True):
                episode = play(agents[reuse], env, goal, mode, reuse)
                episodes.append(episode)
                print(
                    f"{mode} goal {goal} reuse={reuse}: {len(episode.outputs)} turns, {episode.sent} sent, "
                    f"{episode.processed} computed, {episode.generated} generated, "
                    f"{episode.cpu_s:.1f} CPU s, {episode.wall_s:.1f} wall s",
                    flush=True,
                )
    env.close()

    lines, mismatches = report(episodes, system_tokens)
    title = "# Prompt tokens per episode of the llm agent, and prefix reuse"
    lines = [
        f"{args.model} on {ENV_ID} {SPLIT}, goals 0-{args.episodes - 1}, greedy, one env, "
        f"history_turns={args.history_turns}, max_new_tokens={args.max_new_tokens}, "
        f"{args.threads} torch thread(s). Sent: prompt tokens over all turns; computed: those "
        "the model ran (sent less what came from a reused cache); CPU s: process time, "
        "the steady figure on a shared machine.",
        "",
        *lines,
    ]
    text = markdown_record(title, lines, "benchmarks.prompt_tokens", argv)
    if args.out is not None:
        args.out.write_text(text)
    print(text)
    if mismatches:
        sys.exit(1)


def report(episodes: Sequence[Episode], system_tokens: int) -> tuple[list[str], list[str]]:
    """The tables (per episode, then per mode) and the episodes whose answers differed."""
    lines = [
        "| mode | goal | reuse | turns | sent | computed | generated | CPU s | wall s |",
        "|---|---:|---|---:|---:|---:|---:|---:|---:|",
    ]
    for e in episodes:
        lines.append(
            f"| {e.mode} | {e.goal} | {'on' if e.reuse else 'off'} | {len(e.outputs)} | {e.sent} | "
            f"{e.processed} | {e.generated} | {e.cpu_s:.1f} | {e.wall_s:.1f} |"
        )
    lines += [
        "",
        "| mode | sent per turn | computed per turn, off | on | CPU s per turn, off | on | "
        "CPU saved | same answers |",
        "|---|---:|---:|---:|---:|---:|---:|---|",
    ]
    mismatches = []
    for mode in dict.fromkeys(e.mode for e in episodes):
        off = [e for e in episodes if e.mode == mode and not e.reuse]
        on = [e for e in episodes if e.mode == mode and e.reuse]
        same = [a.outputs == b.outputs for a, b in zip(off, on, strict=True)]
        mismatches += [f"{mode} goal {a.goal}" for a, ok in zip(off, same, strict=True) if not ok]
        turns = sum(len(e.outputs) for e in off)

        def per_turn(rows: list[Episode], field: str, turns: int = turns) -> float:
            return sum(getattr(e, field) for e in rows) / turns

        cpu_off, cpu_on = per_turn(off, "cpu_s"), per_turn(on, "cpu_s")
        lines.append(
            f"| {mode} | {per_turn(off, 'sent'):.0f} | {per_turn(off, 'processed'):.0f} | "
            f"{per_turn(on, 'processed'):.0f} | {cpu_off:.2f} | {cpu_on:.2f} | "
            f"{1 - cpu_on / cpu_off:.0%} | {sum(same)}/{len(same)} episodes |"
        )
    mean_turns = statistics.fmean(len(e.outputs) for e in episodes)
    lines += [
        "",
        f"System prompt: {system_tokens} tokens (chat-templated). Mean turns per episode: {mean_turns:.1f}.",
    ]
    if mismatches:
        lines.append(f"Answers differed with reuse in: {', '.join(mismatches)}.")
    return lines, mismatches


if __name__ == "__main__":
    main()
