"""An OpenAI-compatible chat endpoint as a chat backend: the HTTP engine of `apo_agent.agent.LLMAgent`.

`OpenAIChat` sends ``POST {base_url}/chat/completions`` with the standard library only (a
vLLM server, llama.cpp, any OpenAI-compatible service); the conversations of all env slots
are asked in parallel, each retried on connection errors and 429 / 5xx answers. With
``constrained=True`` each request carries the page's answers as vLLM's ``structured_outputs``
regular expression (`apo_agent.model.answer_regex`, the text spelling of the in-process
constraint) and ``max_tokens`` from the one answer-budget rule
(`apo_agent.model.constrained.whole_answer_budget`); an answer that breaks the pattern is an
error, so a server that ignores it cannot pass for a constrained one.
"""

from __future__ import annotations

import json
import os
import re
import time
import urllib.error
import urllib.request
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from apo_agent.engines.base import Message
from apo_agent.model.answer_regex import answer_pattern, answer_token_budget
from apo_agent.model.constrained import PageActions

__all__ = ["OpenAIChat"]

RETRIED_STATUS = (429, 500, 502, 503, 504)
"""HTTP answers worth asking again: too many requests, and a server that is (re)starting."""


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
                if error.code not in RETRIED_STATUS or attempt == self.retries - 1:
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
