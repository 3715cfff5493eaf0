"""Streaming reads of the official WebShop JSON files, one record at a time.

The full product file is several GB; `json.load` would need several times that in memory.
These readers decode one array item (or one ``key: value`` pair of a top-level object) at
a time with the standard library's C decoder (`json.JSONDecoder.raw_decode`) over a
sliding text buffer, so memory stays at one buffer (8 MB) plus the record being decoded,
and the speed is that of `json.loads` itself. No third-party parser is needed.

Errors name the file, the record and the character offset, and say whether the file looks
truncated (it ends inside a record, or before the closing bracket) or corrupt:

>>> import tempfile, pathlib
>>> path = pathlib.Path(tempfile.mkdtemp()) / "items.json"
>>> _ = path.write_text('[{"asin": "A1"}, {"asin": "A2"}]')
>>> [item["asin"] for item in iter_array(path)]
['A1', 'A2']
>>> _ = path.write_text('[{"asin": "A1"}, {"asin": "A')
>>> try:
...     list(iter_array(path))
... except StreamError as error:
...     print(str(error).split(": ", 1)[1])
the file is truncated: it ends inside item 1 (character 17); download it again
"""

from __future__ import annotations

import codecs
import json
import os
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

__all__ = ["StreamError", "iter_array", "iter_object"]

_CHUNK_CHARS = 8 << 20
# What may follow a decode error when the value was only cut short (by the end of the
# buffer or the file): the start of a number, literal or escape, and whitespace.
_CUT_TAIL = re.compile(r"[\w.+\-\\\s]*")
_WHITESPACE = " \t\n\r"

_decoder = json.JSONDecoder()


class StreamError(ValueError):
    """A data file is not the JSON it should be; the message names the file and the place."""


# Called with every chunk of raw bytes read: progress bars count them, checksums hash them.
ProgressCallback = Callable[[bytes], None]


class _TextStream:
    """A growing window over a UTF-8 file: ``text[pos:]`` is what is not consumed yet."""

    def __init__(self, path: Path, progress: ProgressCallback | None) -> None:
        self.path = path
        try:
            self._file = path.open("rb")
        except FileNotFoundError:
            raise FileNotFoundError(f"{path}: no such file") from None
        self._decoder = codecs.getincrementaldecoder("utf-8")()
        self._progress = progress
        self.text = ""
        self.pos = 0
        self.consumed = 0  # characters dropped from the front of `text` so far
        self.eof = False

    def close(self) -> None:
        self._file.close()

    def offset(self) -> int:
        """The character offset of `pos` in the whole file."""
        return self.consumed + self.pos

    def read_more(self) -> bool:
        """Appends the next chunk; False at the end of the file."""
        if self.eof:
            return False
        raw = self._file.read(_CHUNK_CHARS)
        if self._progress is not None and raw:
            self._progress(raw)
        try:
            chunk = self._decoder.decode(raw, final=not raw)
        except UnicodeDecodeError as exc:
            raise StreamError(
                f"{self.path}: not UTF-8 text near character {self.consumed + len(self.text)} "
                f"({exc.reason}); the file is corrupt: download it again"
            ) from None
        if not raw:
            self.eof = True
        # Drop what is consumed so the window never holds more than a chunk or two.
        self.consumed += self.pos
        self.text = self.text[self.pos :] + chunk
        self.pos = 0
        return bool(raw)

    def skip_whitespace(self) -> str:
        """The next non-whitespace character ('' at the end of the file), not consumed."""
        while True:
            text, pos, n = self.text, self.pos, len(self.text)
            while pos < n and text[pos] in _WHITESPACE:
                pos += 1
            self.pos = pos
            if pos < n:
                return text[pos]
            if not self.read_more():
                return ""

    def expect(self, char: str, what: str) -> None:
        found = self.skip_whitespace()
        if found != char:
            self.fail_at(found, f"expected {char!r} {what}")
        self.pos += 1

    def fail_at(self, found: str, message: str) -> None:
        if found == "":
            raise StreamError(
                f"{self.path}: the file is truncated: it ends at character {self.offset()} where "
                f"{message[len('expected ') :] if message.startswith('expected ') else message} "
                "should follow; download it again"
            )
        raise StreamError(
            f"{self.path}: invalid JSON at character {self.offset()}: {message}, found {found!r}"
        )

    def decode_value(self, what: str) -> Any:
        """Decodes the JSON value at `pos`, reading more of the file as it needs."""
        self.skip_whitespace()
        while True:
            try:
                value, end = _decoder.raw_decode(self.text, self.pos)
            except json.JSONDecodeError as exc:
                # A value cut short by the end of the buffer (or of the file) fails where
                # nothing but the start of a number, literal or escape follows; bad data
                # fails before a structural character that should not be there.
                cut_short = exc.msg.startswith("Unterminated string") or _CUT_TAIL.fullmatch(
                    self.text, exc.pos
                )
                if cut_short and self.read_more():
                    continue
                if cut_short:
                    raise StreamError(
                        f"{self.path}: the file is truncated: it ends inside {what} (character "
                        f"{self.consumed + self.pos}); download it again"
                    ) from None
                raise StreamError(
                    f"{self.path}: invalid JSON in {what} at character {self.consumed + exc.pos}: {exc.msg}; "
                    "the file is corrupt: download it again"
                ) from None
            # A number at the buffer's end ("12" or "12.") may go on in the next chunk.
            number_cut = isinstance(value, (int, float)) and _CUT_TAIL.fullmatch(self.text, end)
            if number_cut and not self.eof and self.read_more():
                continue
            self.pos = end
            return value


def _finish(stream: _TextStream, closing: str) -> None:
    if stream.skip_whitespace() != "":
        raise StreamError(
            f"{stream.path}: unexpected data after the closing {closing!r} at character "
            f"{stream.offset()}; the file is corrupt: download it again"
        )


def _iter_items(stream: _TextStream, opening: str, closing: str, read_item: Callable[[int], Any]) -> Iterator:
    stream.expect(opening, "at the start of the file")
    index = 0
    if stream.skip_whitespace() == closing:
        stream.pos += 1
        _finish(stream, closing)
        return
    while True:
        yield read_item(index)
        index += 1
        found = stream.skip_whitespace()
        if found == ",":
            stream.pos += 1
            continue
        if found == closing:
            stream.pos += 1
            _finish(stream, closing)
            return
        if found == "":
            raise StreamError(
                f"{stream.path}: the file is truncated: it ends after item {index - 1} (character "
                f"{stream.offset()}) without the closing {closing!r}; download it again"
            )
        raise StreamError(
            f"{stream.path}: invalid JSON after item {index - 1} at character {stream.offset()}: "
            f"expected ',' or {closing!r}, found {found!r}; the file is corrupt: download it again"
        )


def iter_array(path: str | os.PathLike[str], progress: ProgressCallback | None = None) -> Iterator[Any]:
    """The items of a file holding one JSON array, in order, one at a time.

    Args:
        path: The file.
        progress: Called with each chunk of raw bytes read (for progress bars, checksums).

    Yields:
        Each item of the array.

    Raises:
        FileNotFoundError: The file does not exist.
        StreamError: The file is not one JSON array (truncated, corrupt, not UTF-8).
    """
    stream = _TextStream(Path(path), progress)
    try:
        yield from _iter_items(stream, "[", "]", lambda i: stream.decode_value(f"item {i}"))
    finally:
        stream.close()


def iter_object(
    path: str | os.PathLike[str], progress: ProgressCallback | None = None
) -> Iterator[tuple[str, Any]]:
    """The ``(key, value)`` pairs of a file holding one JSON object, in file order.

    Args:
        path: The file.
        progress: Called with each chunk of raw bytes read (for progress bars, checksums).

    Yields:
        Each key and its value.

    Raises:
        FileNotFoundError: The file does not exist.
        StreamError: The file is not one JSON object (truncated, corrupt, not UTF-8).
    """
    stream = _TextStream(Path(path), progress)

    def read_pair(index: int) -> tuple[str, Any]:
        if stream.skip_whitespace() != '"':
            stream.fail_at(stream.skip_whitespace(), f"expected a quoted key for entry {index}")
        key = stream.decode_value(f"the key of entry {index}")
        stream.expect(":", f"after the key {key!r}")
        return key, stream.decode_value(f"the value of {key!r} (entry {index})")

    try:
        yield from _iter_items(stream, "{", "}", read_pair)
    finally:
        stream.close()
