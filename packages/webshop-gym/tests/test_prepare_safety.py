"""Issue 40: `webshop-gym data prepare` never deletes what it did not make, and fails cleanly."""

from __future__ import annotations

import errno
import hashlib
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from webshop_gym.cli import main
from webshop_gym.data.prepare import find_inputs, prepare_catalog
from webshop_gym.data.store import open_store
from webshop_gym.search import bm25_index


def _snapshot(folder: Path) -> dict[str, str]:
    """Every file under ``folder`` (hidden ones too) and its SHA-256."""
    return {
        str(path.relative_to(folder)): hashlib.sha256(path.read_bytes()).hexdigest()
        for path in sorted(folder.rglob("*"))
        if path.is_file()
    }


@pytest.fixture
def raw(webshop_1k: Path, webshop_1k_human: Path, tmp_path: Path) -> Path:
    folder = tmp_path / "raw"
    folder.mkdir()
    for name in ("items_shuffle_1000.json", "items_ins_v2_1000.json"):
        shutil.copy(webshop_1k / name, folder / name)
    shutil.copy(webshop_1k_human, folder / "items_human_ins_1000.json")
    return folder


def _prepare(source: Path, out: Path, *extra: str) -> int:
    return main(["data", "prepare", "--from", str(source), "--out", str(out), "--quiet", *extra])


def test_a_folder_of_the_users_files_is_refused_untouched(raw: Path, tmp_path: Path, capsys) -> None:
    mine = tmp_path / "work" / "mine"
    (mine / "notes").mkdir(parents=True)
    (mine / "thesis.tex").write_text("years of work")
    (mine / "notes" / "a.txt").write_text("a")
    before = _snapshot(tmp_path / "work")
    for force in ((), ("--force",)):
        assert _prepare(raw, mine, *force) == 1
        error = capsys.readouterr().err
        assert error.count("\n") == 1, error
        assert "not a store" in error and "--out" in error
    assert _snapshot(tmp_path / "work") == before  # no lock file, no partial folder either


def test_out_equal_to_or_inside_from_is_refused(raw: Path, tmp_path: Path, capsys) -> None:
    before = _snapshot(tmp_path)
    for out in (raw, raw / "store", raw / "a" / "b"):
        assert _prepare(raw, out) == 1
        error = capsys.readouterr().err
        assert "inside" in error or "same folder" in error, error
    assert _snapshot(tmp_path) == before
    assert sorted(p.name for p in raw.iterdir()) == [
        "items_human_ins_1000.json",
        "items_ins_v2_1000.json",
        "items_shuffle_1000.json",
    ]


def test_from_inside_out_is_refused(webshop_1k: Path, tmp_path: Path, capsys) -> None:
    data = tmp_path / "data"
    (data / "raw").mkdir(parents=True)
    for name in ("items_shuffle_1000.json", "items_ins_v2_1000.json"):
        shutil.copy(webshop_1k / name, data / "raw" / name)
    before = _snapshot(tmp_path)
    assert _prepare(data / "raw", data) == 1
    assert "inside" in capsys.readouterr().err
    assert _snapshot(tmp_path) == before


def test_a_store_with_foreign_files_is_not_replaced(raw: Path, tmp_path: Path, capsys) -> None:
    out = tmp_path / "store"
    assert _prepare(raw, out) == 0
    (out / "my-results.csv").write_text("1,2,3")
    assert _prepare(raw, out, "--force") == 1
    error = capsys.readouterr().err
    assert "my-results.csv" in error
    assert (out / "my-results.csv").read_text() == "1,2,3"
    assert len(open_store(out)) == 1000


def test_an_empty_folder_may_be_the_store(raw: Path, tmp_path: Path) -> None:
    out = tmp_path / "empty"
    out.mkdir()
    assert _prepare(raw, out) == 0
    assert len(open_store(out)) == 1000


def test_leftovers_of_an_interrupted_prepare(raw: Path, tmp_path: Path, capsys) -> None:
    out = tmp_path / "store"
    assert _prepare(raw, out) == 0
    # Interrupted between the two renames of the swap: the previous store waits in `.old`.
    old = tmp_path / ".store.old-4242"
    os.rename(out, old)
    partial = tmp_path / ".store.partial-4243"
    partial.mkdir()
    (partial / "products.bin").write_bytes(b"half")
    capsys.readouterr()
    assert _prepare(raw, out) == 0
    output = capsys.readouterr().out
    assert "restored" in output and "unchanged" in output
    assert len(open_store(out)) == 1000
    assert not old.exists() and not partial.exists()


def test_a_running_prepare_is_named_not_waited_for(raw: Path, tmp_path: Path, capsys) -> None:
    out = tmp_path / "store"
    lock = tmp_path / ".store.lock"
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            f"import filelock, sys, time\nwith filelock.FileLock({str(lock)!r}):\n"
            "    print('held', flush=True); time.sleep(60)",
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "held\n"
        start = time.monotonic()
        assert _prepare(raw, out) == 1
        assert time.monotonic() - start < 10
        error = capsys.readouterr().err
        assert "another `webshop-gym data prepare`" in error and str(lock) in error
        assert not out.exists()
    finally:
        holder.kill()
        holder.wait()
    assert _prepare(raw, out) == 0  # the lock went with its process


def test_a_full_disk_keeps_the_previous_store(
    raw: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys
) -> None:
    out = tmp_path / "store"
    assert _prepare(raw, out) == 0
    before = _snapshot(out)

    def full(self, *args, **kwargs):
        (self.directory / "postings_docs.npy").write_bytes(b"\0" * 4096)  # half-written, then no space
        raise OSError(errno.ENOSPC, "No space left on device", str(self.directory / "postings_docs.npy"))

    monkeypatch.setattr(bm25_index.IndexBuilder, "finish", full)
    capsys.readouterr()
    assert _prepare(raw, out, "--force") == 1
    error = capsys.readouterr().err
    assert error.count("\n") == 1 and "Traceback" not in error, error
    assert "no space left" in error.lower() and "previous store is kept" in error
    assert _snapshot(out) == before
    assert [p.name for p in tmp_path.iterdir() if ".partial-" in p.name] == []
    assert len(open_store(out)) == 1000


def test_the_library_call_refuses_too(raw: Path, tmp_path: Path) -> None:
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "x").write_text("x")
    with pytest.raises(ValueError, match="not a store"):
        prepare_catalog(find_inputs(raw), tmp_path / "mine", progress=False)
    assert (tmp_path / "mine" / "x").read_text() == "x"
    # A file where the store would go is not a folder to replace either.
    (tmp_path / "file").write_text("data")
    with pytest.raises(ValueError, match="is a file"):
        prepare_catalog(find_inputs(raw), tmp_path / "file", progress=False)
    assert (tmp_path / "file").read_text() == "data"
