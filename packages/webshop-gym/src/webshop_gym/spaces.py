"""The observation and action spaces of every WebShop env: strings of any unicode.

`UnicodeText` is the space; `observation_space` and `action_space` build the two every env
(`webshop_gym.envs.WebShopEnv`, the HTTP client `webshop_gym.web.client.RemoteWebShopEnv`)
declares, with the length limits the server also enforces. This module also registers how a
`UnicodeText` member travels through `gymnasium.vector.AsyncVectorEnv`'s shared memory, so
vector envs of WebShop work with Gymnasium's defaults.

Example:
    >>> action_space().contains("search[café 🙂]"), action_space().contains("x" * (MAX_ACTION_CHARS + 1))
    (True, False)
"""

from __future__ import annotations

import multiprocessing
from collections.abc import Sequence
from typing import Any

import numpy as np
from gymnasium import spaces
from gymnasium.vector.utils import create_shared_memory, read_from_shared_memory, write_to_shared_memory

__all__ = [
    "MAX_ACTION_CHARS",
    "MAX_OBSERVATION_CHARS",
    "SharedStrings",
    "UnicodeText",
    "action_space",
    "observation_space",
]

MAX_OBSERVATION_CHARS = 1 << 20
MAX_ACTION_CHARS = 4096


def observation_space() -> UnicodeText:
    """The observation space of a WebShop env: a page of at most `MAX_OBSERVATION_CHARS` characters."""
    return UnicodeText(max_length=MAX_OBSERVATION_CHARS)


def action_space() -> UnicodeText:
    """The action space of a WebShop env: an action of at most `MAX_ACTION_CHARS` characters."""
    return UnicodeText(max_length=MAX_ACTION_CHARS)


class UnicodeText(spaces.Text):
    """A `Text` space whose members are any unicode strings up to ``max_length`` characters.

    Gymnasium's `Text` only admits characters from a fixed charset; product pages hold any
    unicode, and agents may type any. In `gymnasium.vector.AsyncVectorEnv`'s shared memory
    (its default) a member travels as its code points, after its length, so every string
    crosses between processes unchanged (see `_create_unicode_shared_memory`).

    Example:
        >>> space = UnicodeText(max_length=10)
        >>> space.contains("café [SEP] 🙂"), space.contains("x" * 11)
        (False, False)
        >>> space.contains("café 🙂")
        True
    """

    def contains(self, x: Any) -> bool:
        return isinstance(x, str) and self.min_length <= len(x) <= self.max_length

    def __repr__(self) -> str:
        return f"UnicodeText({self.min_length}, {self.max_length})"


# Shared memory for UnicodeText (registered with Gymnasium's own dispatchers, which would
# otherwise use Text's: those map characters through the charset, and a page's spaces or
# any other character outside it raise KeyError). Per env: one int32 for the length, then
# up to max_length code points. Strings with lone surrogates survive ("surrogatepass").


def _slot(space: UnicodeText) -> int:
    return space.max_length + 1


@create_shared_memory.register(UnicodeText)
def _create_unicode_shared_memory(space: UnicodeText, n: int = 1, ctx: Any = multiprocessing) -> Any:
    return ctx.Array(np.dtype(np.int32).char, n * _slot(space))


@write_to_shared_memory.register(UnicodeText)
def _write_unicode_to_shared_memory(space: UnicodeText, index: int, value: str, shared_memory: Any) -> None:
    code_points = np.frombuffer(value.encode("utf-32-le", "surrogatepass"), dtype=np.int32)
    if len(code_points) > space.max_length:
        raise ValueError(f"a {len(code_points)}-character string does not fit {space!r}")
    destination = np.frombuffer(shared_memory.get_obj(), dtype=np.int32)
    start = index * _slot(space)
    destination[start] = len(code_points)
    destination[start + 1 : start + 1 + len(code_points)] = code_points


class SharedStrings(Sequence[str]):
    """The strings in a UnicodeText shared-memory buffer, read when indexed (a live view).

    `AsyncVectorEnv` reads its shared memory once, when it starts, and relies on the
    result being a view (as NumPy arrays are) that later writes show through; it hands
    out ``deepcopy(view)``, which here is a plain tuple of the current strings.
    """

    def __init__(self, space: UnicodeText, shared_memory: Any, n: int) -> None:
        self._data = np.frombuffer(shared_memory.get_obj(), dtype=np.int32).reshape((n, _slot(space)))

    def __len__(self) -> int:
        return len(self._data)

    def __getitem__(self, index: Any) -> Any:
        if isinstance(index, slice):
            return tuple(self)[index]
        row = self._data[index]
        return row[1 : 1 + row[0]].tobytes().decode("utf-32-le", "surrogatepass")

    def __deepcopy__(self, memo: dict[int, Any]) -> tuple[str, ...]:
        return tuple(self)

    def __repr__(self) -> str:
        return f"SharedStrings({tuple(self)!r})"


@read_from_shared_memory.register(UnicodeText)
def _read_unicode_from_shared_memory(space: UnicodeText, shared_memory: Any, n: int = 1) -> SharedStrings:
    return SharedStrings(space, shared_memory, n)
