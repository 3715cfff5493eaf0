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

from benchmarks.markdown import markdown_record, row_line, table

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


RUN_COLUMNS = ["mode", "goals", "reuse", "turns", "sent", "computed", "generated", "CPU s", "wall s"]


def run_cells(result: Played) -> list[object]:
    """One run's row of the first table (`RUN_COLUMNS`)."""
    reuse = "on" if result.reuse else "off"
    counts = [result.turns, result.sent, result.processed, result.generated]
    return [result.mode, result.goals, reuse, *counts, f"{result.cpu_s:.1f}", f"{result.wall_s:.1f}"]


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


def measure(
    model: str,
    episodes: int,
    modes: Sequence[str],
    batched: bool = False,
    history_turns: int = 2,
    max_new_tokens: int = 48,
    threads: int = 1,
    note: Callable[[Played], None] = lambda result: None,
) -> tuple[list[Played], dict[str, int]]:
    """Plays goals ``0..episodes-1`` in each mode, without and with prefix reuse (and, with
    ``batched``, all at once too); every run as it ends goes to ``note``. Returns the runs and
    the tokens of each mode's chat-templated system prompt."""
    import gymnasium as gym

    import webshop_gym  # noqa: F401  (registers the ids)
    from benchmarks.harness.agents import make_factory
    from shared_prompts import system_prompt

    env = gym.make(ENV_ID, split=SPLIT)
    played: list[Played] = []

    def done(result: Played) -> None:
        played.append(result)
        note(result)

    system_tokens: dict[str, int] = {}  # per mode: the system prompt, chat-templated
    for mode in modes:
        factories = {}
        for reuse in (False, True):
            options = {
                "model": model,
                "cpu_threads": str(threads),
                "history_turns": str(history_turns),
                "max_new_tokens": str(max_new_tokens),
                "constrained": str(mode.startswith("constrained")),
                "think": str(mode.endswith("-think")),
                "reuse_prefix": str(reuse),
            }
            factories[reuse] = make_factory("llm", options)
        agents: dict[bool, Any] = {reuse: make_agent() for reuse, make_agent in factories.items()}
        tokenizer = agents[False].prompting.backend.tokenizer
        system = [{"role": "system", "content": system_prompt(agents[False].prompting.prompts)}]
        text = tokenizer.apply_chat_template(system, tokenize=False)
        system_tokens[mode] = len(tokenizer(text, add_special_tokens=False)["input_ids"])
        for goal in range(episodes):
            for reuse, agent in agents.items():
                done(
                    measured(
                        mode, str(goal), reuse, agent.prompting.backend, partial(play_alone, agent, env, goal)
                    )
                )
        if batched and episodes > 1:
            label = f"0-{episodes - 1} at once"
            for reuse, make_agent in factories.items():
                backend = agents[reuse].prompting.backend
                done(measured(mode, label, reuse, backend, partial(play_together, make_agent, episodes)))
    env.close()
    return played, system_tokens


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

    played, system_tokens = measure(
        args.model,
        args.episodes,
        args.modes,
        args.batched,
        args.history_turns,
        args.max_new_tokens,
        args.threads,
        note=lambda result: print(row_line(run_cells(result)), flush=True),
    )
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


def summary(played: Sequence[Played]) -> list[dict[str, Any]]:
    """Per mode and way of playing (one goal at a time, or at once): the runs' goals, whether
    each run gave the same answers with reuse as without, and the per-turn figures (sent; computed
    and CPU seconds without reuse, False, and with it, True) over the turns played without."""
    rows = []
    for mode in dict.fromkeys(r.mode for r in played):
        for together in (False, True):
            off = [r for r in played if r.mode == mode and not r.reuse and ("at once" in r.goals) == together]
            on = [r for r in played if r.mode == mode and r.reuse and ("at once" in r.goals) == together]
            if not off:
                continue
            turns = sum(r.turns for r in off)

            def per_turn(runs: list[Played], field: str, turns: int = turns) -> float:
                return sum(getattr(r, field) for r in runs) / turns

            rows.append(
                {
                    "mode": mode,
                    "together": together,
                    "goals": [r.goals for r in off],
                    "same": [a.outputs == b.outputs for a, b in zip(off, on, strict=True)],
                    "sent_per_turn": per_turn(off, "sent"),
                    "computed_per_turn": {False: per_turn(off, "processed"), True: per_turn(on, "processed")},
                    "cpu_s_per_turn": {False: per_turn(off, "cpu_s"), True: per_turn(on, "cpu_s")},
                }
            )
    return rows


def report(played: Sequence[Played], system_tokens: dict[str, int]) -> tuple[list[str], list[str]]:
    """The tables (every run, then per mode and way of playing) and the runs whose answers differed."""
    lines = table(RUN_COLUMNS, [run_cells(result) for result in played], numeric=[False] * 3 + [True] * 6)
    columns = ["mode", "goals", "system prompt", "sent per turn", "computed per turn, off", "on"]
    columns += ["CPU s per turn, off", "on", "CPU saved", "same answers"]
    rows, mismatches = [], []
    for row in summary(played):
        same = row["same"]
        mismatches += [f"{row['mode']} goals {g}" for g, ok in zip(row["goals"], same, strict=True) if not ok]
        computed, cpu = row["computed_per_turn"], row["cpu_s_per_turn"]
        rows.append(
            [
                row["mode"],
                "at once" if row["together"] else "one at a time",
                system_tokens[row["mode"]],
                f"{row['sent_per_turn']:.0f}",
                f"{computed[False]:.0f}",
                f"{computed[True]:.0f}",
                f"{cpu[False]:.2f}",
                f"{cpu[True]:.2f}",
                f"{1 - cpu[True] / cpu[False]:.0%}",
                f"{sum(same)}/{len(same)} runs",
            ]
        )
    lines += ["", *table(columns, rows, numeric=[False] * 2 + [True] * 7 + [False])]
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
