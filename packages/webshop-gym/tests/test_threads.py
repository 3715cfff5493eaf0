"""32 envs over one catalogue, made and stepped from 32 threads at once, play as they do one by one.

Trainers (SkyRL, rLLM, OpenRLHF) step envs from thread pools; the envs share the catalogue
(in memory or a memory-mapped store), the search index and its answer cache, the product
and goal caches of a store, and the reward's and noun tagger's caches. Every env plays two
episodes of seeded random valid actions and one of the expert policy; the threaded
transcripts must equal a sequential run's, observation for observation. The threads run
with a tiny switch interval, so they interleave far more often than they would in a trainer.
"""

from __future__ import annotations

import random
import sys
import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import gymnasium as gym
import pytest

import webshop_gym  # noqa: F401  (registers the ids)
from webshop_gym.actions import SEARCH_PLACEHOLDER, search_action
from webshop_gym.agents.scripted import ExpertPolicy
from webshop_gym.data.prepare import find_inputs, prepare_catalog

THREADS = 32
MODES = ("text", "text_rich", "html")
REWARDS = ("original", "shaped", "binary")

Transcript = list[tuple[Any, ...]]


@pytest.fixture(scope="module")
def worlds(
    webshop_1k: Path, webshop_1k_human: Path, tmp_path_factory: pytest.TempPathFactory
) -> dict[str, dict[str, Any]]:
    """gym.make arguments of each world. The 1k ones live in new folders, so their catalogue,
    store and index are first loaded by the 32 threads that make the envs."""
    files = tmp_path_factory.mktemp("json") / "webshop-1k"  # named as the real set: its goal numbers
    files.mkdir()
    for name in ("items_shuffle_1000.json", "items_ins_v2_1000.json"):
        (files / name).symlink_to(webshop_1k / name)
    (files / "items_human_ins_1000.json").symlink_to(webshop_1k_human)
    store = tmp_path_factory.mktemp("store") / "webshop-1k"
    prepare_catalog(find_inputs(webshop_1k), store, progress=False)
    return {
        "mini": {"catalog": "mini", "goals": "human"},
        "mini-bm25s": {"catalog": "mini", "goals": "synthetic", "search_engine": "bm25s"},
        "1k-json": {"catalog": str(files), "goals": "synthetic"},
        "1k-store": {"catalog": str(store), "goals": "synthetic"},
    }


def make_env(arguments: dict[str, Any], slot: int) -> gym.Env:
    return gym.make(
        "WebShop-Text-v0",
        split="test",
        observation_mode=MODES[slot % len(MODES)],
        reward=REWARDS[slot // len(MODES) % len(REWARDS)],
        **arguments,
    )


def random_episode(env: gym.Env, seed: int) -> Transcript:
    """Random valid actions from a generator seeded with ``seed``; searches for a few instruction words."""
    rng = random.Random(seed)
    observation, info = env.reset(seed=seed)
    transcript: Transcript = [(observation, info)]
    words = info["instruction"].split()
    done = False
    while not done:
        action = rng.choice(info["available_actions"])
        if action == SEARCH_PLACEHOLDER:
            action = search_action(" ".join(rng.sample(words, rng.randint(1, min(4, len(words))))))
        observation, reward, terminated, truncated, info = env.step(action)
        transcript.append((action, observation, reward, terminated, truncated, info))
        done = terminated or truncated
    return transcript


def expert_episode(env: gym.Env, seed: int) -> Transcript:
    policy = ExpertPolicy(env)
    observation, info = env.reset(seed=seed)
    transcript: Transcript = [(observation, info)]
    done = False
    while not done:
        action = policy.act(observation, info)
        observation, reward, terminated, truncated, info = env.step(action)
        transcript.append((action, observation, reward, terminated, truncated, info))
        done = terminated or truncated
    return transcript


def play(env: gym.Env, slot: int) -> Transcript:
    return [*random_episode(env, slot), *random_episode(env, 100 + slot), *expert_episode(env, 200 + slot)]


@contextmanager
def frequent_switches() -> Iterator[None]:
    """Threads hand over the interpreter every 10 µs instead of every 5 ms."""
    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-5)
    try:
        yield
    finally:
        sys.setswitchinterval(interval)


@pytest.mark.parametrize("world", ["mini", "mini-bm25s", "1k-json", "1k-store"])
def test_threaded_envs_play_as_sequential_ones(worlds: dict[str, dict[str, Any]], world: str) -> None:
    arguments = worlds[world]
    start = threading.Barrier(THREADS)

    def make_and_play(slot: int) -> tuple[gym.Env, Transcript]:
        start.wait()  # all threads make their env at once, then step at once
        env = make_env(arguments, slot)
        start.wait()
        return env, play(env, slot)

    with frequent_switches(), ThreadPoolExecutor(THREADS) as pool:
        envs, threaded = zip(*pool.map(make_and_play, range(THREADS)), strict=True)

    # Made at once, the envs still share one catalogue, one set of goals and one search engine.
    for shared in ("catalog", "all_goals", "engine"):
        assert len({id(getattr(env.unwrapped, shared)) for env in envs}) == 1, f"{shared} is not shared"

    sequential = [play(make_env(arguments, slot), slot) for slot in range(THREADS)]
    for slot in range(THREADS):
        assert threaded[slot] == sequential[slot], f"env {slot} played otherwise in a thread"
    # The runs did what they are meant to: searches, purchases, the expert's successes.
    steps = [step for transcript in sequential for step in transcript if len(step) == 6]
    assert sum(action.startswith("search[") for action, *_ in steps) >= THREADS * 3
    assert sum(step[3] for step in steps) >= THREADS  # terminated: bought
    successes = sum(bool(step[5].get("success")) for step in steps)
    assert successes >= THREADS // 2, f"the expert succeeded {successes} times in {THREADS} episodes"
