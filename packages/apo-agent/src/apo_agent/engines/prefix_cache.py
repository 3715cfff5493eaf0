"""Reuse of the keys and values a transformers model computed for a token prefix.

A chat agent sends its whole conversation every turn; `PrefixCaches` keeps the KV caches of
recent sequences so that a prompt is computed only from where it stops matching one
(`apo_agent.engines.transformers_chat.TransformersChat` uses it; a vLLM server or engine has
its own prefix caching). ``python -m benchmarks.harness.prompt_tokens`` measures the saving.
"""

from __future__ import annotations

import copy
from typing import Any

__all__ = ["PrefixCaches"]


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
