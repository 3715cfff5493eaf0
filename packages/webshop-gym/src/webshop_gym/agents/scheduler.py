"""Many episodes side by side on one Gymnasium vector env, each with its own goal and seed.

A vector ``reset(seed=..., options=...)`` passes the same ``options`` to every sub-env. A
sub-env wrapped in `SlotEnv` reads its own entry of ``options["options_by_slot"]`` instead,
so one reset of a `gymnasium.vector.SyncVectorEnv` (with Gymnasium's ``reset_mask`` for the
slots to restart) starts each slot on the goal it was given::

    vector.reset(
        seed=[7, 8],
        options={"reset_mask": mask, "options_by_slot": [{"goal_index": 3}, {"goal": goal}]},
    )

`play_episodes` drives a list of episodes through such a vector env: it starts one episode
per slot, asks ``act`` for the actions of all running episodes in one call (one batched
model call for an LLM agent), steps the vector env, and restarts every slot whose episode
ended with the next episode waiting. An episode is defined by its reset arguments
(`EpisodeStart`), so the same list plays the same episodes whatever the number of slots.

Example:
    >>> import gymnasium as gym
    >>> import webshop_gym
    >>> envs = [gym.make("WebShop-Mini-Text-v0", split="test", max_steps=2) for _ in range(2)]
    >>> starts = [EpisodeStart(seed=i, options={"goal_index": i}) for i in range(3)]
    >>> ended = []
    >>> play_episodes(
    ...     envs,
    ...     starts,
    ...     act=lambda turns: ["click[back to search]" for _ in turns],
    ...     on_step=lambda step: ended.append((step.episode, step.info["goal_index"])) if step.done else None,
    ... )
    >>> sorted(ended)
    [(0, 0), (1, 1), (2, 2)]
"""

from __future__ import annotations

import functools
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, SupportsFloat

import gymnasium as gym
import numpy as np
from gymnasium.vector import AutoresetMode, SyncVectorEnv


@dataclass(frozen=True)
class EpisodeStart:
    """How one episode begins: the arguments of its ``reset``."""

    seed: int | None = None
    options: Mapping[str, Any] | None = None
    """The env's reset options, e.g. ``{"goal_index": 3}`` or ``{"goal": goal}``."""


@dataclass(frozen=True)
class Turn:
    """A running episode waiting for its next action."""

    episode: int
    """Its index in the list of `EpisodeStart` given to `play_episodes`."""
    slot: int
    """The sub-env playing it."""
    observation: str
    info: dict[str, Any]


@dataclass(frozen=True)
class Step:
    """What one action of an episode did."""

    episode: int
    slot: int
    action: str
    observation: str
    reward: float
    terminated: bool
    truncated: bool
    info: dict[str, Any]

    @property
    def done(self) -> bool:
        """The episode ended with this step."""
        return self.terminated or self.truncated


class SlotEnv(gym.Wrapper):
    """Sub-env ``slot`` of a vector env: resets with its own entry of ``options["options_by_slot"]``.

    Its info goes to `last_info` (read it with the vector env's ``get_attr("last_info")``)
    and the vector env gets an empty one. A vector env merges infos into one array per
    key, typed after the first slot that has the key, and WebShop's info has keys that are
    None in some episodes only (``goal_index`` of a goal given by content; ``r_option`` and
    ``r_price`` of goals without options or price limit): next to a number, a None would
    come back as nan or False, or stop the step with a TypeError.
    """

    def __init__(self, env: gym.Env, slot: int) -> None:
        super().__init__(env)
        self.slot = slot
        self.last_info: dict[str, Any] = {}

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[Any, dict[str, Any]]:
        by_slot = (options or {}).get("options_by_slot")
        own = by_slot[self.slot] if by_slot is not None else options
        observation, self.last_info = self.env.reset(seed=seed, options=None if own is None else dict(own))
        return observation, {}

    def step(self, action: Any) -> tuple[Any, SupportsFloat, bool, bool, dict[str, Any]]:
        observation, reward, terminated, truncated, self.last_info = self.env.step(action)
        return observation, reward, terminated, truncated, {}


def slot_vector_env(envs: Sequence[gym.Env]) -> SyncVectorEnv:
    """A `SyncVectorEnv` over ``envs`` (kept as they are, each in a `SlotEnv`), without autoreset."""
    return SyncVectorEnv(
        [functools.partial(SlotEnv, env, slot) for slot, env in enumerate(envs)],
        autoreset_mode=AutoresetMode.DISABLED,
    )


def play_episodes(
    envs: Sequence[gym.Env],
    episodes: Sequence[EpisodeStart],
    act: Callable[[list[Turn]], Sequence[str]],
    *,
    on_start: Callable[[Turn], None] | None = None,
    on_step: Callable[[Step], None] | None = None,
) -> None:
    """Plays every episode of ``episodes`` once, ``len(envs)`` at a time.

    Episode ``i`` is reset with ``episodes[i]`` in whichever slot comes free first; the
    slots are restarted in slot order, so the episode-to-slot schedule is fixed too. The
    envs are not closed (they belong to the caller and can play again).

    Args:
        envs: The envs to play in, one per slot (only the first ``len(episodes)`` are used).
        episodes: The reset arguments of each episode.
        act: The actions of the running episodes, given in slot order, in that order.
        on_start: Called with the first observation of each episode.
        on_step: Called after every step of an episode (``step.done`` at its last).
    """
    slots = min(len(envs), len(episodes))
    if slots == 0:
        return
    vector = slot_vector_env(envs[:slots])
    waiting = deque(range(len(episodes)))
    playing: list[int | None] = [None] * slots  # slot -> its episode; None: nothing left to play
    observations: list[str] = [""] * slots
    infos: list[dict[str, Any]] = [{} for _ in range(slots)]

    def start(restart: np.ndarray) -> None:
        # A slot with nothing left to play replays episode 0 with stand-in actions, unreported:
        # the vector env steps every slot.
        seeds: list[int | None] = [None] * slots
        options: list[Mapping[str, Any] | None] = [None] * slots
        for slot in map(int, np.flatnonzero(restart)):
            episode = waiting.popleft() if waiting else None
            playing[slot] = episode
            seeds[slot], options[slot] = episodes[episode or 0].seed, episodes[episode or 0].options
        batch, _ = vector.reset(seed=seeds, options={"reset_mask": restart, "options_by_slot": options})
        last_infos = vector.get_attr("last_info")
        for slot in map(int, np.flatnonzero(restart)):
            observations[slot], infos[slot] = batch[slot], last_infos[slot]
            episode = playing[slot]
            if episode is not None and on_start is not None:
                on_start(Turn(episode, slot, observations[slot], infos[slot]))

    start(np.ones(slots, dtype=bool))
    while any(episode is not None for episode in playing):
        turns = [
            Turn(episode, slot, observations[slot], infos[slot])
            for slot, episode in enumerate(playing)
            if episode is not None
        ]
        actions = [str(info["available_actions"][0]) for info in infos]  # stand-ins for idle slots
        for turn, action in zip(turns, act(turns), strict=True):
            actions[turn.slot] = action
        batch, rewards, terminations, truncations, _ = vector.step(tuple(actions))
        last_infos = vector.get_attr("last_info")
        for slot, episode in enumerate(playing):
            observations[slot], infos[slot] = batch[slot], last_infos[slot]
            if episode is not None and on_step is not None:
                on_step(
                    Step(
                        episode,
                        slot,
                        actions[slot],
                        observations[slot],
                        float(rewards[slot]),
                        bool(terminations[slot]),
                        bool(truncations[slot]),
                        infos[slot],
                    )
                )
        done = np.logical_or(terminations, truncations)
        for slot in map(int, np.flatnonzero(done)):
            playing[slot] = None
        if done.any() and (waiting or any(episode is not None for episode in playing)):
            start(done)
