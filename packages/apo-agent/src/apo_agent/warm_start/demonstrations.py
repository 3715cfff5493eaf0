"""Demonstrations for the warm start: an imperfect privileged expert, recorded as the policy would say it.

The demonstrator is webshop-gym's privileged `ExpertPolicy` (it reads the goal), adapted so
that a student that cannot read the goal can still imitate it, and made deliberately
imperfect (`NoisyExpert`):

* it searches the instruction (as the expert does) and, on the results page, opens the goal's
  product when it is on the page and otherwise the first result (the expert would page on
  through the results looking for it: a choice the student could not explain from the page);
* on an item page it chooses the goal's options and buys, except that in some episodes it
  buys at once without choosing options;
* now and then it clicks a random button.

A small model trained from scratch on one demonstration per goal remembers which option each
product was bought with instead of reading it from the instruction (each product comes with
only one or two instructions). `option_variants` adds, per goal, demonstrations of the same
product bought with other option values, the instruction rewritten to name them: on those
pages only the instruction tells the options apart, so copying is the only way to fit them.

A model that imitates it inherits those habits, so pi_ref succeeds only part of the time and
RL has something to fix: choose the options, avoid detours. Demonstrations are recorded with
`collect_episodes` and the same prompt encoder the policy uses, so the warm start sees
exactly the contexts the policy will see.
"""

from __future__ import annotations

import dataclasses
import random
import re
from collections.abc import Sequence
from typing import Any

import gymnasium as gym

from apo_agent.config import DEMO_PRODUCTS, DemoProduct
from apo_agent.rollout.episodes import Episode, collect_episodes
from apo_agent.rollout.goals import with_goals
from apo_agent.rollout.tokens import PromptEncoder
from apo_agent.runtime.seeding import demonstration_seed, variant_demonstration_seed
from shared_prompts import format_model_output
from webshop_gym.actions import click_action, clicked_product
from webshop_gym.agents.scripted import ExpertPolicy
from webshop_gym.data.model import Goal

_BUY = click_action("buy now")


class NoisyExpert:
    """The privileged expert, imitable from the page and with two deliberate flaws.

    Args:
        env: The env it plays in (the expert reads its goal).
        skip_options_prob: Per episode, the chance that it buys as soon as it opens a
            product, without choosing options.
        random_action_prob: Per step, the chance that it clicks a random available button.
        rng: Source of its randomness.
        product: On a results page, ``"goal_or_first"`` opens the goal's product when it
            is on the page, otherwise the first result; ``"first"`` always opens the first
            result (a rule the page alone shows, so a small model can imitate it).
    """

    def __init__(
        self,
        env: gym.Env,
        skip_options_prob: float,
        random_action_prob: float,
        rng: random.Random,
        product: DemoProduct = "goal_or_first",
    ):
        if product not in DEMO_PRODUCTS:
            raise ValueError(f"product must be one of {DEMO_PRODUCTS}, got {product!r}")
        self.expert = ExpertPolicy(env)
        self.skip_options_prob = skip_options_prob
        self.random_action_prob = random_action_prob
        self.rng = rng
        self.product = product
        self._skip_options = False

    def act(self, observation: str, info: dict[str, Any]) -> str:
        available = info.get("available_actions", [])
        if info.get("steps_left") == self.expert.env.unwrapped.max_steps:  # type: ignore[attr-defined]
            self._skip_options = self.rng.random() < self.skip_options_prob  # a new episode
        clicks = [a for a in available if a.startswith("click[")]
        if clicks and self.rng.random() < self.random_action_prob:
            return self.rng.choice(clicks)
        page = info.get("page")
        if page == "results":
            target = click_action(self.expert.env.unwrapped.goal.asin.lower())  # type: ignore[attr-defined]
            products = [a for a in available if clicked_product(a)]
            if products and (self.product == "first" or target not in available):
                return products[0]
            return self.expert.act(observation, info)
        if page == "item" and _BUY in available:
            option = None if self._skip_options else self.expert.next_option(info)
            return option or _BUY
        return self.expert.act(observation, info)


def collect_demonstrations(
    envs: Sequence[gym.Env],
    encoder: PromptEncoder,
    goal_indices: Sequence[int],
    *,
    skip_options_prob: float,
    random_action_prob: float,
    product: DemoProduct = "goal_or_first",
    option_variants: int = 0,
    seed: int = 0,
    progress: bool = True,
) -> list[Episode]:
    """One `NoisyExpert` episode per goal, recorded as the policy would have said it, then
    ``option_variants`` episodes per goal with options (`option_variant`), played without
    random clicks, of which only the product-page turns are kept (their search and results
    turns would repeat the goal's own).

    Answers are the bare ``<action>...</action>`` (demonstrations carry no thoughts).
    """
    demonstrations = _demonstrate(
        envs, encoder, goal_indices, skip_options_prob, random_action_prob, product, seed, progress
    )
    if option_variants < 1:
        return demonstrations
    variants = option_variants_of(envs[0], goal_indices, option_variants, seed)
    if not variants:
        return demonstrations
    played = _demonstrate(
        with_goals(envs, variants),
        encoder,
        range(len(variants)),
        skip_options_prob,
        0.0,
        product,
        variant_demonstration_seed(seed),
        progress,
    )
    for episode in played:
        turns = [
            (sequence, action)
            for sequence, action in zip(episode.sequences, episode.actions, strict=True)
            if not action.startswith("search[") and not clicked_product(action)
        ]
        demonstrations.append(
            dataclasses.replace(
                episode,
                sequences=[sequence for sequence, _ in turns],
                actions=[action for _, action in turns],
            )
        )
    return demonstrations


def option_variants_of(env: gym.Env, goal_indices: Sequence[int], per_goal: int, seed: int) -> list[Goal]:
    """``per_goal`` `option_variant` draws for each of the split goals ``goal_indices`` (in
    that order; goals without a variant add none), the same for the same seed."""
    world: Any = env.unwrapped
    rng = random.Random(seed)
    return [
        variant
        for index in goal_indices
        for _ in range(per_goal)
        if (variant := option_variant(world.goal_at(index), world.catalog, rng))
    ]


def option_variant(goal: Goal, catalog: Any, rng: random.Random) -> Goal | None:
    """``goal`` with each of its option values replaced by a random value of the same option
    of its product, in the instruction too; None when the goal has no options, its product
    is not in ``catalog``, or the instruction does not name every option value."""
    named_values = [value for value in goal.goal_options if isinstance(value, str)]
    if not goal.goal_options or len(named_values) < len(goal.goal_options):
        return None  # (synthetic goals keep (name, value) pairs; they name no options in words)
    if goal.asin not in catalog:
        return None
    item = catalog.get(goal.asin)
    siblings = {
        value.lower(): [v.lower() for v in values] for values in item.options.values() for value in values
    }
    text, options = goal.instruction_text, []
    for value in named_values:
        named = re.search(rf"(?<!\w){re.escape(value)}(?!\w)", text, re.IGNORECASE)
        if value.lower() not in siblings or named is None:
            return None
        chosen = rng.choice(siblings[value.lower()])
        text = text[: named.start()] + chosen + text[named.end() :]
        options.append(chosen)
    return dataclasses.replace(goal, instruction_text=text, goal_options=tuple(options))


def _demonstrate(
    envs: Sequence[gym.Env],
    encoder: PromptEncoder,
    goal_indices: Sequence[int],
    skip_options_prob: float,
    random_action_prob: float,
    product: DemoProduct,
    seed: int,
    progress: bool,
) -> list[Episode]:
    rng = random.Random(seed)
    demonstrators = [NoisyExpert(env, skip_options_prob, random_action_prob, rng, product) for env in envs]

    def answer(slot: int, observation: str, info: dict[str, Any]) -> str:
        action = demonstrators[slot].act(observation, info)
        if action.startswith("search[") and encoder.search_query == "instruction":
            action = f"search[{info['instruction']}]"  # the only search the policy can make
        return format_model_output(action)

    requests = [(goal, demonstration_seed(seed, goal)) for goal in goal_indices]
    return collect_episodes(
        None,
        envs,
        encoder,
        requests,
        max_new_tokens=0,
        temperature=0.0,
        description="demonstrations",
        progress=progress,
        demonstrator=answer,
    )
