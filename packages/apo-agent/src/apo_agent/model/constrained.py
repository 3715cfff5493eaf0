"""Constrained decoding: answers that can only spell one of the page's actions.

With ``TrainConfig.constrain_actions`` the policy samples each token from its softmax
restricted to the tokens that keep the answer on track to a valid action: the answer text
must stay a prefix of ``<action>click[X]</action>`` for a button X on the page, or of
``<action>search[`` when the page has a search bar, after which the query is free text
(or, with ``search_query="instruction"``, exactly ``<action>search[<the instruction>]</action>``).
The policy is then pi(token) = softmax(logits over the allowed tokens): the allowed ids of
every sampled token are kept with the episode (`apo_agent.rollout.tokens.TokenSequence`) and
`apo_agent.model.policy.LMPolicy.token_logprobs` normalises over the same ids, so the log-probs
that A*PO and GRPO train on are those of the distribution that was sampled.

Matching is on text, not on one tokenisation: any token whose text fits is allowed, so a
model may spell ``click[buy now]`` in whatever pieces its vocabulary has.

Example:
    >>> from apo_agent.model.tiny import train_tokenizer
    >>> tokenizer = train_tokenizer(["<action>click[buy now]</action> search[red shoes]"] * 20, 300)
    >>> constraint = ActionConstraint.for_page(ActionVocabulary(tokenizer), ["click[buy now]"])
    >>> ids = tokenizer("<action>click[buy now]</action>", add_special_tokens=False)["input_ids"]
    >>> all(ids[i] in constraint.allowed_next(ids[:i]) for i in range(len(ids)))
    True
    >>> constraint.allowed_next(ids) == (tokenizer.eos_token_id,)  # complete: only the stop token
    True
"""

from __future__ import annotations

import bisect
import functools
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from shared_prompts import format_model_output

Allowed = tuple[int, ...] | None
"""The token ids a step may sample from; None: any token (no constraint at this step)."""

_QUERY = "QUERY_PLACEHOLDER_51c2"


def stop_token_ids(tokenizer: Any, generation_config: Any = None) -> list[int]:
    """The ids that end an assistant turn: the tokenizer's eos first, then the model's own."""
    ids: list[int] = []
    if tokenizer.eos_token_id is not None:
        ids.append(int(tokenizer.eos_token_id))
    extra = getattr(generation_config, "eos_token_id", None)
    for value in extra if isinstance(extra, list | tuple) else [extra]:
        if value is not None and int(value) not in ids:
            ids.append(int(value))
    if not ids:
        raise ValueError("the tokenizer has no eos token: set tokenizer.eos_token to the end-of-turn token")
    return ids


@dataclass(frozen=True)
class PageActions:
    """What a constrained answer may say on one page, as text (what a backend that is not
    given an `ActionConstraint`, an HTTP server, is told).

    Attributes:
        available_actions: ``info["available_actions"]`` of the page.
        fixed_query: The only search allowed (``search[fixed_query]``); None: a free query.
    """

    available_actions: tuple[str, ...]
    fixed_query: str | None = None

    def whole_answers(self) -> list[str]:
        """The page's answers that are fixed text: its clicks, and its search when the query is."""
        clicks = [action for action in self.available_actions if action.startswith("click[")]
        answers = [format_model_output(action) for action in clicks]
        if self.has_search and self.fixed_query is not None:
            answers.append(format_model_output(f"search[{self.fixed_query}]"))
        return answers

    @property
    def has_search(self) -> bool:
        return any(action.startswith("search[") for action in self.available_actions)


class ActionVocabulary:
    """A tokenizer's vocabulary as text: which tokens spell a given piece of an answer.

    Built once per tokenizer (it decodes every id once). Special tokens and tokens that do
    not decode to whole characters (pieces of a multi-byte character) are left out: they
    can never be part of a constrained answer.
    """

    def __init__(self, tokenizer: Any, stop_ids: Sequence[int] | None = None) -> None:
        self.tokenizer = tokenizer
        self.stop_ids = tuple(stop_ids if stop_ids is not None else stop_token_ids(tokenizer))
        special = set(tokenizer.all_special_ids)
        by_text: dict[str, list[int]] = defaultdict(list)
        self.text: dict[int, str] = {}
        for token_id in range(len(tokenizer)):
            if token_id in special:
                continue
            text = tokenizer.decode([token_id], clean_up_tokenization_spaces=False)
            if text and "\ufffd" not in text:
                self.text[token_id] = text
                by_text[text].append(token_id)
        self._by_text = {text: tuple(ids) for text, ids in by_text.items()}
        self._sorted = sorted(self._by_text)
        self._longest = max((len(text) for text in self._sorted), default=0)

    def canonical(self, text: str) -> str:
        """``text`` as this tokenizer gives it back (e.g. lower-cased by its normaliser)."""
        ids = self.tokenizer(text, add_special_tokens=False)["input_ids"]
        return "".join(self.text.get(i, "") for i in ids)

    def prefixes_of(self, text: str) -> set[int]:
        """Tokens whose text is a non-empty prefix of ``text``."""
        found: set[int] = set()
        for end in range(1, min(len(text), self._longest) + 1):
            found.update(self._by_text.get(text[:end], ()))
        return found

    def extending(self, text: str) -> set[int]:
        """Tokens whose text starts with ``text`` and goes on past it."""
        found: set[int] = set()
        index = bisect.bisect_right(self._sorted, text)
        while index < len(self._sorted) and self._sorted[index].startswith(text):
            found.update(self._by_text[self._sorted[index]])
            index += 1
        return found


@dataclass(frozen=True)
class ActionConstraint:
    """Which answers one page allows: whole click answers, and a search prefix."""

    vocabulary: ActionVocabulary
    answers: tuple[str, ...]
    """Complete answer texts (the click actions), as the tokenizer spells them."""
    open_prefix: str | None
    """Answer text after which anything goes (the search query); None without a search bar."""
    _after: dict[str, Allowed] = field(default_factory=dict, compare=False, repr=False)
    """`_allowed_after` by answer text so far: generation asks again for every prefix at every step."""

    @classmethod
    def for_page(
        cls, vocabulary: ActionVocabulary, available_actions: Sequence[str], fixed_query: str | None = None
    ) -> ActionConstraint:
        """The constraint of a page whose ``info["available_actions"]`` is given.

        With ``fixed_query``, searching is one more whole answer, ``search[fixed_query]``,
        instead of a free query.
        """
        actions = [action for action in available_actions if action.startswith("click[")]
        open_prefix = None
        if any(action.startswith("search[") for action in available_actions):
            if fixed_query is not None:
                actions.append(f"search[{fixed_query}]")
            else:
                template = vocabulary.canonical(format_model_output(f"search[{_QUERY}]"))
                open_prefix = template[: template.lower().index(_QUERY.lower())]
        answers = tuple(vocabulary.canonical(format_model_output(action)) for action in actions)
        return cls(vocabulary, answers, open_prefix)

    @functools.cached_property
    def whole_answer_tokens(self) -> int:
        """The most tokens a whole answer (a click, or the fixed search) can take, with the
        stop token (`whole_answer_budget`); 0 when the only answer is a free search."""
        return whole_answer_budget(0, self.answers)

    def allowed_next(self, ids: Sequence[int]) -> Allowed:
        """The tokens that may follow the answer tokens ``ids`` (None: any)."""
        return self._walk(ids)[1]

    def allowed_along(self, ids: Sequence[int]) -> list[Allowed]:
        """`allowed_next` before each token of a sampled answer: what it was drawn from."""
        return self._walk(ids)[0]

    def _walk(self, ids: Sequence[int]) -> tuple[list[Allowed], Allowed]:
        """The allowed tokens before each of ``ids``, and after the last. Once a step is
        free (the search query, the end of the answer, or a token outside the vocabulary's
        text) every later one is. Teacher-forced ids that leave the constraint (a text it
        does not allow) are scored without it from that token on."""
        along: list[Allowed] = []
        text = ""
        free = False
        for token_id in ids:
            step = None if free else self._allowed_after(text)
            if step is not None and token_id not in step:
                step = None
            along.append(step)
            if step is None or token_id not in self.vocabulary.text:
                free = True
            else:
                text += self.vocabulary.text[token_id]
        return along, None if free else self._allowed_after(text)

    def _allowed_after(self, text: str) -> Allowed:
        if text not in self._after:
            self._after[text] = self._compute_allowed_after(text)
        return self._after[text]

    def _compute_allowed_after(self, text: str) -> Allowed:
        vocabulary = self.vocabulary
        if self.open_prefix is not None and text.startswith(self.open_prefix):
            return None
        allowed: set[int] = set()
        for answer in self.answers:
            if answer.startswith(text):
                rest = answer[len(text) :]
                allowed.update(vocabulary.prefixes_of(rest) if rest else vocabulary.stop_ids)
        if self.open_prefix is not None and self.open_prefix.startswith(text):
            rest = self.open_prefix[len(text) :]
            allowed.update(vocabulary.prefixes_of(rest) | vocabulary.extending(rest))
        # Nothing fits (an action the vocabulary cannot spell in whole characters): let go
        # rather than leave the model no token at all; the env reports what it writes.
        return tuple(sorted(allowed)) if allowed else None


def whole_answer_budget(max_tokens: int, whole_answers: Iterable[str]) -> int:
    """The one answer-budget rule: tokens to allow an answer that may have to be one of
    ``whole_answers`` (texts fixed in advance: a page's clicks, the instruction search).

    ``max_tokens``, or more where a whole answer is longer: one token per UTF-8 byte (a
    model may spell a text in pieces that small: a byte-level token, or a whole character,
    which is at least one byte) and the stop token, so that no whole answer is cut short
    (cut short, it would be no action at all). A free search query still ends at
    ``max_tokens``: its length is the model's. In process (`answer_budget`) and over HTTP
    (`apo_agent.model.answer_regex.answer_token_budget`) alike.

    >>> whole_answer_budget(4, ["<action>click[caf\u00e9]</action>"])  # 28 characters, 29 bytes
    30
    >>> whole_answer_budget(64, [])
    64
    """
    return max([max_tokens, *(len(answer.encode()) + 1 for answer in whole_answers)])


def answer_budget(max_new_tokens: int, constraint: ActionConstraint | None) -> int:
    """How many tokens one answer may take on a page with ``constraint`` (None: no
    constraint, ``max_new_tokens``): `whole_answer_budget` of its whole answers (a
    1k-catalogue instruction search runs to ~90 tokens as SmolLM2 spells it). Only a
    budget: a constrained answer ends with its stop token."""
    return max_new_tokens if constraint is None else whole_answer_budget(max_new_tokens, constraint.answers)
