"""Prompt tokens of the LLM agent's episodes, and what reusing cached prompt prefixes saves.

    python -m benchmarks.harness.prompt_tokens --episodes 3 --out benchmarks/results/prompt-tokens.md

Every turn the llm agent (`benchmarks.harness.agents.llm`) sends the whole conversation again: the
system prompt, the last ``--history-turns`` turns (prompt and answer) and the new turn
(instruction, page, actions). This plays the first ``--episodes`` goals of
WebShop-Mini-Text-v0's test split with a transformers model (default SmolLM2-135M-Instruct,
greedy, one env) in each of ``--modes``, each goal twice: every prompt read whole, then with
``reuse_prefix`` (each prompt starts from the cached keys and values of the longest token
prefix it shares with an earlier sequence). With ``--batched`` it then plays the same goals
at once, one slot each (`benchmarks.harness.run.run_agent`), both ways: without reuse the slots'
prompts go in one left-padded batch, with it one at a time. Per run it prints the turns, the
prompt tokens sent (summed over turns), the prompt positions the model computed, the answer
positions it generated, CPU seconds (``time.process_time``: the fair figure on a shared
machine) and wall seconds; then whether both ways gave the same answers at every turn, and
it exits 1 where they differ. Modes: ``free`` (answers in free text), ``constrained`` (only
the page's actions), and either with ``-think`` (a free thought first).
"""

from __future__ import annotations

import argparse
import dataclasses
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from functools import partial
from pathlib import Path
from typing import Any

from benchmarks.markdown import markdown_record

MODES = ("free", "constrained", "free-think", "constrained-think")
ENV_ID, SPLIT = "WebShop-Mini-Text-v0", "test"


@dataclasses.dataclass
class Played:
    """Episodes played one way: one goal alone, or several goals at once in a batch of slots."""

    mode: str
    goals: str
    reuse: bool
    outputs: list[list[str]]  # per episode, the raw answer of every turn
    sent: int
    processed: int
    generated: int
    cpu_s: float
    wall_s: float

    @property
    def turns(self) -> int:
        return sum(len(episode) for episode in self.outputs)

    def line(self) -> str:
        return (
            f"| {self.mode} | {self.goals} | {'on' if self.reuse else 'off'} | {self.turns} | {self.sent} | "
            f"{self.processed} | {self.generated} | {self.cpu_s:.1f} | {self.wall_s:.1f} |"
        )


def measured(mode: str, goals: str, reuse: bool, backend: Any, play: Callable[[], list[list[str]]]) -> Played:
    """Runs ``play`` and counts what ``backend`` read and wrote meanwhile, and the time."""
    before = dataclasses.replace(backend.token_counts)
    wall, cpu = time.perf_counter(), time.process_time()
    outputs = play()
    cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    after = backend.token_counts
    sent, processed = after.sent - before.sent, after.processed - before.processed
    return Played(mode, goals, reuse, outputs, sent, processed, after.generated - before.generated, cpu, wall)


def play_alone(agent: Any, env: Any, goal: int) -> list[list[str]]:
    """Goal ``goal`` (seed ``goal``, as `benchmarks.harness.run` plays episode ``goal``) to its end."""
    observation, info = env.reset(seed=goal, options={"goal_index": goal})
    agent.reset(seed=goal)
    outputs, done = [], False
    while not done:
        action = agent.act(observation, info)
        outputs.append(agent.last_output)
        observation, _, terminated, truncated, info = env.step(action)
        done = terminated or truncated
    return [outputs]


def play_together(make_agent: Any, episodes: int) -> list[list[str]]:
    """Goals ``0..episodes-1`` at once, one slot each (`benchmarks.harness.run.run_agent`)."""
    from benchmarks.harness.run import env_spec, run_agent

    records = run_agent("llm", make_agent, env_spec(ENV_ID, SPLIT), episodes, n_envs=episodes, progress=False)
    return [[step["model_output"] for step in record["trajectory"][1:]] for record in records]


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--model", default="smollm2", help="hub name, local folder or smollm2")
    parser.add_argument("--episodes", type=int, default=3, help="goals 0..N-1 of the test split")
    parser.add_argument("--modes", nargs="+", choices=MODES, default=["free", "constrained"])
    parser.add_argument(
        "--batched", action="store_true", help="also play the goals at once, one slot each, both ways"
    )
    parser.add_argument("--history-turns", type=int, default=2)
    parser.add_argument("--max-new-tokens", type=int, default=48)
    parser.add_argument("--threads", type=int, default=1, help="torch CPU threads")
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args(argv)
    if args.episodes < 1:
        parser.error("--episodes must be at least 1")

    import gymnasium as gym

    import webshop_gym  # noqa: F401  (registers the ids)
    from benchmarks.harness.agents import make_factory
    from shared_prompts import system_prompt

    env = gym.make(ENV_ID, split=SPLIT)
    played: list[Played] = []

    def note(result: Played) -> None:
        played.append(result)
        print(result.line(), flush=True)

    system_tokens: dict[str, int] = {}  # per mode: the system prompt, chat-templated
    for mode in args.modes:
        factories = {}
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
            factories[reuse] = make_factory("llm", options)
        agents: dict[bool, Any] = {reuse: make_agent() for reuse, make_agent in factories.items()}
        tokenizer = agents[False].backend.tokenizer
        system = [{"role": "system", "content": system_prompt(agents[False].prompts)}]
        text = tokenizer.apply_chat_template(system, tokenize=False)
        system_tokens[mode] = len(tokenizer(text, add_special_tokens=False)["input_ids"])
        for goal in range(args.episodes):
            for reuse, agent in agents.items():
                note(measured(mode, str(goal), reuse, agent.backend, partial(play_alone, agent, env, goal)))
        if args.batched and args.episodes > 1:
            label = f"0-{args.episodes - 1} at once"
            for reuse, make_agent in factories.items():
                backend = agents[reuse].backend
                note(measured(mode, label, reuse, backend, partial(play_together, make_agent, args.episodes)))
    env.close()

    lines, mismatches = report(played, system_tokens)
    title = "# Prompt tokens per episode of the llm agent, and prefix reuse"
    lines = [
        f"{args.model} on {ENV_ID} {SPLIT}, greedy, history_turns={args.history_turns}, "
        f"max_new_tokens={args.max_new_tokens}, {args.threads} torch thread(s). Goals one at a "
        "time in one env, then (with --batched) all at once in one slot each, the prompts of "
        "all slots in one left-padded batch without reuse and one at a time with it. Sent: "
        "prompt tokens over all turns; computed: the prompt positions the model ran (sent less "
        "what came from a reused cache, plus batch padding); generated: answer positions "
        "(a batch's finished rows included); CPU s: process time, the steady figure on a "
        "shared machine; wall s is noisy there.",
        "",
        *lines,
    ]
    text = markdown_record(title, lines, "benchmarks.harness.prompt_tokens", argv)
    if args.out is not None:
        args.out.write_text(text)
    print(text)
    if mismatches:
        sys.exit(1)


def report(played: Sequence[Played], system_tokens: dict[str, int]) -> tuple[list[str], list[str]]:
    """The tables (every run, then per mode and way of playing) and the runs whose answers differed."""
    lines = [
        "| mode | goals | reuse | turns | sent | computed | generated | CPU s | wall s |",
        "|---|---|---|---:|---:|---:|---:|---:|---:|",
        *(result.line() for result in played),
        "",
        "| mode | goals | system prompt | sent per turn | computed per turn, off | on | "
        "CPU s per turn, off | on | CPU saved | same answers |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|---|",
    ]
    mismatches = []
    for mode in dict.fromkeys(r.mode for r in played):
        for together in (False, True):
            off = [r for r in played if r.mode == mode and not r.reuse and ("at once" in r.goals) == together]
            on = [r for r in played if r.mode == mode and r.reuse and ("at once" in r.goals) == together]
            if not off:
                continue
            same = [a.outputs == b.outputs for a, b in zip(off, on, strict=True)]
            mismatches += [f"{mode} goals {a.goals}" for a, ok in zip(off, same, strict=True) if not ok]
            turns = sum(r.turns for r in off)

            def per_turn(rows: list[Played], field: str, turns: int = turns) -> float:
                return sum(getattr(r, field) for r in rows) / turns

            cpu_off, cpu_on = per_turn(off, "cpu_s"), per_turn(on, "cpu_s")
            lines.append(
                f"| {mode} | {'at once' if together else 'one at a time'} | {system_tokens[mode]} | "
                f"{per_turn(off, 'sent'):.0f} | "
                f"{per_turn(off, 'processed'):.0f} | {per_turn(on, 'processed'):.0f} | {cpu_off:.2f} | "
                f"{cpu_on:.2f} | {1 - cpu_on / cpu_off:.0%} | {sum(same)}/{len(same)} runs |"
            )
    mean_turns = statistics.fmean(len(episode) for r in played for episode in r.outputs)
    lines += [
        "",
        "System prompt: tokens of the chat-templated system message. "
        f"Mean turns per episode: {mean_turns:.1f}.",
    ]
    if mismatches:
        lines.append(f"Answers differed with reuse in: {', '.join(mismatches)}.")
    return lines, mismatches


if __name__ == "__main__":
    main()
