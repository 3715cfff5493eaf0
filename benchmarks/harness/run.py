"""The agent benchmark runner: agents x env ids x splits x N episodes, over vector envs.

    python -m benchmarks.harness.run --agents random rule heuristic --env WebShop-Mini-Text-v0 \\
        --split test --out benchmarks/results/mini-test

    python -m benchmarks.harness.run --agents heuristic --env WebShop-Text-v0 --split test \\
        --env-arg catalog=../shared/webshop-1k --env-arg goals=synthetic --out /tmp/1k

Each (agent, env, split) plays ``--episodes`` episodes (default: every goal of the split,
goal i with seed ``--seed + i``) on a `gymnasium.vector.SyncVectorEnv` of ``--n-envs``
envs (`webshop_gym.vector.play_episodes`, which apo-agent's rollouts use too), one agent
per env slot. Written to ``--out``:

* ``episodes/<agent>__<env>__<split>.jsonl.gz``: one JSON object per episode: the goal
  (for analysis; agents never see it), the trajectory (page text without the
  instruction header, cut to ``--observation-chars``, action, reward, page reached, action error), the reward
  breakdown and the purchase;
* ``runs.json``: per command, its runs: agent, env, catalogue, goal source, split and the
  SHA-256 of the split manifest (`webshop_gym.data.splits`: results with the same hash
  played the same goal numbers), episodes, seconds, episode file. Every episode record
  names them too;
* ``results.md`` (the table, the command, the machine), ``summary.json``,
  ``failures.md`` (failed episodes grouped by kind, with examples) and ``plots/``:
  see `benchmarks.harness.report`.

Agent options: ``--set AGENT.OPTION=VALUE`` (e.g. ``--set llm.model=/path/to/model``,
``--set sb3.policy=benchmarks/results/sb3/policy.zip``); ``--label AGENT=NAME`` renames an
agent in the tables.
"""

from __future__ import annotations

import argparse
import gzip
import json
import shlex
import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import gymnasium as gym
from tqdm import tqdm

import webshop_gym
from benchmarks.harness.agents import AGENTS, Agent, AgentFactory, make_factory
from benchmarks.machine import describe_machine
from webshop_gym.render import page_without_instruction
from webshop_gym.vector import EpisodeStart, Step, Turn, play_episodes
from webshop_gym.wire import goal_to_json

DEFAULT_OBSERVATION_CHARS = 200
# What every run and episode record says about the goals it played.
GOAL_FIELDS = ("catalogue", "goal_source", "split", "split_manifest")


@dataclass(frozen=True)
class EnvSpec:
    """One env configuration: a registered id, extra ``gym.make`` arguments and a split."""

    env_id: str
    split: str = "test"
    kwargs: Mapping[str, Any] = field(default_factory=dict)

    @property
    def label(self) -> str:
        """A short name: the id, plus the catalogue folder's name and the goal source if given."""
        extra = []
        if "catalog" in self.kwargs:
            extra.append(Path(str(self.kwargs["catalog"])).name)
        if "goals" in self.kwargs:
            extra.append(f"{self.kwargs['goals']} goals")
        extra += [f"{k}={v}" for k, v in sorted(self.kwargs.items()) if k not in ("catalog", "goals")]
        return f"{self.env_id} ({', '.join(extra)})" if extra else self.env_id

    def make(self) -> gym.Env:
        return gym.make(self.env_id, split=self.split, **self.kwargs)


def page_text(observation: str, instruction: str, limit: int) -> str:
    """The page without the instruction header every page repeats, cut to ``limit`` characters."""
    return page_without_instruction(observation, instruction)[:limit]


def _act(agents: Sequence[Agent], turns: Sequence[Turn]) -> list[str]:
    chosen = [agents[turn.slot] for turn in turns]
    batch = getattr(type(chosen[0]), "act_batch", None)
    if batch is not None and len(chosen) > 1:
        return list(batch(chosen, [turn.observation for turn in turns], [turn.info for turn in turns]))
    return [agent.act(turn.observation, turn.info) for agent, turn in zip(chosen, turns, strict=True)]


def run_agent(
    agent_name: str,
    make_agent: AgentFactory,
    spec: EnvSpec,
    episodes: int | None = None,
    n_envs: int = 4,
    seed: int = 0,
    observation_chars: int = DEFAULT_OBSERVATION_CHARS,
    progress: bool = True,
) -> list[dict[str, Any]]:
    """Plays ``episodes`` episodes of one agent on one env configuration.

    Episode ``i`` plays goal ``i % len(split)`` of the split with seed ``seed + i``, and
    the agent is reset with that seed, so results do not depend on ``n_envs``.

    Returns:
        One record per episode, in episode order (see the module docstring).
    """
    probe = spec.make()
    n_goals = len(probe.unwrapped.goal_indices)  # type: ignore[attr-defined]
    manifest = probe.unwrapped.split_manifest  # type: ignore[attr-defined]
    probe.close()
    # What names the goals played, in every record: results compare only where these agree.
    goals = {
        "catalogue": manifest.catalogue,
        "goal_source": manifest.goal_source,
        "split": spec.split,
        "split_manifest": manifest.sha256,
    }
    episodes = n_goals if episodes is None else episodes
    if episodes < 1:
        raise ValueError(f"episodes must be at least 1, got {episodes}")
    envs = [spec.make() for _ in range(max(1, min(n_envs, episodes)))]
    agents = [make_agent() for _ in envs]
    records: dict[int, dict[str, Any]] = {}
    bar = tqdm(
        total=episodes, desc=f"{agent_name} on {spec.label} {spec.split}", disable=not progress, leave=False
    )

    def on_start(turn: Turn) -> None:
        agents[turn.slot].reset(seed=seed + turn.episode)
        records[turn.episode] = {
            "agent": agent_name,
            "env": spec.label,
            "env_id": spec.env_id,
            "env_kwargs": dict(spec.kwargs),
            **goals,
            "episode": turn.episode,
            "seed": seed + turn.episode,
            "goal_index": turn.info["goal_index"],
            "instruction": turn.info["instruction"],
            "goal": goal_to_json(envs[turn.slot].unwrapped.goal),  # type: ignore[attr-defined]
            "trajectory": [
                {
                    "observation": page_text(turn.observation, turn.info["instruction"], observation_chars),
                    "page": turn.info["page"],
                }
            ],
            "_started": time.perf_counter(),
        }

    def on_step(step: Step) -> None:
        record = records[step.episode]
        entry = {
            "action": step.action,
            "reward": step.reward,
            "page": step.info["page"],
            "action_error": step.info["action_error"],
            "observation": page_text(step.observation, record["instruction"], observation_chars),
        }
        output = getattr(agents[step.slot], "last_output", None)
        if output is not None:
            entry["model_output"] = output
        record["trajectory"].append(entry)
        if step.done:
            _finish(record, step.info, step.terminated)
            bar.update(1)

    starts = [EpisodeStart(seed + episode, {"goal_index": episode % n_goals}) for episode in range(episodes)]
    play_episodes(envs, starts, lambda turns: _act(agents, turns), on_start=on_start, on_step=on_step)
    bar.close()
    for env in envs:
        env.close()
    return [records[e] for e in range(episodes)]


def _finish(record: dict[str, Any], info: Mapping[str, Any], terminated: bool) -> None:
    started = record.pop("_started")
    steps = record["trajectory"][1:]
    record.update(
        steps=len(steps),
        seconds=round(time.perf_counter() - started, 4),
        purchased=terminated and "purchased_asin" in info,
        score=float(info.get("score", 0.0)),
        success=bool(info.get("success", False)),
        reward_breakdown=info.get("reward_breakdown"),
        purchased_asin=info.get("purchased_asin"),
        purchased_options=info.get("purchased_options"),
        invalid_actions=sum(bool(s["action_error"]) for s in steps),
    )


def episode_file(out: Path, agent: str, spec: EnvSpec) -> Path:
    def slug(text: str) -> str:
        return "".join(c if c.isalnum() or c in "-." else "_" for c in text).strip("_")

    return out / "episodes" / f"{slug(agent)}__{slug(spec.label)}__{spec.split}.jsonl.gz"


def write_episodes(path: Path, records: Sequence[Mapping[str, Any]]) -> None:
    """One JSON object per line, gzipped (``zcat`` reads it); mtime 0 keeps the bytes reproducible."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("wb") as raw, gzip.GzipFile(fileobj=raw, mode="wb", mtime=0, filename="") as zipped:
        for record in records:
            zipped.write((json.dumps(record, ensure_ascii=False) + "\n").encode())


def _key_values(pairs: Sequence[str], what: str) -> dict[str, str]:
    parsed = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise SystemExit(f"{what} {pair!r}: expected KEY=VALUE")
        parsed[key] = value
    return parsed


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--agents",
        nargs="+",
        required=True,
        choices=sorted(AGENTS),
        metavar="AGENT",
        help=f"agents to run: {', '.join(AGENTS)}",
    )
    parser.add_argument(
        "--env",
        nargs="+",
        default=["WebShop-Mini-Text-v0"],
        metavar="ID",
        help=f"env ids (registered: {', '.join(webshop_gym.ENV_IDS)})",
    )
    parser.add_argument("--split", nargs="+", default=["test"], choices=["train", "dev", "test", "all"])
    parser.add_argument(
        "--env-arg",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="extra gym.make argument for every env, e.g. catalog=../shared/webshop-1k",
    )
    parser.add_argument(
        "--episodes", type=int, default=None, help="episodes per agent/env/split (default: the whole split)"
    )
    parser.add_argument("--n-envs", type=int, default=4, help="envs in the vector env")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--set", action="append", default=[], metavar="AGENT.OPTION=VALUE", help="agent option"
    )
    parser.add_argument(
        "--label", action="append", default=[], metavar="AGENT=NAME", help="table name of an agent"
    )
    parser.add_argument(
        "--observation-chars",
        type=int,
        default=DEFAULT_OBSERVATION_CHARS,
        help="page text kept per step in the episode files",
    )
    parser.add_argument("--out", type=Path, required=True, help="folder for episodes, tables, plots")
    parser.add_argument("--no-progress", action="store_true")
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> None:
    from benchmarks.harness.report import write_report

    args = parse_args(argv)
    env_kwargs: dict[str, Any] = _key_values(args.env_arg, "--env-arg")
    for key in ("max_steps",):
        if key in env_kwargs:
            env_kwargs[key] = int(env_kwargs[key])
    options: dict[str, dict[str, str]] = {name: {} for name in args.agents}
    for key, value in _key_values(args.set, "--set").items():
        agent, dot, option = key.partition(".")
        if not dot or agent not in options:
            raise SystemExit(
                f"--set {key}={value}: expected AGENT.OPTION=VALUE for one of {', '.join(args.agents)}"
            )
        options[agent][option] = value
    labels = _key_values(args.label, "--label")
    command = "python -m benchmarks.harness.run " + shlex.join(sys.argv[1:] if argv is None else list(argv))
    machine = describe_machine()
    print(f"machine: {machine}")
    args.out.mkdir(parents=True, exist_ok=True)
    runs = []
    for name in args.agents:
        make_agent = make_factory(name, options[name])
        label = labels.get(name, name)
        for env_id in args.env:
            for split in args.split:
                spec = EnvSpec(env_id, split, env_kwargs)
                started = time.perf_counter()
                records = run_agent(
                    label,
                    make_agent,
                    spec,
                    args.episodes,
                    args.n_envs,
                    args.seed,
                    args.observation_chars,
                    progress=not args.no_progress,
                )
                seconds = time.perf_counter() - started
                path = episode_file(args.out, label, spec)
                write_episodes(path, records)
                runs.append(
                    {
                        "agent": label,
                        "env": spec.label,
                        **{key: records[0][key] for key in GOAL_FIELDS},
                        "episodes": len(records),
                        "seconds": round(seconds, 2),
                        "file": str(path.relative_to(args.out)),
                    }
                )
                score = 100 * sum(r["score"] for r in records) / len(records)
                success = 100 * sum(r["success"] for r in records) / len(records)
                print(
                    f"{label:>12} | {spec.label} {split} | {len(records)} episodes | score {score:.1f} "
                    f"| success {success:.1f}% | {seconds:.1f} s"
                )
    entry = {"command": command, "machine": machine, "options": options, "runs": runs}
    record_command(args.out / "runs.json", entry)
    write_report(args.out)
    print(f"wrote {args.out / 'results.md'}")


def record_command(path: Path, entry: dict[str, Any]) -> None:
    """Adds a command and its runs to ``runs.json``; earlier commands keep only the runs not redone."""
    previous = json.loads(path.read_text()) if path.is_file() else []
    redone = {(r["agent"], r["env"], r["split"]) for r in entry["runs"]}
    history = []
    for old in previous:
        runs = [r for r in old["runs"] if (r["agent"], r["env"], r["split"]) not in redone]
        if runs:
            history.append({**old, "runs": runs})
    path.write_text(json.dumps([*history, entry], indent=2) + "\n")


if __name__ == "__main__":
    main()
