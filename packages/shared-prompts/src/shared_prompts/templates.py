"""Prompt templates: the system prompt and the per-turn prompt.

The action grammar comes from `webshop_gym.actions`, so prompts always describe the
actions the env accepts.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from webshop_gym.actions import ACTION_KINDS, GRAMMAR, SEARCH_PLACEHOLDER


@dataclass(frozen=True)
class PromptConfig:
    """How prompts are written.

    Attributes:
        few_shot: Append a worked example episode to the system prompt.
        think: Ask for ``<think>...</think>`` before the action (otherwise the action alone).
        max_observation_chars: Longer observations are cut (with a marker) to fit small
            context windows; ``None`` keeps them whole.
    """

    few_shot: bool = False
    think: bool = True
    max_observation_chars: int | None = 4000

    def __post_init__(self) -> None:
        if self.max_observation_chars is not None and self.max_observation_chars < 100:
            raise ValueError(
                f"max_observation_chars={self.max_observation_chars} leaves too little of the page; "
                "use at least 100 or None for no limit"
            )


FEW_SHOT_EXAMPLE = """\
Example episode:
Instruction: i need a water resistant hiking backpack in olive, and price lower than 60.00 dollars
Observation: WebShop [SEP] Instruction: [SEP] i need a water resistant hiking backpack in olive, \
and price lower than 60.00 dollars [SEP] Search
<think>Search for the product type with its key attribute.</think>
<action>search[water resistant hiking backpack olive]</action>
Observation: Instruction: [SEP] ... [SEP] Back to Search [SEP] Page 1 (Total results: 50) [SEP] \
Next > [SEP] B0EXAMPLE1 [SEP] Trailhead 30L Hiking Backpack, Water Resistant [SEP] $45.99 [SEP] ...
<think>The first result is a water resistant hiking backpack under 60 dollars.</think>
<action>click[b0example1]</action>
Observation: Instruction: [SEP] ... [SEP] Back to Search [SEP] < Prev [SEP] color [SEP] black \
[SEP] olive [SEP] Trailhead 30L Hiking Backpack, Water Resistant [SEP] Price: $45.99 [SEP] ... [SEP] Buy Now
<think>Choose the olive colour, then buy.</think>
<action>click[olive]</action>
<think>The colour is chosen and the price is below the limit.</think>
<action>click[buy now]</action>"""


def system_prompt(config: PromptConfig | None = None) -> str:
    """The system prompt: the task, the actions the env accepts and the answer format."""
    config = config or PromptConfig()
    answer = (
        "First think briefly inside <think>...</think>, then give exactly one action inside "
        "<action>...</action>."
        if config.think
        else "Answer with exactly one action inside <action>...</action>."
    )
    parts = [
        "You are a shopping agent on the WebShop website. Buy the product that best matches "
        "the instruction: its attributes, its options (colour, size, ...) and its price limit.",
        f"Actions: {GRAMMAR}. The action kinds are {' and '.join(ACTION_KINDS)}.",
        f"- {SEARCH_PLACEHOLDER.replace('<query>', 'keywords')}: search with your own keywords; "
        "only where a search bar is listed in the available actions.",
        "- click[button text]: click a button, product id or option exactly as listed.",
        "Choose only among the available actions listed each turn; "
        f"replace <query> in {SEARCH_PLACEHOLDER} with keywords. Buying (click[buy now]) ends the episode.",
        answer,
    ]
    if config.few_shot:
        parts.append(FEW_SHOT_EXAMPLE)
    return "\n".join(parts)


def turn_prompt(
    instruction: str,
    observation: str,
    available_actions: Sequence[str],
    steps_left: int,
    config: PromptConfig | None = None,
    previous_actions: Sequence[str] = (),
) -> str:
    """One turn's user message: instruction, current page, the valid actions and the step budget.

    ``previous_actions`` (oldest first) are listed after the instruction; agents whose
    context holds only the current page use them to remember what they already did.

    >>> print(turn_prompt("i need red shoes", "Back to Search [SEP] ...", ["click[buy now]"], 13,
    ...                   previous_actions=["search[red shoes]", "click[b0example1]"]))
    Instruction: i need red shoes
    Previous actions: search[red shoes] | click[b0example1]
    Observation:
    Back to Search [SEP] ...
    Available actions:
    - click[buy now]
    Steps left: 13.
    """
    config = config or PromptConfig()
    limit = config.max_observation_chars
    if limit is not None and len(observation) > limit:
        observation = observation[:limit] + f" ... [cut: {len(observation) - limit} more characters]"
    actions = "\n".join(f"- {action}" for action in available_actions)
    history = f"Previous actions: {' | '.join(previous_actions)}\n" if previous_actions else ""
    return (
        f"Instruction: {instruction}\n"
        f"{history}"
        f"Observation:\n{observation}\n"
        f"Available actions:\n{actions}\n"
        f"Steps left: {steps_left}."
    )
