"""`WebShopEnv`: the shop, its goals and its reward behind the Gymnasium step API.

The env puts the concerns around it together: the world it plays in (the catalogue, goals
and prices every env over it shares: `webshop_gym.data.world`), the site
(`webshop_gym.shop`), the observation (`webshop_gym.render`), the reward
(`webshop_gym.reward`) and its spaces (`webshop_gym.spaces`). It pickles as its arguments
and its episode, never the shared catalogue; the server's JSON form of an episode is
`webshop_gym.web.snapshots`.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Mapping
from typing import Any, Literal

import gymnasium as gym
import numpy as np

from webshop_gym.data.goals import goal_positions, goal_split
from webshop_gym.data.model import Goal
from webshop_gym.data.splits import SplitManifest, split_manifest
from webshop_gym.data.world import shared_world
from webshop_gym.render.html import render_html
from webshop_gym.render.text import render_text, render_text_rich
from webshop_gym.reward.original import RewardBreakdown, binary_reward, original_reward
from webshop_gym.reward.shaping import ProgressPotential
from webshop_gym.search.engines import ENGINE_NAMES, build_engine
from webshop_gym.shop import Page, PageState, Shop
from webshop_gym.spaces import (  # noqa: F401 (the limits and spaces: importable here as before)
    MAX_ACTION_CHARS,
    MAX_OBSERVATION_CHARS,
    SharedStrings,
    UnicodeText,
    action_space,
    observation_space,
)

ObservationMode = Literal["text", "text_rich", "html"]
GoalSource = Literal["human", "synthetic"]
Split = Literal["train", "dev", "test", "all"]
RewardVariant = Literal["original", "binary", "shaped"]

OBSERVATION_MODES = ("text", "text_rich", "html")
GOAL_SOURCES = ("human", "synthetic")
SPLITS = ("train", "dev", "test", "all")
REWARD_VARIANTS = ("original", "binary", "shaped")

# What `info` holds, documented once: the env reference page is generated from these.
INFO_KEYS = {
    "available_actions": "the full action strings valid now (`search[<query>]` stands for any keywords)",
    "instruction": "the goal's instruction text",
    "goal_index": "the goal's index within the split (what `reset(options={'goal_index': i})` takes); "
    "None for a goal given with `reset(options={'goal': goal})`",
    "page": "`search`, `results`, `item`, `sub_page` or `done`",
    "action_error": 'why the action was invalid; "" when it was valid',
    "steps_left": "actions left before the episode is truncated",
}
PURCHASE_INFO_KEYS = {
    "reward_breakdown": "r_type, r_att, r_option, r_price, the match counts and which noun extractor ran",
    "score": "the original reward R of the purchase",
    "success": "R == 1",
    "purchased_asin": "the asin bought",
    "purchased_options": "the options chosen, name -> value",
}


class EmptySplitError(ValueError):
    """The chosen split of the chosen goals has no goal (e.g. the 1k set's human test split)."""

    def __init__(self, catalog_name: str, goals: str, split: str, goal_count: int) -> None:
        super().__init__(
            f"the {split!r} split of the {goals} goals of catalogue {catalog_name!r} is empty "
            f"({goal_count} goals in all); choose another split or goals='synthetic'"
        )
        self.catalog_name, self.goals, self.split, self.goal_count = catalog_name, goals, split, goal_count


class WebShopEnv(gym.Env[str, str]):
    """WebShop (Yao et al. 2022): find and buy the product an instruction asks for.

    ## Description
    A simulated e-commerce site. Each episode draws a goal, a shopping instruction such as
    "i need water resistant running shoes in red, size 9, and price lower than 60.00
    dollars". The agent searches, browses results (top 50 hits, 10 per page), opens item
    pages, chooses options, reads the Description / Features / Reviews (and optionally
    Attributes) tabs, and buys one product.

    ## Observation Space
    A string (`UnicodeText`): the page as the original WebShop's text modes show it.
    ``"text"`` joins the page's visible texts with ``" [SEP] "``; ``"text_rich"`` marks
    buttons as ``[button] x [button_]`` and chosen ones as ``[clicked button] x [clicked button_]``.
    ``"html"`` is the page as HTML (`webshop_gym.render.html`), the original's page (the web
    shop serves people the same page with more on it); its visible text nodes are the
    ``"text"`` mode's texts.

    ## Action Space
    A string (`UnicodeText`): ``search[keywords]`` where the page has a search bar, or
    ``click[button text]`` for a button on the page (case-insensitive). ``info["available_actions"]``
    lists the valid ones (``search[<query>]`` stands for any keywords). An invalid action
    never raises: the page stays as it was, the reward is 0 and ``info["action_error"]``
    says why.

    ## Rewards
    Buying a product ends the episode with the original WebShop reward
    ``R = r_type * (N_att + N_opt + [price <= limit]) / (|attributes| + |options| + 1)``
    (see `webshop_gym.reward`); every other step gives 0. Variants (``reward=``):

    * ``"original"``: R at the purchase.
    * ``"binary"``: 1 if R == 1 (the purchase meets everything), else 0.
    * ``"shaped"``: R at the purchase plus potential-based shaping
      ``F = gamma * Phi(s') - Phi(s)`` (Ng et al. 1999), where ``Phi`` is half the reward
      that the best product in view would earn (results page: the best listed product;
      item page: this product with the options chosen so far) and ``Phi = 0`` once the
      episode ends, bought or out of steps. With ``shaping_discount=1`` the shaped return of
      every episode equals its original return, so loops (search again, page back and forth)
      earn nothing net and the optimal policy is unchanged; with ``gamma < 1`` loops lose.

    ## Starting State
    The search page with the goal's instruction.

    ## Episode End
    Terminated when the agent buys (``click[buy now]``); truncated after ``max_steps``
    actions (invalid ones count).

    ## Info
    Every step: ``available_actions``, ``instruction``, ``goal_index``, ``page``,
    ``action_error`` ("" when the action was valid), ``steps_left``. At the purchase also:
    ``reward_breakdown`` (r_type, r_att, r_option, r_price, matches, which noun extractor
    ran), ``score`` (R), ``success`` (R == 1), ``purchased_asin``, ``purchased_options``.

    ## Arguments
    * ``catalog``: ``"mini"`` (bundled 497 products), ``"1k"`` / ``"full"`` (the official
      data, prepared under ``$WEBSHOP_GYM_DATA`` by ``webshop-gym data download`` and
      ``webshop-gym data prepare``), or a folder: a prepared store, or the official files
      (loaded into memory; fine for the 1k set).
    * ``observation_mode``: ``"text"``, ``"text_rich"`` or ``"html"``.
    * ``goals``: ``"human"`` (the crowd-written instructions) or ``"synthetic"`` (templated).
    * ``split``: ``"train"``, ``"dev"``, ``"test"`` or ``"all"``; ``reset(options={"goal_index": i})``
      picks goal i of the split (test goal i is the paper's test goal i). Any other task over
      the catalogue's products can be played with ``reset(options={"goal": goal})``, a
      `webshop_gym.Goal` (for instance a split goal with other option values, via
      ``dataclasses.replace``); ``info["goal_index"]`` is then None. (Local envs only: a
      goal object does not travel over HTTP.) ``env.unwrapped.split_manifest`` lists the
      goals of every split and their SHA-256 (`webshop_gym.data.splits`), for results to name.
    * ``search_engine``: ``"bm25"`` (embedded; ranks exactly as the original's Lucene),
      ``"bm25s"`` (the bm25s library's ranking), ``"rank_bm25"`` (small catalogues) or
      ``"lucene"`` (the original's engine through pyserini; the ``lucene`` extra and Java 17).
    * ``reward``: ``"original"``, ``"binary"`` or ``"shaped"``; ``shaping_discount``: gamma of the shaping.
    * ``max_steps``: actions per episode (15).
    * ``show_attributes``: whether item pages have the Attributes tab.

    ## Version History
    * v0: initial release.

    Example:
        >>> import gymnasium as gym
        >>> import webshop_gym
        >>> env = gym.make("WebShop-Mini-Text-v0")
        >>> observation, info = env.reset(seed=0, options={"goal_index": 0})
        >>> observation.startswith("WebShop [SEP] Instruction: [SEP] ")
        True
        >>> info["available_actions"]
        ['search[<query>]']
    """

    metadata = {"render_modes": ["ansi"], "render_fps": 4}

    def __init__(
        self,
        catalog: str | os.PathLike[str] = "mini",
        observation_mode: ObservationMode = "text",
        goals: GoalSource = "human",
        split: Split = "train",
        search_engine: str = "bm25",
        reward: RewardVariant = "original",
        shaping_discount: float = 1.0,
        max_steps: int = 15,
        show_attributes: bool = False,
        render_mode: str | None = None,
    ) -> None:
        _check_catalog(catalog)
        _check_choice("observation_mode", observation_mode, OBSERVATION_MODES)
        _check_choice("goals", goals, GOAL_SOURCES)
        _check_choice("split", split, SPLITS)
        _check_choice("search_engine", search_engine, ENGINE_NAMES)
        _check_choice("reward", reward, REWARD_VARIANTS)
        _check_choice("render_mode", render_mode, (None, *self.metadata["render_modes"]))
        if not isinstance(max_steps, int) or isinstance(max_steps, bool) or max_steps < 1:
            raise ValueError(f"max_steps must be a positive int, got {max_steps!r}")
        if not isinstance(show_attributes, (bool, np.bool_)):
            raise ValueError(f"show_attributes must be True or False, got {show_attributes!r}")
        if (
            not isinstance(shaping_discount, (int, float, np.floating, np.integer))
            or isinstance(shaping_discount, bool)
            or not 0.0 < shaping_discount <= 1.0
        ):
            raise ValueError(f"shaping_discount must be in (0, 1], got {shaping_discount!r}")

        catalog_text = os.fspath(catalog)
        self._arguments = dict(
            catalog=catalog_text,
            observation_mode=observation_mode,
            goals=goals,
            split=split,
            search_engine=search_engine,
            reward=reward,
            shaping_discount=shaping_discount,
            max_steps=max_steps,
            show_attributes=show_attributes,
            render_mode=render_mode,
        )
        self.catalog, self.all_goals, self.prices = shared_world(catalog_text, goals, search_engine)
        self.goal_indices = goal_split(
            self.catalog.name, len(self.all_goals), split, positions=goal_positions(self.all_goals)
        )
        if len(self.goal_indices) == 0:
            raise EmptySplitError(self.catalog.name, goals, split, len(self.all_goals))
        self.engine = build_engine(self.catalog, search_engine)
        self.shop = Shop(self.catalog, self.engine, show_attributes)
        self.observation_mode = observation_mode
        self.reward_variant = reward
        self.shaping_discount = shaping_discount
        self.max_steps = max_steps
        self.show_attributes = show_attributes
        self.render_mode = render_mode
        renderers = {"text": render_text, "text_rich": render_text_rich, "html": render_html}
        self._render = renderers[observation_mode]

        self.observation_space = observation_space()
        self.action_space = action_space()

        self.goal: Goal | None = None
        self.goal_index: int | None = None
        self.state: PageState | None = None
        self.steps = 0
        self._potential: ProgressPotential | None = None
        self._last_potential = 0.0

    # -- Gymnasium API -------------------------------------------------------------------

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[str, dict]:
        super().reset(seed=seed)
        checked = checked_reset_options(options)
        if checked.get("goal") is not None:
            if checked.get("goal_index") is not None:
                raise ValueError("give reset either options['goal_index'] or options['goal'], not both")
            self._start(self._checked_goal(checked["goal"]), goal_index=None)
            return self._observation(), self._info(action_error="")
        goal_index = checked.get("goal_index")
        if goal_index is None:
            goal_index = int(self.np_random.integers(len(self.goal_indices)))
        elif (
            not isinstance(goal_index, (int, np.integer))
            or isinstance(goal_index, bool)  # True is not goal 1
            or not 0 <= goal_index < len(self.goal_indices)
        ):
            raise ValueError(
                f"goal_index must be an int in [0, {len(self.goal_indices)}) for the "
                f"{self._arguments['split']!r} split, got {goal_index!r}"
            )
        self._start(self.goal_at(int(goal_index)), goal_index=int(goal_index))
        return self._observation(), self._info(action_error="")

    @property
    def split_manifest(self) -> SplitManifest:
        """Which goals each split of this env's goals holds, and their hash (`webshop_gym.data.splits`).

        Computed once per catalogue and goal source; results that name the same
        ``split_manifest.sha256`` played splits of the same goal numbers.
        """
        return split_manifest(self.catalog, self._arguments["goals"])  # type: ignore[arg-type]

    def goal_at(self, goal_index: int) -> Goal:
        """The goal at ``goal_index`` in the split (what ``reset(options={"goal_index": i})`` plays)."""
        return self.all_goals[self.goal_indices[goal_index]]

    def _start(self, goal: Goal, goal_index: int | None) -> None:
        self.goal, self.goal_index = goal, goal_index
        self.state = self.shop.start(goal.instruction_text)
        self.steps = 0
        if self.reward_variant == "shaped":
            self._potential = ProgressPotential(self.catalog, goal, self.prices)
            self._last_potential = self._potential(self.state)

    def _checked_goal(self, goal: object) -> Goal:
        if not isinstance(goal, Goal):
            raise ValueError(f"options['goal'] must be a webshop_gym.Goal, got {type(goal).__name__}")
        if goal.asin not in self.prices:
            raise ValueError(
                f"options['goal'] is for product {goal.asin!r}, which is not in catalogue "
                f"{self.catalog.name!r}: a goal must name one of its products"
            )
        return goal

    def step(self, action: str) -> tuple[str, float, bool, bool, dict]:
        if self.state is None or self.goal is None:
            raise gym.error.ResetNeeded("call reset() before step()")
        if self.state.page is Page.DONE or self.steps >= self.max_steps:
            # Gymnasium leaves stepping a finished episode undefined; report it, change nothing.
            info = self._info(action_error="the episode has ended; call reset() to start another")
            return self._observation(), 0.0, self.state.page is Page.DONE, self.steps >= self.max_steps, info

        self.steps += 1
        result = self.shop.step(self.state, action)  # never raises; non-strings are reported too
        self.state = result.state
        purchase = result.purchase
        terminated = purchase is not None
        truncated = not terminated and self.steps >= self.max_steps
        info = self._info(action_error=result.error or "")
        reward = 0.0
        if purchase is not None:
            breakdown = self._score_purchase(purchase.asin, purchase.options, info)
            reward = breakdown.total if self.reward_variant != "binary" else binary_reward(breakdown)
            self.state = dataclasses.replace(self.state, reward=breakdown.total)  # the done page shows it
        if self._potential is not None:
            ended = terminated or truncated
            potential = 0.0 if ended else self._potential(self.state)
            reward += self.shaping_discount * potential - self._last_potential
            self._last_potential = potential
        return self._observation(), float(reward), terminated, truncated, info

    def render(self) -> str | None:
        if self.render_mode == "ansi" and self.state is not None:
            return render_text_rich(self.state, self.catalog, self.show_attributes)
        return None

    # -- helpers -------------------------------------------------------------------------

    def _observation(self) -> str:
        assert self.state is not None
        if self.observation_mode == "html" and self.state.page is Page.DONE:
            # The HTML done page also carries the breakdown (as data the text modes do not show).
            return render_html(self.state, self.catalog, self.show_attributes, self._done_breakdown())
        return self._render(self.state, self.catalog, self.show_attributes)

    def _done_breakdown(self) -> dict[str, Any] | None:
        if self.state is None or self.state.asin is None or self.goal is None:
            return None
        asin = self.state.asin
        options = dict(self.state.selected_options)  # what Buy Now bought (shop.Purchase)
        return original_reward(self.catalog[asin], self.goal, self.prices[asin], options).as_dict()

    def _info(self, action_error: str) -> dict[str, Any]:
        assert self.state is not None and self.goal is not None
        return {
            "available_actions": list(self.shop.available_actions(self.state)),
            "instruction": self.goal.instruction_text,
            "goal_index": self.goal_index,
            "page": self.state.page.value,
            "action_error": action_error,
            "steps_left": self.max_steps - self.steps,
        }

    def _score_purchase(self, asin: str, options: dict[str, str], info: dict[str, Any]) -> RewardBreakdown:
        assert self.goal is not None
        breakdown = original_reward(self.catalog[asin], self.goal, self.prices[asin], options)
        info.update(
            reward_breakdown=breakdown.as_dict(),
            score=breakdown.total,
            success=binary_reward(breakdown) == 1.0,
            purchased_asin=asin,
            purchased_options=dict(options),
        )
        return breakdown

    # -- the episode's state: what pickles and `webshop_gym.web.snapshots` carry ----------

    def _episode_parts(self) -> dict[str, Any]:
        """The episode in plain parts (the random generator as its state), for `_resume`."""
        rng = self._np_random
        return {
            "goal_index": self.goal_index,
            "goal": self.goal,
            "state": self.state,
            "steps": self.steps,
            "last_potential": self._last_potential,
            "np_random": rng.bit_generator.state if rng is not None else None,
            "np_random_seed": self._np_random_seed if rng is not None else None,
        }

    def _resume(
        self,
        goal_index: int | None,
        goal: Goal | None,
        state: PageState | None,
        steps: int,
        last_potential: float,
        np_random: Mapping[str, Any] | None,
        np_random_seed: int | None,
    ) -> None:
        """Continues the episode `_episode_parts` gave (its parts checked by the caller)."""
        if np_random is not None:
            self._np_random, _ = gym.utils.seeding.np_random()
            self._np_random.bit_generator.state = np_random
            self._np_random_seed = np_random_seed
        self.goal, self.goal_index = goal, goal_index
        self._potential = None
        if goal is not None and self.reward_variant == "shaped":
            self._potential = ProgressPotential(self.catalog, goal, self.prices)
        self.state, self.steps, self._last_potential = state, steps, float(last_potential)

    # -- pickling: arguments and episode state, not the shared catalogue ------------------

    def __getstate__(self) -> dict[str, Any]:
        parts = self._episode_parts()
        if self.goal_index is not None:
            parts["goal"] = None  # a split goal is found again by its index; only one given to reset travels
        return {"arguments": self._arguments, **parts}

    def __setstate__(self, saved: dict[str, Any]) -> None:
        self.__init__(**saved["arguments"])  # type: ignore[misc]
        goal_index = saved["goal_index"]
        goal = saved.get("goal") or (self.goal_at(goal_index) if goal_index is not None else None)
        self._resume(
            goal_index,
            goal,
            saved["state"],
            saved["steps"],
            saved["last_potential"],
            saved["np_random"],
            saved["np_random_seed"],
        )


RESET_OPTIONS = ("goal_index", "goal")


def checked_reset_options(options: object) -> Mapping[str, Any]:
    """``reset``'s ``options`` as a mapping with known keys only (None: no options).

    Raises:
        ValueError: ``options`` is not a dict (or None), or has keys `reset` does not take.

    Example:
        >>> checked_reset_options({"goal_index": 3})
        {'goal_index': 3}
        >>> checked_reset_options("x")
        Traceback (most recent call last):
        ...
        ValueError: reset options must be a dict such as {'goal_index': 3} (or None), got a str: 'x'
    """
    if options is None:
        return {}
    if not isinstance(options, Mapping):
        raise ValueError(
            "reset options must be a dict such as {'goal_index': 3} (or None), got a "
            f"{type(options).__name__}: {_short_repr(options)}"
        )
    unknown = [key for key in options if key not in RESET_OPTIONS]
    if unknown:
        raise ValueError(
            f"unknown reset options {', '.join(_short_repr(key) for key in unknown)}; "
            f"the options are {' and '.join(map(repr, RESET_OPTIONS))}"
        )
    return options


def _short_repr(value: object, limit: int = 80) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _check_catalog(catalog: object) -> None:
    if not isinstance(catalog, (str, os.PathLike)):
        raise ValueError(
            "catalog must be 'mini', '1k', 'full' or the path of a folder, got a "
            f"{type(catalog).__name__}: {_short_repr(catalog)}"
        )


def _check_choice(name: str, value: object, choices: tuple[object, ...]) -> None:
    if value not in choices:
        raise ValueError(f"{name}={value!r} is not one of {', '.join(map(repr, choices))}")
