"""The agent benchmark runner: agents x env ids x splits x N episodes, over vector envs.

    python -m benchmarks.run --agents random rule heuristic --env WebShop-Mini-Text-v0 \\
        --split test --out benchmarks/results/mini-test

    python -m benchmarks.run --agents heuristic --env WebShop-Text-v0 --split test \\
        --env-arg catalog=../shared/webshop-1k --env-arg goals=synthetic --out /tmp/1k

Each (agent, env, split) plays ``--episodes`` episodes (default: every goal of the split,
goal i with seed ``--seed + i``) on a `gymnasium.vector.SyncVectorEnv` of ``--n-envs``
envs, one agent per env slot. Written to ``--out``:

* ``episodes/<agent>__<env>__<split>.jsonl.gz``: one JSON object per episode: the goal
  (for analysis; agents never see it), the trajectory (page text without the
  instruction header, cut to ``--observation-chars``, action, reward, page reached, action error), the reward
  breakdown and the purchase;
* ``results.md`` (the table, the command, the machine), ``summary.json``,
  ``failures.md`` (failed episodes grouped by kind, with examples) and ``plots/``:
  see `benchmarks.report`.

Agent options: ``--set AGENT.OPTION=VALUE`` (e.g. ``--set llm.model=/path/to/model``,
``--set sb3.policy=benchmarks/results/sb3/policy.zip``); ``--label AGENT=NAME`` renames an
agent in the tables.
"""

from __future__ import annotations

import argparse
import functools
import gzip
import json
import shlex
import sys
import time
from collections import deque
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium.vector import AutoresetMode, SyncVectorEnv
from tqdm import tqdm

import webshop_gym
from benchmarks.agents import AGENTS, AgentFactory, make_factory
from benchmarks.machine import describe_machine

DEFAULT_OBSERVATION_CHARS = 200


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


class _Scheduled(gym.Wrapper):
    """Lets one vector reset give every slot its own goal: ``options={"goal_index_by_slot": [...]}``."""

    def __init__(self, env: gym.Env, slot: int) -> None:
        super().__init__(env)
        self.slot = slot

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[Any, dict]:
        goal_index = (options or {}).get("goal_index_by_slot", [None] * (self.slot + 1))[self.slot]
        return self.env.reset(seed=seed, options=None if goal_index is None else {"goal_index": goal_index})


def _scheduled_env(spec: EnvSpec, slot: int) -> gym.Env:
    return _Scheduled(spec.make(), slot)


def _python(value: Any) -> Any:
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, Mapping):
        return {str(k): _python(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_python(v) for v in value]
    return value


def slot_info(infos: Mapping[str, Any], slot: int) -> dict[str, Any]:
    """The info of one sub-env from a vector env's combined info (nested dicts included)."""
    info = {}
    for key, value in infos.items():
        if key.startswith("_") or not infos.get(f"_{key}", np.ones(slot + 1, bool))[slot]:
            continue
        info[key] = slot_info(value, slot) if isinstance(value, Mapping) else _python(value[slot])
    return info


def page_text(observation: str, instruction: str, limit: int) -> str:
    """The page without the instruction header every page repeats, cut to ``limit`` characters."""
    header = f"Instruction: [SEP] {instruction} [SEP] "
    at = observation.find(header)
    if at != -1:
        observation = observation[:at] + observation[at + len(header) :]
    return observation[:limit]


def _goal_record(goal: Any) -> dict[str, Any]:
    return {
        "asin": goal.asin,
        "category": goal.category,
        "attributes": list(goal.attributes),
        "options": [list(o) if isinstance(o, tuple) else o for o in goal.goal_options],
        "price_upper": goal.price_upper,
    }


def _act(
    agents: Sequence[Any], slots: Sequence[int], observations: Sequence[str], infos: Sequence[dict]
) -> list[str]:
    chosen = [agents[s] for s in slots]
    batch = getattr(type(chosen[0]), "act_batch", None)
    if batch is not None and len(chosen) > 1:
        return list(batch(chosen, [observations[s] for s in slots], [infos[s] for s in slots]))
    return [agents[s].act(observations[s], infos[s]) for s in slots]


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
    probe.close()
    episodes = n_goals if episodes is None else episodes
    if episodes < 1:
        raise ValueError(f"episodes must be at least 1, got {episodes}")
    n_envs = max(1, min(n_envs, episodes))
    envs = SyncVectorEnv(
        [functools.partial(_scheduled_env, spec, slot) for slot in range(n_envs)],
        autoreset_mode=AutoresetMode.DISABLED,
    )
    agents = [make_agent() for _ in range(n_envs)]
    pending = deque(range(episodes))
    episode_of: list[int | None] = [None] * n_envs
    records: dict[int, dict[str, Any]] = {}
    observations: list[str] = [""] * n_envs
    infos: list[dict[str, Any]] = [{} for _ in range(n_envs)]

    def start(mask: np.ndarray) -> None:
        goal_indices: list[int | None] = [None] * n_envs
        seeds: list[int | None] = [None] * n_envs
        for slot in map(int, np.flatnonzero(mask)):
            episode = pending.popleft() if pending else None
            episode_of[slot] = episode
            # A slot with nothing left to play runs goal 0 with stand-in actions; ignored.
            goal_indices[slot] = 0 if episode is None else episode % n_goals
            seeds[slot] = seed if episode is None else seed + episode
        batch_observations, batch_infos = envs.reset(
            seed=seeds, options={"reset_mask": mask, "goal_index_by_slot": goal_indices}
        )
        goals = envs.get_attr("goal")
        for slot in map(int, np.flatnonzero(mask)):
            observations[slot] = batch_observations[slot]
            infos[slot] = slot_info(batch_infos, slot)
            episode = episode_of[slot]
            if episode is None:
                continue
            agents[slot].reset(seed=seed + episode)
            records[episode] = {
                "agent": agent_name,
                "env": spec.label,
                "env_id": spec.env_id,
                "env_kwargs": dict(spec.kwargs),
                "split": spec.split,
                "episode": episode,
                "seed": seed + episode,
                "goal_index": infos[slot]["goal_index"],
                "instruction": infos[slot]["instruction"],
                "goal": _goal_record(goals[slot]),
                "trajectory": [
                    {
                        "observation": page_text(
                            observations[slot], infos[slot]["instruction"], observation_chars
                        ),
                        "page": infos[slot]["page"],
                    }
                ],
                "_started": time.perf_counter(),
            }

    start(np.ones(n_envs, dtype=bool))
    bar = tqdm(
        total=episodes, desc=f"{agent_name} on {spec.label} {spec.split}", disable=not progress, leave=False
    )
    while any(e is not None for e in episode_of):
        active = [s for s in range(n_envs) if episode_of[s] is not None]
        actions = [str(infos[s]["available_actions"][0]) for s in range(n_envs)]
        for slot, action in zip(active, _act(agents, active, observations, infos), strict=True):
            actions[slot] = action
        batch_observations, rewards, terminations, truncations, batch_infos = envs.step(tuple(actions))
        done = np.logical_or(terminations, truncations)
        for slot in range(n_envs):
            observations[slot] = batch_observations[slot]
            infos[slot] = slot_info(batch_infos, slot)
            episode = episode_of[slot]
            if episode is None:
                continue
            record = records[episode]
            step = {
                "action": actions[slot],
                "reward": float(rewards[slot]),
                "page": infos[slot]["page"],
                "action_error": infos[slot]["action_error"],
                "observation": page_text(observations[slot], record["instruction"], observation_chars),
            }
            output = getattr(agents[slot], "last_output", None)
            if output is not None:
                step["model_output"] = output
            record["trajectory"].append(step)
            if done[slot]:
                _finish(record, infos[slot], bool(terminations[slot]))
                bar.update(1)
        if done.any():
            start(done)
    bar.close()
    envs.close()
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
    from benchmarks.report import write_report

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
    command = "python -m benchmarks.run " + shlex.join(sys.argv[1:] if argv is None else list(argv))
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
                        "split": split,
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
