"""`webshop-gym serve` and `webshop-gym replay` as commands."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
import urllib.parse
import urllib.request
from pathlib import Path

import pytest

from webshop_gym.cli import main
from webshop_gym.envs import WebShopEnv
from webshop_gym.scripted import ExpertPolicy
from webshop_gym.trajectories import TrajectoryRecorder


def record(path: Path, goals: range) -> None:
    env = WebShopEnv(split="test", observation_mode="html")
    with TrajectoryRecorder(path) as recorder:
        for goal in goals:
            observation, info = recorder.reset(env, seed=goal, goal_index=goal)
            expert = ExpertPolicy(env)
            while info["page"] != "done":
                observation, _, _, _, info = recorder.step(env, expert.act(observation, info))


def test_replay_command_reproduces_and_flags_differences(tmp_path: Path, capsys) -> None:
    record(tmp_path / "a.jsonl", range(2))
    assert main(["replay", str(tmp_path)]) == 0
    assert "2 episodes replayed, 0 failed" in capsys.readouterr().out
    lines = (tmp_path / "a.jsonl").read_text(encoding="utf-8").splitlines()
    last = json.loads(lines[-1])
    last["reward"] = 0.5
    (tmp_path / "a.jsonl").write_text("\n".join([*lines[:-1], json.dumps(last)]) + "\n", encoding="utf-8")
    assert main(["replay", str(tmp_path / "a.jsonl")]) == 1
    printed = capsys.readouterr().out
    assert "DIFFERS" in printed and "recorded 0.5" in printed and "1 failed" in printed


def test_replay_command_reports_unreadable_files(tmp_path: Path, capsys) -> None:
    (tmp_path / "bad.jsonl").write_text("not json\n{}\n", encoding="utf-8")
    assert main(["replay", str(tmp_path / "bad.jsonl"), str(tmp_path / "missing.jsonl")]) == 1
    assert capsys.readouterr().err.count("cannot read") == 2


def test_serve_runs_waitress_until_stopped(tmp_path: Path) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    command = [
        sys.executable,
        "-m",
        "webshop_gym.cli",
        "serve",
        "--port",
        str(port),
        "--log-dir",
        str(tmp_path),
    ]
    messages = tmp_path / "server.log"  # a file, not a pipe: an unread pipe can stall a server
    with messages.open("w") as sink:
        server = subprocess.Popen(command, stdout=sink, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=5) as response:
                    assert json.load(response)["status"] == "ok"
                    assert response.headers["Server"] == "webshop-gym"  # waitress, named
                break
            except OSError:
                if server.poll() is not None or time.monotonic() > deadline:
                    pytest.fail(f"the server did not start: {messages.read_text()}")
                time.sleep(0.2)
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/?goal=0", timeout=10) as response:
            assert "<h2>WebShop</h2>" in response.read().decode()
        assert list(tmp_path.glob("web-*.jsonl")) == []  # opening a page starts no session
        search = urllib.parse.urlencode({"search_query": "red shoes"}).encode()
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/?goal=0", data=search, timeout=10) as response:
            assert "Total results" in response.read().decode()  # (urllib follows the 303)
        assert len(list(tmp_path.glob("web-*.jsonl"))) == 1
        assert "WebShop on http://127.0.0.1" in messages.read_text()
    finally:
        server.terminate()
        server.wait(timeout=30)


def test_serve_without_the_data_says_what_to_do(tmp_path: Path, capsys) -> None:
    assert main(["serve", "--catalog", str(tmp_path / "nowhere"), "--no-log"]) == 2
    assert "nowhere" in capsys.readouterr().err
