"""Prompts for LLM agents on WebShop, and the parser from model output to an action.

Example:
    >>> from shared_prompts import PromptConfig, system_prompt, turn_prompt, parse_model_output
    >>> prompt = turn_prompt("i need red shoes", "WebShop [SEP] Search", ["search[<query>]"], steps_left=15)
    >>> "search[<query>]" in prompt
    True
    >>> parse_model_output("<think>start with a search</think><action>search[red shoes]</action>").action
    'search[red shoes]'
"""

from __future__ import annotations

from shared_prompts.parsing import (
    UNREADABLE_ANSWER_CHARS,
    ParsedOutput,
    action_from_answer,
    format_model_output,
    parse_model_output,
)
from shared_prompts.templates import (
    FEW_SHOT_EXAMPLE,
    FEW_SHOT_STYLES,
    PromptConfig,
    few_shot_example,
    system_prompt,
    turn_prompt,
)

__version__ = "0.1.0"

__all__ = [
    "FEW_SHOT_EXAMPLE",
    "FEW_SHOT_STYLES",
    "UNREADABLE_ANSWER_CHARS",
    "ParsedOutput",
    "PromptConfig",
    "__version__",
    "action_from_answer",
    "few_shot_example",
    "format_model_output",
    "parse_model_output",
    "system_prompt",
    "turn_prompt",
]
