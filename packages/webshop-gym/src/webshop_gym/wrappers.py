"""WebShop for fixed-size-action RL libraries, and readers for the text pages.

`DiscreteActions` turns the text env into what stable-baselines3 (MaskablePPO from
sb3-contrib) and similar libraries expect: a ``Discrete(max_actions)`` action that picks a
slot of ``info["available_actions"]``, an action mask (``action_masks()``, the method
MaskablePPO looks for) and a ``Box`` of features computed from the text alone. The
search slot searches the instruction (without its price clause and filler words), since a
discrete action cannot type.

The features are a pure function of the observation and ``info`` (`encode`), so an agent
that only sees what the text env shows computes exactly what the wrapper trained on.

The page readers (`read_results`, `read_item`, `price_bounds`, `price_limit`,
`instruction_query`) parse the ``"text"`` observation mode and are shared with
hand-written agents.

This module imports only gymnasium and numpy.

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

import re
import zlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from webshop_gym.actions import SEARCH_PLACEHOLDER, click_action, clicked_product, search_action

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

SEP = " [SEP] "
_PRICE_CLAUSE = re.compile(r",?\s*and price lower than\s*([\d.,]+)\s*dollars\s*$", re.I)
_PRICE_NUMBER = re.compile(r"\$\s*([\d,]+(?:\.\d+)?)")
_TOKEN = re.compile(r"[a-z0-9]+")

# Words that say nothing about the product: dropped from queries and from overlap scores.
FILLER_WORDS = frozenset(
    """
    a an the i i'm im me my we our you your it its is are am be been being was were this that these
    those there here what which who whom please find need want looking look search searching get
    buy purchase shop shopping would like love can could will should must may might also just some
    any for of in on at to from with and or but by as so if into about than then too very really
    only one ones something thing things item items product products do does did have has had
    hi hello hey help show give go going got make sure needs wants wanted prefer preferably
    """.split()
)

PAGE_KINDS = ("search", "results", "item", "sub_page", "done")
# What each slot can be; the last four are the fixed buttons of item and results pages.
SLOT_KINDS = ("search", "product", "option", "buy now", "back to search", "next >", "< prev", "tab")
_TABS = frozenset({"description", "features", "reviews", "attributes"})


def tokens(text: str) -> list[str]:
    """Lower-case alphanumeric tokens, a trailing plural ``s`` dropped from longer words.

    >>> tokens("Women's Running Shoes, 2-Pack")
    ['women', 's', 'running', 'shoe', '2', 'pack']
    """
    words = _TOKEN.findall(text.lower())
    return [w[:-1] if len(w) > 3 and w.endswith("s") and not w.endswith("ss") else w for w in words]


def price_limit(instruction: str) -> float | None:
    """The price limit an instruction states, if any.

    >>> price_limit("red shoes, and price lower than 40.00 dollars")
    40.0
    >>> price_limit("red shoes") is None
    True
    """
    found = _PRICE_CLAUSE.search(instruction)
    if found is None:
        return None
    try:
        return float(found.group(1).replace(",", ""))
    except ValueError:
        return None


def instruction_query(instruction: str) -> str:
    """Search keywords from an instruction: no price clause, no filler words.

    >>> instruction_query("i need a pair of red running shoes, and price lower than 40.00 dollars")
    'pair red running shoes'
    """
    text = _PRICE_CLAUSE.sub("", instruction).lower()
    words = [w.strip(".,;:!?") for w in text.split()]
    kept = [w for w in words if w and w not in FILLER_WORDS]
    return " ".join(kept) or text.strip() or instruction


def price_bounds(price_text: str) -> tuple[float, float] | None:
    """The lowest and highest price in a price text such as ``"$38.49 to $51.99"``.

    >>> price_bounds("Price: $38.49 to $51.99")
    (38.49, 51.99)
    >>> price_bounds("$1,299.0")
    (1299.0, 1299.0)
    >>> price_bounds("N.A.") is None
    True
    """
    numbers = [float(n.replace(",", "")) for n in _PRICE_NUMBER.findall(price_text)]
    if not numbers:
        return None
    return min(numbers), max(numbers)


@dataclass(frozen=True)
class ResultEntry:
    """One product on a results page.

    Attributes:
        asin: The product id, lower case, as its click action names it.
        title: The product title ("" when the product has none).
        price: The price text (``"$30.49"``, ``"$38.49 to $51.99"``; "" when none).
        rank: Position on the page, from 0.
    """

    asin: str
    title: str
    price: str
    rank: int


@dataclass(frozen=True)
class ItemPage:
    """What an item page shows.

    Attributes:
        title: The product title.
        price: The price text after ``"Price: "``.
        options: Option name -> its values in page order (name "" for unnamed options).
    """

    title: str
    price: str
    options: dict[str, tuple[str, ...]] = field(default_factory=dict)


def _click_targets(available_actions: Sequence[str]) -> set[str]:
    return {a[len("click[") : -1].lower() for a in available_actions if a.startswith("click[")}


def read_results(observation: str, available_actions: Sequence[str]) -> list[ResultEntry]:
    """The products a results page lists (``"text"`` observation mode).

    >>> page = ("Instruction: [SEP] red shoes [SEP] Back to Search [SEP] Page 1 (Total results: 2) "
    ...         "[SEP] Next > [SEP] B000000001 [SEP] Red Shoe [SEP] $10.0 [SEP] B000000002 [SEP] $5.0")
    >>> read_results(page, ["click[b000000001]", "click[b000000002]"])[1]
    ResultEntry(asin='b000000002', title='', price='$5.0', rank=1)
    """
    products = {asin for a in available_actions if (asin := clicked_product(a))}
    parts = observation.split(SEP)
    try:
        start = parts.index("Next >") + 1
    except ValueError:
        return []
    entries: list[ResultEntry] = []
    asin, title, price = None, "", ""
    for part in parts[start:]:
        if part.lower() in products:
            if asin is not None:
                entries.append(ResultEntry(asin, title, price, len(entries)))
            asin, title, price = part.lower(), "", ""
        elif asin is not None:
            if not price and part.startswith("$") and price_bounds(part) is not None:
                price = part
            elif not title:
                title = part
    if asin is not None:
        entries.append(ResultEntry(asin, title, price, len(entries)))
    return entries


def read_item(observation: str, available_actions: Sequence[str]) -> ItemPage | None:
    """Title, price and options of an item page (``"text"`` mode); None on other pages.

    >>> page = ("Instruction: [SEP] x [SEP] Back to Search [SEP] < Prev [SEP] size [SEP] 9 [SEP] 10 "
    ...         "[SEP] Trail Shoe [SEP] Price: $40.0 [SEP] Rating: N.A. [SEP] Description [SEP] Buy Now")
    >>> read_item(page, ["click[< prev]", "click[9]", "click[10]", "click[buy now]"])
    ItemPage(title='Trail Shoe', price='$40.0', options={'size': ('9', '10')})
    """
    if click_action("buy now") not in available_actions:
        return None
    parts = observation.split(SEP)
    try:
        start = parts.index("< Prev") + 1
        price_at = next(i for i in range(start, len(parts)) if parts[i].startswith("Price: "))
    except (ValueError, StopIteration):
        return None
    clickable = _click_targets(available_actions)
    body = parts[start:price_at]
    title = ""
    if body and body[-1].lower() not in clickable:
        title = body.pop()
    options: dict[str, list[str]] = {}
    name = ""
    for part in body:
        if part.lower() in clickable:
            options.setdefault(name, []).append(part)
        else:
            name = part
            options.setdefault(name, [])
    return ItemPage(
        title=title,
        price=parts[price_at][len("Price: ") :],
        options={k: tuple(v) for k, v in options.items() if v},
    )


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


def price_fit(price_text: str, limit: float | None, unknown: float = 0.5) -> float:
    """1 within the limit, 0 over it, the chance of fitting for a price range; ``unknown``
    when there is no limit or no readable price.

    >>> price_fit("$30.0 to $50.0", 40.0), price_fit("$12.99", None, unknown=1.0)
    (0.5, 1.0)
    """
    bounds = price_bounds(price_text)
    if limit is None or bounds is None:
        return unknown
    low, high = bounds
    if high <= limit:
        return 1.0
    if low > limit:
        return 0.0
    return (limit - low) / (high - low)


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
    instruction_words = tokens(_PRICE_CLAUSE.sub("", instruction))
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
