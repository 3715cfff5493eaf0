"""The `webshop-gym` command line: data subcommands, errors as one line, the command registry."""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from webshop_gym import cli
from webshop_gym.cli import Command, main
from webshop_gym.data.store import open_store


def test_prepare_from_a_folder_then_status(webshop_1k: Path, tmp_path: Path, monkeypatch, capsys) -> None:
    monkeypatch.setenv("WEBSHOP_GYM_DATA", str(tmp_path))
    out = tmp_path / "webshop-1k"
    assert main(["data", "prepare", "--from", str(webshop_1k), "--out", str(out), "--quiet"]) == 0
    assert f"ok: {out} (1,000 products)" in capsys.readouterr().out
    assert main(["data", "prepare", "--from", str(webshop_1k), "--out", str(out), "--quiet"]) == 0
    assert "unchanged" in capsys.readouterr().out
    assert len(open_store(out)) == 1000
    assert main(["data", "status"]) == 0
    status = capsys.readouterr().out
    assert "webshop-1k/: 1,000 products, 13 human and 6,910 synthetic goals" in status
    assert "raw/items_shuffle.json: missing" in status
    assert "interrupted" not in status


def test_status_names_what_an_interrupted_prepare_left(
    webshop_1k: Path, tmp_path: Path, monkeypatch, capsys
) -> None:
    """Issue 40: leftovers are named until the next prepare clears them."""
    monkeypatch.setenv("WEBSHOP_GYM_DATA", str(tmp_path))
    out = tmp_path / "webshop-1k"
    assert main(["data", "prepare", "--from", str(webshop_1k), "--out", str(out), "--quiet"]) == 0
    (tmp_path / ".webshop-1k.partial-99").mkdir()
    capsys.readouterr()
    assert main(["data", "status"]) == 0
    status = capsys.readouterr().out
    assert ".webshop-1k.partial-99: left by an interrupted prepare" in status
    assert main(["data", "prepare", "--from", str(webshop_1k), "--out", str(out), "--quiet"]) == 0
    assert not (tmp_path / ".webshop-1k.partial-99").exists()


def test_prepare_official_sets_from_the_raw_folder(
    webshop_1k: Path, webshop_1k_human: Path, tmp_path: Path, monkeypatch, capsys
) -> None:
    monkeypatch.setenv("WEBSHOP_GYM_DATA", str(tmp_path))
    assert main(["data", "prepare", "--quiet"]) == 1
    assert "run `webshop-gym data download` first" in capsys.readouterr().err
    raw = tmp_path / "raw"
    raw.mkdir()
    for name in ("items_shuffle_1000.json", "items_ins_v2_1000.json"):
        shutil.copy(webshop_1k / name, raw / name)
    shutil.copy(webshop_1k_human, raw / "items_human_ins.json")
    assert main(["data", "prepare", "--quiet"]) == 0  # finds the 1k files, makes webshop-1k/
    assert len(open_store(tmp_path / "webshop-1k")) == 1000
    assert main(["data", "prepare", "--set", "full", "--quiet"]) == 1
    assert "items_shuffle.json" in capsys.readouterr().err


def test_generate(tmp_path: Path, capsys) -> None:
    assert main(["data", "generate", "--products", "40", "--out", str(tmp_path / "gen"), "--quiet"]) == 0
    assert sorted(p.name for p in (tmp_path / "gen").iterdir()) == [
        "items_human_ins.json",
        "items_ins_v2.json",
        "items_shuffle.json",
    ]
    assert "webshop-gym data prepare --from" in capsys.readouterr().out


def test_generate_does_not_overwrite_files_it_finds(tmp_path: Path, capsys) -> None:
    """Issue 40: generating into the raw folder must not replace the real catalogue."""
    (tmp_path / "items_shuffle.json").write_text("[the real data]")
    assert main(["data", "generate", "--products", "5", "--out", str(tmp_path), "--quiet"]) == 1
    error = capsys.readouterr().err
    assert "items_shuffle.json" in error and "--force" in error
    assert (tmp_path / "items_shuffle.json").read_text() == "[the real data]"
    assert not (tmp_path / "items_ins_v2.json").exists()
    assert main(["data", "generate", "--products", "5", "--out", str(tmp_path), "--quiet", "--force"]) == 0
    assert (tmp_path / "items_shuffle.json").read_text().startswith("[")
    assert (tmp_path / "items_shuffle.json").read_text() != "[the real data]"


def test_bad_input_is_one_line_not_a_traceback(tmp_path: Path, capsys) -> None:
    source = tmp_path / "set"
    source.mkdir()
    (source / "items_shuffle_x.json").write_text('[{"asin": ')
    (source / "items_ins_v2_x.json").write_text("{}")
    assert main(["data", "prepare", "--from", str(source), "--out", str(tmp_path / "s"), "--quiet"]) == 1
    error = capsys.readouterr().err
    assert error.count("\n") == 1 and "items_shuffle_x.json: the file is truncated" in error


def test_a_group_without_subcommand_prints_its_help(capsys) -> None:
    assert main(["data"]) == 2
    assert "download" in capsys.readouterr().out
    assert main([]) == 2


def test_commands_are_registered_in_one_list(monkeypatch, capsys) -> None:
    def add_hello(subparsers: argparse._SubParsersAction) -> argparse.ArgumentParser:
        parser = subparsers.add_parser("hello", help="say hello")
        parser.add_argument("--name", default="shop")
        return parser

    def run_hello(args: argparse.Namespace) -> int:
        print(f"hello {args.name}")
        return 0

    monkeypatch.setattr(cli, "COMMANDS", [*cli.COMMANDS, Command(None, add_hello, run_hello)])
    assert main(["hello", "--name", "agent"]) == 0
    assert capsys.readouterr().out == "hello agent\n"


def test_module_entry_point() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "webshop_gym.cli", "data", "download", "--help"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert "--source" in result.stdout and "--no-verify" in result.stdout


@pytest.mark.parametrize("argv", [["data", "prepare", "--from", "x", "--set", "1k"]])
def test_conflicting_options(argv: list[str], capsys) -> None:
    assert main(argv) == 1
    assert "--from prepares one folder" in capsys.readouterr().err


def test_prepare_calls_an_empty_file_empty(webshop_1k: Path, tmp_path: Path, capsys) -> None:
    """Issue 28.17."""
    source = tmp_path / "set"
    source.mkdir()
    shutil.copy(webshop_1k / "items_ins_v2_1000.json", source / "items_ins_v2_1000.json")
    (source / "items_shuffle_1000.json").write_bytes(b"")
    assert main(["data", "prepare", "--from", str(source), "--out", str(tmp_path / "out"), "--quiet"]) == 1
    error = capsys.readouterr().err
    assert "items_shuffle_1000.json is empty (0 bytes)" in error and "truncated" not in error


def test_the_data_folder_is_the_platforms_cache_folder(monkeypatch) -> None:
    """Issue 28.18: platformdirs, not a hard-coded ~/.cache."""
    import platformdirs

    from webshop_gym.data.locations import data_dir

    monkeypatch.delenv("WEBSHOP_GYM_DATA", raising=False)
    monkeypatch.setattr(platformdirs, "user_cache_dir", lambda name, appauthor=None: f"/caches/{name}")
    assert data_dir() == Path("/caches/webshop-gym")
    monkeypatch.setenv("WEBSHOP_GYM_DATA", "~/elsewhere")
    assert data_dir() == Path("~/elsewhere").expanduser()


def test_preparing_needs_no_fcntl() -> None:
    """Issue 28.18: Windows has no fcntl; the prepare lock uses filelock."""
    import ast

    import webshop_gym.data.prepare as prepare

    tree = ast.parse(Path(prepare.__file__).read_text(encoding="utf-8"))
    imported = {alias.name for node in ast.walk(tree) if isinstance(node, ast.Import) for alias in node.names}
    imported |= {node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)}
    assert "fcntl" not in imported and "filelock" in imported
