"""Streaming JSON reads: the same values as json.load, and errors that name the problem."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from webshop_gym.data import jsonstream
from webshop_gym.data.jsonstream import StreamError, iter_array, iter_object

SAMPLE = [
    {"asin": "A1", "name": "Mug ☕ «large»", "price": 1.5, "tags": ["a", "b"], "ok": True, "none": None},
    {
        "asin": "A2",
        "name": 'quote " and \\ backslash \u00e9\U0001f600',
        "n": -12345678901234567890,
        "x": 1e-7,
    },
    [],
    {},
    "a string item",
    12.25,
    False,
]


@pytest.fixture(params=[3, 7, 64, 1 << 20])
def tiny_chunks(request, monkeypatch):
    """Small read chunks put every kind of value across a chunk boundary."""
    monkeypatch.setattr(jsonstream, "_CHUNK_CHARS", request.param)
    return request.param


def test_real_files_stream_as_json_load(webshop_1k: Path) -> None:
    products = webshop_1k / "items_shuffle_1000.json"
    assert list(iter_array(products)) == json.loads(products.read_text(encoding="utf-8"))
    attributes = webshop_1k / "items_ins_v2_1000.json"
    pairs = list(iter_object(attributes))
    assert dict(pairs) == json.loads(attributes.read_text(encoding="utf-8"))
    assert [k for k, _ in pairs] == list(json.loads(attributes.read_text(encoding="utf-8")))


def test_values_across_chunk_boundaries(tmp_path: Path, tiny_chunks: int) -> None:
    path = tmp_path / "items.json"
    for text in (json.dumps(SAMPLE), json.dumps(SAMPLE, indent=3), json.dumps(SAMPLE, ensure_ascii=False)):
        path.write_text(text, encoding="utf-8")
        assert list(iter_array(path)) == SAMPLE
    mapping = {f"k{i}": value for i, value in enumerate(SAMPLE)}
    path.write_text(json.dumps(mapping, ensure_ascii=False, indent=1), encoding="utf-8")
    assert list(iter_object(path)) == list(mapping.items())


def test_progress_sees_every_byte(tmp_path: Path) -> None:
    path = tmp_path / "items.json"
    path.write_text(json.dumps(SAMPLE, ensure_ascii=False), encoding="utf-8")
    chunks: list[bytes] = []
    list(iter_array(path, chunks.append))
    assert b"".join(chunks) == path.read_bytes()


@pytest.mark.parametrize("text", ["[]", "  [ ]  ", "{}", "\n{\n}\n"])
def test_empty_containers(tmp_path: Path, text: str) -> None:
    path = tmp_path / "empty.json"
    path.write_text(text)
    read = iter_array if text.strip().startswith("[") else iter_object
    assert list(read(path)) == []


def test_every_truncation_is_reported_as_truncated(tmp_path: Path, tiny_chunks: int) -> None:
    whole = json.dumps(SAMPLE[:2], ensure_ascii=False)
    path = tmp_path / "items_shuffle.json"
    for cut in range(1, len(whole)):
        path.write_text(whole[:cut], encoding="utf-8")
        with pytest.raises(StreamError) as error:
            list(iter_array(path))
        message = str(error.value)
        assert str(path) in message
        assert "truncated" in message or "invalid JSON" in message, message
        if cut > len(whole) // 2:  # inside the second item or later: never "corrupt"
            assert "truncated" in message, message


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('[{"a": 1} {"a": 2}]', "expected ',' or ']'"),
        ('[{"a": 1},, {"a": 2}]', "invalid JSON in item 1"),
        ('[{"a": tru}]', "invalid JSON in item 0"),
        ('[{"a": 1}] trailing', "unexpected data after the closing"),
        ('{"a": 1}', "expected '\\['"),
        ("", "truncated"),
    ],
)
def test_corrupt_arrays(tmp_path: Path, text: str, expected: str) -> None:
    path = tmp_path / "items.json"
    path.write_text(text)
    with pytest.raises(StreamError, match=expected):
        list(iter_array(path))


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('{"A1": {"x": 1}, 7: {}}', "quoted key for entry 1"),
        ('{"A1" {"x": 1}}', "expected ':'"),
        ('{"A1": {"x": 1}', "truncated"),
        ('[{"x": 1}]', "expected '\\{'"),
    ],
)
def test_corrupt_objects(tmp_path: Path, text: str, expected: str) -> None:
    path = tmp_path / "items_ins_v2.json"
    path.write_text(text)
    with pytest.raises(StreamError, match=expected):
        list(iter_object(path))


def test_invalid_utf8(tmp_path: Path) -> None:
    path = tmp_path / "items.json"
    path.write_bytes(b'[{"name": "caf\xe9"}]')
    with pytest.raises(StreamError, match="not UTF-8"):
        list(iter_array(path))


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match="no such file"):
        list(iter_array(tmp_path / "nope.json"))
