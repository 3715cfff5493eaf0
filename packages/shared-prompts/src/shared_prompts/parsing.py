"""From model output to an action string the env accepts.

Accepted forms, in order of preference: ``<think>...</think><action>X</action>`` (the
last ``<action>`` block counts), and a bare action anywhere in the text
(``click[buy now]``, ``Action: search[red shoes]``). The result is checked with the env's
own grammar, so every action this module returns parses in the env.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from webshop_gym.actions import GRAMMAR, Action, parse_action

_THINK = re.compile(r"<think>(.*?)(?:</think>|$)", re.S)
_ACTION_BLOCK = re.compile(r"<action>(.*?)</action>", re.S)
_BARE_ACTION = re.compile(r"(?:search|click)\[[^\n]*\]")

# Shorter than the env's limit (webshop_gym.envs.MAX_ACTION_CHARS): an unreadable answer
# only has to reach the env to be reported invalid, and it comes back in later prompts as
# a previous action (apo-agent's ``context="last_observation"``), where it would crowd
# out the page.
UNREADABLE_ANSWER_CHARS = 1000
"""An answer without a readable action goes to the env cut to this many characters."""


@dataclass(frozen=True)
class ParsedOutput:
    """What a model said.

    Attributes:
        action: The action string (valid in the env's grammar), or None.
        thought: The text inside ``<think>``, if any.
        error: Why no action could be read, when ``action`` is None.
    """

    action: str | None
    thought: str | None = None
    error: str | None = None


def parse_model_output(text: str) -> ParsedOutput:
    """Reads the action (and thought) from a model's answer.

    >>> parse_model_output("<think>buy it</think><action>click[Buy Now]</action>")
    ParsedOutput(action='click[Buy Now]', thought='buy it', error=None)
    >>> parse_model_output("Action: search[red shoes]").action
    'search[red shoes]'
    >>> parse_model_output("I am not sure.").error
    'no action found: answer with <action>search[keywords] or click[button text]</action>'
    """
    if not isinstance(text, str):
        return ParsedOutput(None, None, f"model output must be a string, not {type(text).__name__}")
    think = _THINK.search(text)
    thought = think.group(1).strip() if think else None
    rest = _THINK.sub(" ", text)
    blocks = _ACTION_BLOCK.findall(rest)
    candidates = [blocks[-1].strip()] if blocks else _BARE_ACTION.findall(rest)[:1]
    if not candidates:
        return ParsedOutput(None, thought, f"no action found: answer with <action>{GRAMMAR}</action>")
    parsed = parse_action(candidates[0])
    if not isinstance(parsed, Action):
        return ParsedOutput(None, thought, parsed)
    return ParsedOutput(str(parsed), thought, None)


def format_model_output(action: str, thought: str | None = None) -> str:
    """The answer a model should give for ``action`` (used to build demonstrations).

    >>> format_model_output("click[buy now]", "the options are set")
    '<think>the options are set</think><action>click[buy now]</action>'
    """
    think = f"<think>{thought}</think>" if thought is not None else ""
    return f"{think}<action>{action}</action>"


def action_from_answer(text: str) -> str:
    """The action string to send to the env for a model's answer.

    The parsed action when there is one; otherwise the answer as it is (stripped, cut to
    `UNREADABLE_ANSWER_CHARS`), which the env reports as an invalid action: the step
    counts, as the model earned. Every LLM agent (the benchmark's, apo-agent's) uses this.

    >>> action_from_answer("<think>go</think><action>click[Buy Now]</action>")
    'click[Buy Now]'
    >>> action_from_answer("  I would buy the red one. ")
    'I would buy the red one.'
    """
    parsed = parse_model_output(text)
    return parsed.action if parsed.action is not None else str(text).strip()[:UNREADABLE_ANSWER_CHARS]
