"""Constrained decoding spelled as a regular expression, for servers that constrain by grammar.

In process the answer is constrained token by token (`apo_agent.model.constrained.ActionConstraint`);
an OpenAI-compatible server (`apo_agent.engines.openai_http`) cannot be given that object, so
it gets the same set of answers as a regular expression (vLLM's ``structured_outputs``):
``<action>X</action>`` for an available X, a free query of up to `MAX_QUERY_CHARS` of the
characters the in-process decoder allows in one, after an optional thought.

Example:
    >>> pattern = answer_pattern(PageActions(("search[<query>]", "click[1.5 oz (pack of 2)]")))
    >>> bool(re.fullmatch(pattern, "<action>click[1.5 oz (pack of 2)]</action>"))
    True
    >>> bool(re.fullmatch(pattern, "<action>click[2 oz]</action>"))
    False
"""

from __future__ import annotations

import re  # noqa: F401  (the examples use it)

from apo_agent.model.constrained import PageActions, whole_answer_budget
from shared_prompts import format_model_output

__all__ = [
    "MAX_QUERY_CHARS",
    "QUERY_CHARS",
    "THINK_CLOSE",
    "THINK_OPEN",
    "answer_pattern",
    "answer_token_budget",
]

THINK_OPEN, THINK_CLOSE = "<think>", "</think>"
# Characters with a meaning in a regular expression; every other one stands for itself in
# Python's `re` and in the engines vLLM's structured outputs use (xgrammar, guidance).
_REGEX_SPECIAL = frozenset("\\.^$*+?{}[]()|")
QUERY_CHARS = r"[^\[\]<\n]"  # what the in-process decoder allows in a free search query
MAX_QUERY_CHARS = 200


def _literal(text: str) -> str:
    return "".join("\\" + c if c in _REGEX_SPECIAL else c for c in text)


def answer_pattern(page: PageActions, think: bool = False, max_thought_chars: int = 512) -> str:
    """A regular expression for the answers a constrained model may give on ``page``: the
    same as `apo_agent.model.constrained` allows, ``<action>X</action>`` for an available X
    (a free query of up to `MAX_QUERY_CHARS`, or the fixed one), after a thought without
    ``<`` of up to ``max_thought_chars`` when ``think``."""
    choices = [_literal(answer) for answer in page.whole_answers()]
    if page.has_search and page.fixed_query is None:
        before, _, after = format_model_output("search[QUERY]").partition("QUERY")
        choices.append(f"{_literal(before)}{QUERY_CHARS}{{1,{MAX_QUERY_CHARS}}}{_literal(after)}")
    if not choices:
        raise ValueError(f"a page without actions to answer with: {page.available_actions}")
    thought = f"{_literal(THINK_OPEN)}[^<]{{0,{max_thought_chars}}}{_literal(THINK_CLOSE)}" if think else ""
    return f"{thought}({'|'.join(choices)})"


def answer_token_budget(page: PageActions, max_tokens: int) -> int:
    """Tokens to allow a constrained answer on ``page``: `whole_answer_budget` (the rule the
    in-process decoder follows too) of the page's whole answers, so that no click, nor the
    fixed search, is cut short (1k synthetic instructions run past 64 tokens)."""
    return whole_answer_budget(max_tokens, page.whole_answers())
