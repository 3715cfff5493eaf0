"""WebShop for fixed-size-action RL libraries: a discrete action, an action mask, text features.

`DiscreteActions` turns the text env into what stable-baselines3 (MaskablePPO from
sb3-contrib) and similar libraries expect: a ``Discrete(max_actions)`` action that picks a
slot of ``info["available_actions"]``, an action mask (``action_masks()``, the method
MaskablePPO looks for) and a ``Box`` of features computed from the text alone. The
search slot searches the instruction (without its price clause and filler words), since a
discrete action cannot type.

The features are a pure function of the observation and ``info`` (`encode`), so an agent
that only sees what the text env shows computes exactly what the wrapper trained on.

The features read pages with `webshop_gym.agents.pages`, the readers hand-written agents
use too (they import from here as well, where they used to live). This module needs no
extra: sb3-contrib is needed only to train on it.

Example:
    >>> import gymnasium as gym
    >>> import webshop_gym
    >>> from webshop_gym.wrappers import DiscreteActions
    >>> env = DiscreteActions(gym.make("WebShop-Mini-Text-v0", split="test"))
    >>> features, info = env.reset(seed=0, options={"goal_index": 0})
    >>> features.shape == env.observation_space.shape, env.action_masks()[:2].tolist()
    (True, [True, False])
    >>> features, reward, terminated, truncated, info = env.step(0)  # the search slot
    >>> info["page"], info["action_error"]
    ('results', '')
"""

from __future__ import annotations

import zlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from webshop_gym.actions import SEARCH_PLACEHOLDER, click_action, clicked_product, search_action
from webshop_gym.agents.pages import (
    FILLER_WORDS,
    ItemPage,
    ResultEntry,
    instruction_query,
    price_bounds,
    price_fit,
    price_limit,
    read_item,
    read_results,
    tokens,
    without_price_clause,
)

__all__ = [
    "DiscreteActions",
    "EncoderConfig",
    "ItemPage",
    "ResultEntry",
    "encode",
    "instruction_query",
    "price_bounds",
    "price_limit",
    "read_item",
    "read_results",
    "tokens",
]

PAGE_KINDS = ("search", "results", "item", "sub_page", "done")
# What each slot can be; the last four are the fixed buttons of item and results pages.
SLOT_KINDS = ("search", "product", "option", "buy now", "back to search", "next >", "< prev", "tab")
_TABS = frozenset({"description", "features", "reviews", "attributes"})


# ---------------------------------------------------------------------------------------
# Features
# ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class EncoderConfig:
    """The shape of the features `encode` computes.

    Attributes:
        max_actions: Action slots; actions past this many are not offered (the largest
            item page of the official 1k set has 56 actions).
        hash_dim: Buckets of each hashed bag of words (instruction, page).
        max_steps: The env's step limit, to scale the steps left to [0, 1].
    """

    max_actions: int = 64
    hash_dim: int = 256
    max_steps: int = 15

    def __post_init__(self) -> None:
        if self.max_actions < 2 or self.hash_dim < 1 or self.max_steps < 1:
            raise ValueError(
                f"EncoderConfig needs max_actions >= 2, hash_dim >= 1 and max_steps >= 1, got {self}"
            )

    @property
    def slot_features(self) -> int:
        return len(SLOT_KINDS) + 7

    @property
    def size(self) -> int:
        return len(PAGE_KINDS) + 1 + 2 * self.hash_dim + self.max_actions * self.slot_features


def _hashed_bag(words: Sequence[str], dim: int) -> np.ndarray:
    # crc32 rather than hash(): Python salts str hashes per process.
    bag = np.zeros(dim, dtype=np.float32)
    for word in words:
        bag[zlib.crc32(word.encode()) % dim] = 1.0
    return bag


def _content(words: Sequence[str]) -> set[str]:
    return {w for w in words if w not in FILLER_WORDS}


def _slot_kind(action: str, products: Mapping[str, ResultEntry]) -> str:
    if action == SEARCH_PLACEHOLDER or action.startswith("search["):
        return "search"
    target = action[len("click[") : -1].lower()
    if target in products or clicked_product(action):
        return "product"
    if target in _TABS:
        return "tab"
    if target in SLOT_KINDS:
        return target
    return "option"


def encode(
    observation: str, info: Mapping[str, Any], config: EncoderConfig | None = None
) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """Features, action mask and the concrete action of each slot.

    Features: the page kind (one-hot), the steps left, hashed bags of words of the
    instruction and of the page, then per slot: its kind (one-hot), whether it is valid,
    how much of the instruction its text covers and how much of its text the instruction
    covers, the price fit of a product slot, the position on the page, whether an option
    value appears word for word in the instruction, and whether it is the best-covered
    value of its option.

    Args:
        observation: The ``"text"`` observation.
        info: The step's info (``available_actions``, ``instruction``, ``page``, ``steps_left``).
        config: Feature shape; defaults to `EncoderConfig()`.

    Returns:
        ``(features, mask, actions)``: features of shape ``(config.size,)`` in [0, 1],
        a boolean mask of shape ``(config.max_actions,)``, and for each valid slot the
        action string to send (the search slot filled with `instruction_query`).
    """
    config = config or EncoderConfig()
    instruction = str(info.get("instruction", ""))
    available = list(info.get("available_actions", ()))[: config.max_actions]
    page = str(info.get("page", ""))
    limit = price_limit(instruction)
    instruction_words = tokens(without_price_clause(instruction))
    wanted = _content(instruction_words)
    instruction_text = " " + " ".join(tokens(instruction)) + " "

    header = np.zeros(len(PAGE_KINDS) + 1, dtype=np.float32)
    if page in PAGE_KINDS:
        header[PAGE_KINDS.index(page)] = 1.0
    header[-1] = min(max(float(info.get("steps_left", 0)) / config.max_steps, 0.0), 1.0)

    products = (
        {entry.asin: entry for entry in read_results(observation, available)} if page == "results" else {}
    )
    item = read_item(observation, available) if page == "item" else None
    option_group = {
        v.lower(): name for name, values in (item.options.items() if item else ()) for v in values
    }

    slots = np.zeros((config.max_actions, config.slot_features), dtype=np.float32)
    actions: list[str] = []
    coverage_of: dict[int, float] = {}
    for i, action in enumerate(available):
        kind = _slot_kind(action, products)
        slots[i, SLOT_KINDS.index(kind)] = 1.0
        slots[i, len(SLOT_KINDS)] = 1.0  # valid
        target = action[len("click[") : -1] if action.startswith("click[") else ""
        text = products[target.lower()].title if kind == "product" and target.lower() in products else target
        words = _content(tokens(text))
        if kind in ("product", "option") and words and wanted:
            shared = len(words & wanted)
            coverage_of[i] = shared / len(wanted)
            slots[i, len(SLOT_KINDS) + 1] = coverage_of[i]
            slots[i, len(SLOT_KINDS) + 2] = shared / len(words)
        if kind == "product" and target.lower() in products:
            entry = products[target.lower()]
            slots[i, len(SLOT_KINDS) + 3] = price_fit(entry.price, limit)
            slots[i, len(SLOT_KINDS) + 4] = entry.rank / 10.0
        if kind == "option":
            slots[i, len(SLOT_KINDS) + 5] = float(f" {' '.join(tokens(target))} " in instruction_text)
        actions.append(search_action(instruction_query(instruction)) if kind == "search" else action)
    # The best-covered value of each option group, ties to the first.
    best: dict[str, tuple[float, int]] = {}
    for i, action in enumerate(available):
        group = option_group.get(action[len("click[") : -1].lower())
        if group is not None:
            score = slots[i, len(SLOT_KINDS) + 5] * 2 + coverage_of.get(i, 0.0)
            if score > 0 and (group not in best or score > best[group][0]):
                best[group] = (score, i)
    for _, i in best.values():
        slots[i, len(SLOT_KINDS) + 6] = 1.0

    features = np.concatenate(
        [
            header,
            _hashed_bag(instruction_words, config.hash_dim),
            _hashed_bag(tokens(observation), config.hash_dim),
            slots.reshape(-1),
        ]
    )
    mask = np.zeros(config.max_actions, dtype=bool)
    mask[: len(available)] = True
    return features, mask, actions


# Unparametrised: gymnasium 1.x types a wrapper's inner env with the wrapper's own spaces.
class DiscreteActions(gym.Wrapper, gym.utils.RecordConstructorArgs):
    """A discrete action over the available actions, an action mask and hashed-text features.

    ## Observation Space
    ``Box(0, 1, (config.size,), float32)``: see `encode`.

    ## Action Space
    ``Discrete(config.max_actions)``: slot ``i`` is ``info["available_actions"][i]``, the
    search slot filled with the instruction's keywords. A slot past the available actions
    is sent to the env as an action naming that slot, so the env reports it as invalid
    (``info["action_error"]``) and the step counts, as any invalid action does.

    ## Info
    The env's info plus ``action_mask`` (also from ``action_masks()``), ``text_observation``
    and ``action`` (the action string the last step sent).

    Args:
        env: A WebShop env in the ``"text"`` observation mode.
        config: Feature shape; ``max_steps`` defaults to the env's step limit.
    """

    def __init__(self, env: gym.Env[str, str], config: EncoderConfig | None = None) -> None:
        mode = getattr(env.unwrapped, "observation_mode", "text")
        if mode != "text":
            raise ValueError(
                f"DiscreteActions reads pages in the 'text' observation mode, got {mode!r}; "
                "make the env with observation_mode='text'"
            )
        gym.utils.RecordConstructorArgs.__init__(self, config=config)
        super().__init__(env)
        max_steps = getattr(env.unwrapped, "max_steps", 15)
        self.config = config or EncoderConfig(max_steps=max_steps)
        self.observation_space = spaces.Box(0.0, 1.0, (self.config.size,), np.float32)
        self.action_space = spaces.Discrete(self.config.max_actions)
        self._mask = np.zeros(self.config.max_actions, dtype=bool)
        self._actions: list[str] = []

    def _encode(self, observation: str, info: dict[str, Any]) -> tuple[np.ndarray, dict[str, Any]]:
        features, self._mask, self._actions = encode(observation, info, self.config)
        return features, {**info, "action_mask": self._mask.copy(), "text_observation": observation}

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[np.ndarray, dict[str, Any]]:
        observation, info = self.env.reset(seed=seed, options=options)
        return self._encode(observation, info)

    def step(self, action: Any) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        slot = int(action)
        text = self._actions[slot] if 0 <= slot < len(self._actions) else click_action(f"<empty slot {slot}>")
        observation, reward, terminated, truncated, info = self.env.step(text)
        features, info = self._encode(observation, info)
        info["action"] = text
        return features, float(reward), terminated, truncated, info

    def action_masks(self) -> np.ndarray:
        """Which slots hold an available action (the method MaskablePPO calls)."""
        return self._mask.copy()
