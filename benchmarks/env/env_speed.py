"""Env creation time and step latency, on the bundled catalogue and the real 1k set.

    python -m benchmarks.env.env_speed [--data DIR] [--episodes 200]

Cold creation runs in a fresh Python process (imports, catalogue load, goals, index);
warm creation is a second `gym.make` in a process that already made one. Step latency is
the median wall time of `env.step` over expert episodes, search and other actions apart;
searches are timed with the engine's answer cache cleared, so each one really ranks.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path

import gymnasium as gym

import webshop_gym  # noqa: F401
from benchmarks.machine import describe_machine
from benchmarks.markdown import row_line, table
from webshop_gym.agents.scripted import ExpertPolicy
from webshop_gym.data.locations import find_webshop_1k

REPO = Path(__file__).resolve().parents[2]


def cold_creation_seconds(kwargs: dict) -> float:
    code = (
        "import time; t = time.perf_counter()\n"
        "import gymnasium as gym, webshop_gym\n"
        f"env = gym.make('WebShop-Mini-Text-v0', **{kwargs!r}); env.reset(seed=0)\n"
        "print(time.perf_counter() - t)"
    )
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True)
    return float(out.stdout.strip().splitlines()[-1])


def step_latencies(env: gym.Env, episodes: int) -> tuple[list[float], list[float]]:
    engine = env.unwrapped.engine
    expert = ExpertPolicy(env)
    search, other = [], []
    n_goals = len(env.unwrapped.goal_indices)
    for episode in range(episodes):
        observation, info = env.reset(seed=episode, options={"goal_index": episode % n_goals})
        done = False
        while not done:
            action = expert.act(observation, info)
            if action.startswith("search["):
                engine.clear_cache()
            start = time.perf_counter()
            observation, _, terminated, truncated, info = env.step(action)
            elapsed = time.perf_counter() - start
            (search if action.startswith("search[") else other).append(elapsed)
            done = terminated or truncated
    return search, other


COLUMNS = ["catalogue", "products", "create (cold)", "create (warm)", "search step median (n)"]
COLUMNS += ["other step median (n)"]


def measure(kwargs: dict, episodes: int) -> dict:
    """Creation seconds (cold, warm) and the seconds of every step, searches and other actions apart.

    ``kwargs`` go to `gym.make` of ``WebShop-Mini-Text-v0``; ``episodes`` expert episodes are timed.
    """
    cold = cold_creation_seconds(kwargs)
    gym.make("WebShop-Mini-Text-v0", **kwargs)  # make sure this process has loaded it once
    start = time.perf_counter()
    env = gym.make("WebShop-Mini-Text-v0", **kwargs)
    env.reset(seed=0)
    warm = time.perf_counter() - start
    search, other = step_latencies(env, episodes)
    return {
        "products": len(env.unwrapped.catalog),
        "cold_s": cold,
        "warm_s": warm,
        "search_step_s": search,
        "other_step_s": other,
    }


def table_row(name: str, figures: dict) -> list[str]:
    """One catalogue's row of the table (`COLUMNS`) from `measure`'s figures."""
    search, other = figures["search_step_s"], figures["other_step_s"]
    return [
        name,
        str(figures["products"]),
        f"{figures['cold_s']:.2f} s",
        f"{1000 * figures['warm_s']:.1f} ms",
        f"{1000 * statistics.median(search):.2f} ms ({len(search)})",
        f"{1000 * statistics.median(other):.3f} ms ({len(other)})",
    ]


def markdown(measured: dict[str, dict]) -> str:
    """The table of `measure`'s figures by catalogue name.

    >>> figures = {"products": 3, "cold_s": 1.5, "warm_s": 0.002, "search_step_s": [0.004],
    ...            "other_step_s": [0.0001, 0.0003]}
    >>> print(markdown({"mini": figures}))
    | catalogue | products | create (cold) | create (warm) | search step median (n) | other step median (n) |
    |---|---|---|---|---|---|
    | mini | 3 | 1.50 s | 2.0 ms | 4.00 ms (1) | 0.200 ms (2) |
    """
    return "\n".join(table(COLUMNS, [table_row(name, figures) for name, figures in measured.items()]))


def main(argv: list[str] | None = None) -> dict[str, dict]:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--data", type=Path, default=None, help="folder with the official 1k files (default: find_webshop_1k)"
    )
    parser.add_argument("--episodes", type=int, default=200)
    args = parser.parse_args(argv)
    print(f"machine: {describe_machine()}")
    print(markdown({}))  # the header now, each row as soon as it is measured
    measured = {}

    def note(name: str, kwargs: dict) -> None:
        measured[name] = measure(kwargs, args.episodes)
        print(row_line(table_row(name, measured[name])))

    note("mini (human goals)", {"split": "all"})
    try:
        data = args.data or find_webshop_1k(REPO)
    except FileNotFoundError as missing:
        print(f"(the 1k set is not timed: {missing})")
        return measured
    note("webshop-1k (synthetic goals)", {"catalog": str(data), "goals": "synthetic", "split": "all"})
    return measured


if __name__ == "__main__":
    main()
