"""The environment reference page, generated from the code so that it cannot drift.

    python packages/webshop-gym/scripts/env_reference.py > packages/webshop-gym/docs/env-reference.md

A test regenerates it and compares it with the committed page.
"""

from __future__ import annotations

import inspect

from webshop_gym import ENV_IDS
from webshop_gym.actions import GRAMMAR, SEARCH_PLACEHOLDER
from webshop_gym.data.catalog import load_catalog
from webshop_gym.data.goals import build_goals, goal_split
from webshop_gym.envs import (
    GOAL_SOURCES,
    INFO_KEYS,
    OBSERVATION_MODES,
    PURCHASE_INFO_KEYS,
    REWARD_VARIANTS,
    SPLITS,
    WebShopEnv,
)
from webshop_gym.search.engines import ENGINE_NAMES

CHOICES = {
    "catalog": ("mini", "1k", "full", "a folder"),
    "observation_mode": OBSERVATION_MODES,
    "goals": GOAL_SOURCES,
    "split": SPLITS,
    "search_engine": ENGINE_NAMES,
    "reward": REWARD_VARIANTS,
    "render_mode": (None, *WebShopEnv.metadata["render_modes"]),
}
PAPER_HUMAN_GOALS = 12_087


def _argument_rows() -> list[str]:
    rows = ["| argument | default | choices |", "|---|---|---|"]
    for name, parameter in inspect.signature(WebShopEnv.__init__).parameters.items():
        if name == "self":
            continue
        choices = ", ".join(f"`{c!r}`" if c != "a folder" else c for c in CHOICES.get(name, ()))
        rows.append(f"| `{name}` | `{parameter.default!r}` | {choices or str(parameter.annotation)} |")
    return rows


def _split_rows() -> list[str]:
    rows = ["| catalogue | train | dev | test |", "|---|---|---|---|"]
    mini_goals = len(build_goals(load_catalog("mini"), "human"))
    for catalogue, name, n_goals in (("mini", "mini", mini_goals), ("real data", "full", PAPER_HUMAN_GOALS)):
        ranges = [goal_split(name, n_goals, split) for split in ("train", "dev", "test")]
        cells = [f"{r.start}-{r.stop - 1}" if len(r) else "-" for r in ranges]
        rows.append(f"| {catalogue} ({n_goals:,} human goals) | " + " | ".join(cells) + " |")
    return rows


def env_reference() -> str:
    """The Markdown reference of every registered id, argument, action and info key."""
    lines = [
        "# webshop-gym environment reference",
        "",
        "Generated from the code by `python packages/webshop-gym/scripts/env_reference.py`; a test checks",
        "that this page matches it. The class docstring of `webshop_gym.envs.WebShopEnv` explains each part.",
        "",
        "## Registered ids",
        "",
        "| id | arguments it sets |",
        "|---|---|",
        *(
            f"| `{env_id}` | {', '.join(f'`{k}={v!r}`' for k, v in kwargs.items())} |"
            for env_id, kwargs in ENV_IDS.items()
        ),
        "",
        "Every id accepts every argument below through `gymnasium.make(id, **arguments)`.",
        "",
        "## Arguments",
        "",
        *_argument_rows(),
        "",
        "## Actions",
        "",
        f"`{GRAMMAR}`; `info['available_actions']` lists the valid ones, with `{SEARCH_PLACEHOLDER}`",
        "standing for any keywords where the page has a search bar. Invalid actions are reported in",
        "`info['action_error']` and change nothing.",
        "",
        "## Info keys",
        "",
        "Every step and reset:",
        "",
        *(f"- `{key}`: {meaning}" for key, meaning in INFO_KEYS.items()),
        "",
        "At the purchase, in addition:",
        "",
        *(f"- `{key}`: {meaning}" for key, meaning in PURCHASE_INFO_KEYS.items()),
        "",
        "## Splits (goal indices)",
        "",
        *_split_rows(),
        "",
    ]
    return "\n".join(lines)


if __name__ == "__main__":
    print(env_reference(), end="")
