"""Reference policies that act only through observations, ``info`` and the step API.

* `RulePolicy`: the paper's rule baseline: search the instruction, open the first result, buy.
* `ExpertPolicy`: a privileged policy that reads the goal (which product, which options)
  and walks the site to it. It upper-bounds what search allows and makes demonstrations.

Both follow one small protocol: ``act(observation, info) -> action string``.

Example:
    >>> import gymnasium as gym
    >>> import webshop_gym
    >>> from webshop_gym.agents.scripted import ExpertPolicy, run_episode
    >>> env = gym.make("WebShop-Mini-Text-v0", split="test")
    >>> run_episode(env, ExpertPolicy(env), seed=0, goal_index=0)["success"]
    True
"""

from __future__ import annotations

from typing import Any, Protocol

import gymnasium as gym
from rapidfuzz import fuzz, utils

from webshop_gym.actions import click_action, clicked_product, search_action
from webshop_gym.agents.scheduler import EpisodeStart, Step, play_episodes
from webshop_gym.data.instructions import split_price_clause

RESULT_PAGES_TO_SCAN = 5  # the results hold 50 hits, 10 per page


class Policy(Protocol):
    """Chooses the next action from what the env shows."""

    def act(self, observation: str, info: dict[str, Any]) -> str: ...


def _available(info: dict[str, Any], action: str) -> bool:
    return action.lower() in (a.lower() for a in info["available_actions"])


class RulePolicy:
    """Search the instruction text, click the first result, buy (Yao et al. 2022, rule baseline)."""

    def act(self, observation: str, info: dict[str, Any]) -> str:
        available = info["available_actions"]
        if info["page"] == "search":
            return search_action(info["instruction"])
        if info["page"] == "results":
            products = [a for a in available if clicked_product(a)]
            return products[0] if products else click_action("back to search")
        if _available(info, click_action("buy now")):
            return click_action("buy now")
        return click_action("< prev")


class ExpertPolicy:
    """Reads the goal from the env and buys its product with its options.

    It searches the instruction (without the price clause), then the product's name, scans
    up to five result pages for the goal's asin, picks each goal option on the item page
    and buys. It never touches env internals other than reading the goal.
    """

    def __init__(self, env: gym.Env) -> None:
        self.env = env
        self._goal_key: object = None
        self._queries: list[str] = []

    def _refresh(self) -> None:
        goal = self.env.unwrapped.goal  # type: ignore[attr-defined]
        key = (self.env.unwrapped.goal_index, goal)  # type: ignore[attr-defined]
        if key != self._goal_key:
            self._goal_key = key
            self._queries = [split_price_clause(goal.instruction_text)[0], goal.name]
            self._results_pages_seen = 0

    def act(self, observation: str, info: dict[str, Any]) -> str:
        self._refresh()
        goal = self.env.unwrapped.goal  # type: ignore[attr-defined]
        target = goal.asin.lower()
        page = info["page"]
        if page == "search":
            self._results_pages_seen = 0
            query = self._queries.pop(0) if self._queries else goal.name
            return search_action(query)
        if page == "results":
            self._results_pages_seen += 1
            if _available(info, click_action(target)):
                return click_action(target)
            if self._results_pages_seen < RESULT_PAGES_TO_SCAN and _available(info, click_action("next >")):
                return click_action("next >")
            return click_action("back to search")
        if page == "item":
            if not _available(info, click_action("buy now")) or _current_asin(self.env) != goal.asin:
                return click_action("< prev")
            option = self.next_option(info)
            return option if option is not None else click_action("buy now")
        return click_action("< prev")

    def next_option(self, info: dict[str, Any]) -> str | None:
        """On an item page: the click that chooses the next goal option not yet selected, or None."""
        for wanted in _goal_option_values(self.env.unwrapped.goal):  # type: ignore[attr-defined]
            choice = _best_option(wanted, info["available_actions"])
            if choice is not None and not _is_selected(self.env, choice):
                return click_action(choice)
        return None


def _current_asin(env: gym.Env) -> str | None:
    return env.unwrapped.state.asin  # type: ignore[attr-defined,no-any-return]


def _is_selected(env: gym.Env, value: str) -> bool:
    selected = dict(env.unwrapped.state.selected_options)  # type: ignore[attr-defined]
    return value.lower() in (v.lower() for v in selected.values())


def _goal_option_values(goal: Any) -> list[str]:
    return [o[1] if isinstance(o, tuple) else o for o in goal.goal_options]


def _best_option(wanted: str, available_actions: list[str]) -> str | None:
    """The option button that best matches a goal option (the reward's fuzzy rule)."""
    best, best_score = None, 85.0
    for action in available_actions:
        if not action.startswith("click["):
            continue
        label = action[len("click[") : -1]
        score = fuzz.token_set_ratio(label, wanted, processor=utils.default_process)
        if label.lower() == wanted.lower():
            return label
        if score > best_score:
            best, best_score = label, score
    return best


def run_episode(env: gym.Env, policy: Policy, seed: int | None = None, goal_index: int | None = None) -> dict:
    """Plays one episode; returns the final info with ``return`` and ``steps`` added.

    It plays through the episode loop every agent uses (`webshop_gym.agents.scheduler`).
    """
    options = {"goal_index": goal_index} if goal_index is not None else None
    steps: list[Step] = []
    play_episodes(
        [env],
        [EpisodeStart(seed, options)],
        lambda turns: [policy.act(turn.observation, turn.info) for turn in turns],
        on_step=steps.append,
    )
    info = dict(steps[-1].info)
    info.setdefault("success", False)
    info.setdefault("score", 0.0)
    info.update({"return": sum(step.reward for step in steps), "steps": len(steps)})
    return info
