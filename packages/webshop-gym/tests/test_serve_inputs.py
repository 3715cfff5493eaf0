"""`webshop-gym serve` given paths that would block it (issue 40): it says so and exits.

Each run is a subprocess with a time limit, so a server that hangs fails the test instead of
hanging it.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from webshop_gym.cli import main


def serve(*arguments: str) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "webshop_gym.cli", "serve", "--port", "1", *arguments]
    return subprocess.run(command, capture_output=True, text=True, timeout=60)


@pytest.fixture
def catalogue_with_a_fifo(tmp_path: Path, webshop_1k: Path, webshop_1k_human: Path) -> Path:
    folder = tmp_path / "catalogue"
    folder.mkdir()
    shutil.copy(webshop_1k / "items_ins_v2_1000.json", folder / "items_ins_v2_1000.json")
    shutil.copy(webshop_1k_human, folder / "items_human_ins_1000.json")
    os.mkfifo(folder / "items_shuffle_1000.json")  # read, it would block until a writer comes
    return folder


@pytest.mark.parametrize("protocol", ["web", "openenv"])
def test_a_catalogue_with_a_fifo_is_refused_at_once(catalogue_with_a_fifo: Path, protocol: str) -> None:
    extra = ["--no-log"] if protocol == "web" else []
    result = serve("--protocol", protocol, "--catalog", str(catalogue_with_a_fifo), *extra)
    assert result.returncode == 2
    assert "items_shuffle_1000.json is a FIFO (named pipe)" in result.stderr
    assert "a catalogue is a folder of regular files" in result.stderr


def test_a_link_to_a_device_in_the_catalogue_is_refused(tmp_path: Path, capsys) -> None:
    folder = tmp_path / "catalogue"
    folder.mkdir()
    (folder / "items_shuffle_1000.json").symlink_to("/dev/zero")  # read, it never ends
    assert main(["serve", "--catalog", str(folder), "--no-log"]) == 2
    assert "items_shuffle_1000.json is a device" in capsys.readouterr().err


def test_a_device_as_the_catalogue_is_refused(capsys) -> None:
    assert main(["serve", "--catalog", "/dev/zero", "--no-log"]) == 2
    assert "--catalog /dev/zero: /dev/zero is a device" in capsys.readouterr().err


def test_an_access_log_that_is_a_fifo_is_refused(tmp_path: Path) -> None:
    fifo = tmp_path / "access.log"
    os.mkfifo(fifo)  # opened for writing, it would block until a reader comes
    result = serve("--access-log", str(fifo), "--no-log")
    assert result.returncode == 2
    assert f"--access-log {fifo}: is a FIFO (named pipe); pass a file" in result.stderr


def test_a_log_dir_that_is_a_file_is_refused(tmp_path: Path, capsys) -> None:
    taken = tmp_path / "taken"
    taken.write_text("")
    assert main(["serve", "--log-dir", str(taken)]) == 2
    assert "exists and is not a folder" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("option", "value", "reason"),
    [
        ("--max-sessions", "0", "must be at least 1"),
        ("--idle-timeout", "nan", "must be a number of seconds above 0"),
        ("--request-timeout", "inf", "must be a number of seconds above 0"),
        ("--max-connections-per-client", "-1", "must be 0 or more"),
    ],
)
def test_limits_out_of_range_are_refused(option: str, value: str, reason: str, capsys) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["serve", option, value])
    assert exited.value.code == 2
    assert reason in capsys.readouterr().err
