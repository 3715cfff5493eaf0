"""The agent benchmark runner: agents x env ids x splits x N episodes, over vector envs.

    python -m benchmarks.harness.run --agents random rule heuristic --env WebShop-Mini-Text-v0 \\
        --split test --out benchmarks/results/mini-test

    python -m benchmarks.harness.run --agents heuristic --env WebShop-Text-v0 --split test \\
        --env-arg catalog=../shared/webshop-1k --env-arg goals=synthetic --out /tmp/1k

Each (agent, env, split) plays ``--episodes`` episodes (default: every goal of the split,
goal i with seed ``--seed + i``) on a `gymnasium.vector.SyncVectorEnv` of ``--n-envs``
envs, one agent per env slot: `webshop_gym.agents.episodes.play_agent_episodes`, the
episode loop of every agent (its slots scheduled as apo-agent's rollouts are). The envs
are made from Gymnasium's `EnvSpec` (`env_spec`: a registered id, the split and the
``--env-arg`` arguments). Written to ``--out``:

* ``episodes/<agent>__<env>__<split>.jsonl.xz``: the episodes as `webshop_gym.trajectories`
  records them, xz-compressed (``webshop-gym replay`` plays them back): the env's arguments, seed and
  goal (for analysis; agents never see it), every page, action, reward and ``info``,
  an LLM's raw answers, and per episode line a ``run`` naming agent, env, catalogue,
  goal source, split and split manifest;
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
import dataclasses
import json
import shlex
import sys
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import gymnasium as gym
from gymnasium.envs.registration import EnvSpec as GymEnvSpec
from tqdm import tqdm

import webshop_gym
from benchmarks.harness.agents import AGENTS, AgentFactory, make_factory
from benchmarks.harness.report import DEFAULT_OBSERVATION_CHARS, episode_record, page_text, write_report
from benchmarks.machine import describe_machine
from webshop_gym.agents.episodes import EpisodeStart, play_agent_episodes
from webshop_gym.trajectories import Episode, write_trajectories

__all__ = [
    "DEFAULT_OBSERVATION_CHARS",
    "env_spec",
    "episode_file",
    "main",
    "page_text",
    "play_agent",
    "run_agent",
    "spec_label",
    "spec_split",
]

# What every run and episode record says about the goals it played.
GOAL_FIELDS = ("catalogue", "goal_source", "split", "split_manifest")


def env_spec(env_id: str, split: str = "test", kwargs: Mapping[str, Any] | None = None) -> GymEnvSpec:
    """Gymnasium's spec of a registered id with a split and extra ``gym.make`` arguments.

    >>> spec = env_spec("WebShop-Mini-Text-v0", "dev", {"max_steps": 5})
    >>> spec.id, spec.kwargs["split"], spec.kwargs["max_steps"], spec_label(spec)
    ('WebShop-Mini-Text-v0', 'dev', 5, 'WebShop-Mini-Text-v0 (max_steps=5)')
    """
    registered = gym.spec(env_id)
    return dataclasses.replace(registered, kwargs={**registered.kwargs, "split": split, **(kwargs or {})})


def spec_split(spec: GymEnvSpec) -> str:
    """The split a spec's envs play (``"test"`` unless it names one)."""
    return str(spec.kwargs.get("split", "test"))


def spec_arguments(spec: GymEnvSpec) -> dict[str, Any]:
    """The ``gym.make`` arguments a spec adds to its registered id (the split aside)."""
    registered = gym.spec(spec.id).kwargs
    return {
        k: v for k, v in spec.kwargs.items() if k != "split" and (k not in registered or registered[k] != v)
    }


def spec_label(spec: GymEnvSpec) -> str:
    """A short name: the id, plus the catalogue folder's name and the goal source if given."""
    kwargs = spec_arguments(spec)
    extra = []
    if "catalog" in kwargs:
        extra.append(Path(str(kwargs["catalog"])).name)
    if "goals" in kwargs:
        extra.append(f"{kwargs['goals']} goals")
    extra += [f"{k}={v}" for k, v in sorted(kwargs.items()) if k not in ("catalog", "goals")]
    return f"{spec.id} ({', '.join(extra)})" if extra else spec.id


def play_agent(
    agent_name: str,
    make_agent: AgentFactory,
    spec: GymEnvSpec,
    episodes: int | None = None,
    n_envs: int = 4,
    seed: int = 0,
    progress: bool = True,
) -> list[Episode]:
    """Plays ``episodes`` episodes of one agent on one env configuration, recorded.

    Episode ``i`` plays goal ``i % len(split)`` of the split with seed ``seed + i``, and
    the agent is reset with that seed, so results do not depend on ``n_envs``.

    Returns:
        The episodes as `webshop_gym.trajectories` records them; each episode line's
        ``run`` says who played which goals (agent, env label, id and arguments, catalogue,
        goal source, split, split manifest, episode number).
    """
    probe = gym.make(spec)
    n_goals = len(probe.unwrapped.goal_indices)  # type: ignore[attr-defined]
    manifest = probe.unwrapped.split_manifest  # type: ignore[attr-defined]
    probe.close()
    label = spec_label(spec)
    run = {
        "agent": agent_name,
        "env": label,
        "env_id": spec.id,
        "env_kwargs": spec_arguments(spec),
        # What names the goals played, in every record: results compare only where these agree.
        "catalogue": manifest.catalogue,
        "goal_source": manifest.goal_source,
        "split": spec_split(spec),
        "split_manifest": manifest.sha256,
    }
    episodes = n_goals if episodes is None else episodes
    if episodes < 1:
        raise ValueError(f"episodes must be at least 1, got {episodes}")
    envs = [gym.make(spec) for _ in range(max(1, min(n_envs, episodes)))]
    agents = [make_agent() for _ in envs]
    bar = tqdm(
        total=episodes, desc=f"{agent_name} on {label} {run['split']}", disable=not progress, leave=False
    )
    starts = [EpisodeStart(seed + episode, {"goal_index": episode % n_goals}) for episode in range(episodes)]
    played = play_agent_episodes(
        envs,
        agents,
        starts,
        metadata=lambda episode: {"run": {**run, "episode": episode}},
        on_episode=lambda episode, record: bar.update(1),
    )
    bar.close()
    for env in envs:
        env.close()
    return played


def run_agent(
    agent_name: str,
    make_agent: AgentFactory,
    spec: GymEnvSpec,
    episodes: int | None = None,
    n_envs: int = 4,
    seed: int = 0,
    observation_chars: int = DEFAULT_OBSERVATION_CHARS,
    progress: bool = True,
) -> list[dict[str, Any]]:
    """`play_agent`, each episode as the flat record the report reads (`episode_record`)."""
    played = play_agent(agent_name, make_agent, spec, episodes, n_envs, seed, progress)
    return [episode_record(episode, observation_chars) for episode in played]


def episode_file(out: Path, agent: str, spec: GymEnvSpec) -> Path:
    def slug(text: str) -> str:
        return "".join(c if c.isalnum() or c in "-." else "_" for c in text).strip("_")

    return out / "episodes" / f"{slug(agent)}__{slug(spec_label(spec))}__{spec_split(spec)}.jsonl.xz"


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
    parser.add_argument("--out", type=Path, required=True, help="folder for episodes, tables, plots")
    parser.add_argument("--no-progress", action="store_true")
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> None:
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
                spec = env_spec(env_id, split, env_kwargs)
                started = time.perf_counter()
                played = play_agent(
                    label,
                    make_agent,
                    spec,
                    args.episodes,
                    args.n_envs,
                    args.seed,
                    progress=not args.no_progress,
                )
                seconds = time.perf_counter() - started
                path = write_trajectories(episode_file(args.out, label, spec), played)
                records = [episode_record(episode) for episode in played]
                runs.append(
                    {
                        "agent": label,
                        "env": spec_label(spec),
                        **{key: records[0][key] for key in GOAL_FIELDS},
                        "episodes": len(records),
                        "seconds": round(seconds, 2),
                        "file": str(path.relative_to(args.out)),
                    }
                )
                score = 100 * sum(r["score"] for r in records) / len(records)
                success = 100 * sum(r["success"] for r in records) / len(records)
                print(
                    f"{label:>12} | {spec_label(spec)} {split} | {len(records)} episodes | score {score:.1f} "
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
