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
        few_shot_style: Which example (`FEW_SHOT_STYLES`): ``"basic"``, a short made-up
            episode, or ``"react"``, the episode of the published ReAct WebShop prompt
            (Yao et al. 2023) in this package's answer format, with or without its thoughts
            as ``think`` says.
        think: Ask for ``<think>...</think>`` before the action (otherwise the action alone).
        max_observation_chars: Longer observations are cut (with a marker) to fit small
            context windows; ``None`` keeps them whole.
    """

    few_shot: bool = False
    think: bool = True
    max_observation_chars: int | None = 4000
    few_shot_style: str = "basic"

    def __post_init__(self) -> None:
        if self.few_shot_style not in FEW_SHOT_STYLES:
            raise ValueError(
                f"few_shot_style={self.few_shot_style!r}: choose one of {', '.join(FEW_SHOT_STYLES)}"
            )
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


# ReAct's WebShop episode (github.com/ysymyth/ReAct, MIT): its think[...] steps become
# <think> blocks of the answers they precede, and its pages are written as this env's
# text observations. ``{think:...}`` marks a thought, dropped when thoughts are off.
_REACT_EPISODE = (
    (
        "i would like a 3 ounce bottle of bright citrus deodorant for sensitive skin, and price "
        "lower than 50.00 dollars"
    ),
    (
        (
            "WebShop [SEP] Instruction: [SEP] i would like a 3 ounce bottle of bright citrus "
            "deodorant for sensitive skin, and price lower than 50.00 dollars [SEP] Search"
        ),
        None,
        "search[3 ounce bright citrus deodorant sensitive skin]",
    ),
    (
        (
            "Back to Search [SEP] Page 1 (Total results: 50) [SEP] Next > [SEP] B078GWRC1J [SEP] "
            "Bright Citrus Deodorant by Earth Mama | Natural and Safe for Sensitive Skin, Pregnancy "
            "and Breastfeeding, Contains Organic Calendula 3-Ounce [SEP] $10.99 [SEP] B078GTKVXY "
            "[SEP] Ginger Fresh Deodorant by Earth Mama | Natural and Safe for Sensitive Skin, "
            "Pregnancy and Breastfeeding, Contains Organic Calendula 3-Ounce [SEP] $10.99 [SEP] "
            "B08KBVJ4XN [SEP] Barrel and Oak - Aluminum-Free Deodorant, Deodorant for Men, Essential "
            "Oil-Based Scent, 24-Hour Odor Protection, Cedar & Patchouli Blend, Gentle on Sensitive "
            "Skin (Mountain Sage, 2.7 oz, 2-Pack) [SEP] $15.95"
        ),
        (
            "B078GWRC1J and B078GTKVXY are bright citrus deodorant less then 50 dollars. I can check "
            "B078GWRC1J first."
        ),
        "click[b078gwrc1j]",
    ),
    (
        (
            "Back to Search [SEP] < Prev [SEP] scent [SEP] assorted scents [SEP] bright citrus [SEP] "
            "calming lavender [SEP] ginger fresh [SEP] simply non-scents [SEP] size [SEP] travel set "
            "(4-pack) [SEP] 3 ounce (pack of 1) [SEP] 3-ounce (2-pack) [SEP] Bright Citrus Deodorant "
            "by Earth Mama | Natural and Safe for Sensitive Skin, Pregnancy and Breastfeeding, "
            "Contains Organic Calendula 3-Ounce [SEP] Price: $10.99 [SEP] Rating: N.A. [SEP] "
            "Description [SEP] Features [SEP] Reviews [SEP] Buy Now"
        ),
        (
            "For 3 ounce bottle of bright citrus deodorant for sensitive skin, the item has options "
            "'bright citrus' and '3 ounce (pack of 1)' and seems good to buy."
        ),
        "click[bright citrus]",
    ),
    (
        "(the same page, bright citrus chosen)",
        None,
        "click[3 ounce (pack of 1)]",
    ),
    (
        "(the same page, 3 ounce (pack of 1) chosen)",
        None,
        "click[buy now]",
    ),
)

FEW_SHOT_STYLES = ("basic", "react")


def few_shot_example(config: PromptConfig | None = None) -> str:
    """The worked example episode `system_prompt` appends when ``config.few_shot`` is set.

    >>> print(few_shot_example(PromptConfig(few_shot_style="react", think=False)).splitlines()[3])
    Answer: <action>search[3 ounce bright citrus deodorant sensitive skin]</action>
    """
    config = config or PromptConfig()
    if config.few_shot_style == "basic":
        return FEW_SHOT_EXAMPLE
    instruction, *turns = _REACT_EPISODE
    lines = ["Example episode:", f"Instruction: {instruction}"]
    for observation, thought, action in turns:
        think = f"<think>{thought}</think>" if config.think and thought else ""
        lines += [f"Observation: {observation}", f"Answer: {think}<action>{action}</action>"]
    return "\n".join(lines)


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
        parts.append(few_shot_example(config))
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
