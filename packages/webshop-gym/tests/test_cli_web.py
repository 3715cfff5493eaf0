"""`webshop-gym serve` and `webshop-gym replay` as commands."""

from __future__ import annotations

import argparse
import json
import socket
import subprocess
import sys
import time
import urllib.parse
import urllib.request
import warnings
from pathlib import Path

import pytest

from webshop_gym.agents.scripted import ExpertPolicy
from webshop_gym.cli import main
from webshop_gym.cli.serve import add_serve_command
from webshop_gym.envs import WebShopEnv
from webshop_gym.trajectories import TrajectoryRecorder
from webshop_gym.web.snapshots import episode_snapshot, restore_episode


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
        "--access-log",
        str(tmp_path / "access.log"),
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
            page = response.read().decode()  # (urllib follows the 303)
        assert "<title>Results for “red shoes” – WebShop</title>" in page
        assert len(list(tmp_path.glob("web-*.jsonl"))) == 1
        assert "WebShop on http://127.0.0.1" in messages.read_text()
        access = (tmp_path / "access.log").read_text().splitlines()
        assert any('"GET /healthz HTTP/1.1" 200' in line for line in access)
        assert any('"POST / HTTP/1.1" 303' in line for line in access)
    finally:
        server.terminate()
        server.wait(timeout=30)


def test_serve_without_the_data_says_what_to_do(tmp_path: Path, capsys) -> None:
    assert main(["serve", "--catalog", str(tmp_path / "nowhere"), "--no-log"]) == 2
    assert "nowhere" in capsys.readouterr().err


def test_serve_help_shows_the_defaults(capsys) -> None:
    """Issue 28.12."""
    from webshop_gym.web.server import DEFAULT_THREADS

    with pytest.raises(SystemExit) as exited:
        main(["serve", "--help"])
    assert exited.value.code == 0
    shown = " ".join(capsys.readouterr().out.split())
    for default in ("mini", "127.0.0.1", "8000", f"{DEFAULT_THREADS}", "test", "100", "10000", "3600.0"):
        assert f"(default: {default})" in shown, default
    assert "(default: None)" not in shown and "(default: False)" not in shown


def occupied_port():
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()
    return listener


@pytest.mark.parametrize("debug", [False, True])
def test_serve_on_a_port_in_use_says_so_in_one_line(capsys, debug: bool) -> None:
    """Issue 28.12: no "WebShop on ..." and no traceback, one line that names the way out."""
    with occupied_port() as listener:
        port = listener.getsockname()[1]
        arguments = ["serve", "--port", str(port), "--no-log", "--no-access-log"] + ["--debug"] * debug
        assert main(arguments) == 2
    err = capsys.readouterr().err
    problems = [line for line in err.splitlines() if not line.startswith("loading catalogue")]
    assert problems == [
        f"webshop-gym serve: cannot listen on 127.0.0.1:{port}: the port is in use (another server?); "
        "pass --port with a free port (or --host)"
    ]


def test_serve_refuses_the_debugger_on_a_reachable_address(capsys) -> None:
    assert main(["serve", "--debug", "--host", "0.0.0.0", "--no-log"]) == 2
    err = capsys.readouterr().err
    assert "--debug" in err and "--host 0.0.0.0" in err and "loading catalogue" not in err


def test_serve_the_1k_set_falls_back_to_its_synthetic_goals(webshop_1k: Path, monkeypatch, capsys) -> None:
    """Issue 28.11: the 1k set has no human test goal; `serve --catalog 1k` still serves."""
    served = []
    monkeypatch.setattr("webshop_gym.web.server.serve", lambda app, **kwargs: served.append(app))
    assert main(["serve", "--catalog", str(webshop_1k), "--no-log", "--no-access-log"]) == 0
    assert served[0].extensions["webshop_gym"].config.goals == "synthetic"
    assert "visitors get synthetic goals (pass --goals human --split all" in capsys.readouterr().err
    # Asked for explicitly, the empty split is an error that names the flags.
    assert main(["serve", "--catalog", str(webshop_1k), "--goals", "human", "--no-log"]) == 2
    err = capsys.readouterr().err
    assert "pass another --split (all, train, dev, test) or --goals synthetic" in err
    assert "goals='synthetic'" not in err
    human = ["--goals", "human", "--split", "all"]
    assert main(["serve", "--catalog", str(webshop_1k), *human, "--no-log", "--no-access-log"]) == 0


def test_serve_without_a_named_catalogue_says_what_to_run(tmp_path: Path, monkeypatch, capsys) -> None:
    monkeypatch.setenv("WEBSHOP_GYM_DATA", str(tmp_path))
    assert main(["serve", "--catalog", "1k", "--no-log"]) == 2
    err = capsys.readouterr().err
    assert "webshop-gym data download --set 1k" in err and "webshop-gym data prepare --set 1k" in err
    assert "--catalog FOLDER" in err and "gymnasium.make" not in err and "catalog=" not in err


def test_default_allowed_hosts_follow_the_listening_address() -> None:
    from webshop_gym.cli.serve import default_allowed_hosts
    from webshop_gym.web.config import LOOPBACK_HOSTS

    assert default_allowed_hosts("127.0.0.1") == LOOPBACK_HOSTS == default_allowed_hosts("::1")
    assert default_allowed_hosts("192.0.2.5") == (*LOOPBACK_HOSTS, "192.0.2.5")
    assert socket.gethostname() in default_allowed_hosts("0.0.0.0")


def test_replay_command_replays_branches_and_skips_a_torn_tail(tmp_path: Path, capsys) -> None:
    """Issues 40.3 and 40.4: a branch replays whole; a torn last line is skipped, said once."""
    path = tmp_path / "web.jsonl"
    env = WebShopEnv(split="test", observation_mode="html")
    recorder = TrajectoryRecorder(path, source="web")
    recorder.reset(env, seed=1, goal_index=1)
    recorder.step(env, "search[shoes]")
    after_search = episode_snapshot(env)
    recorder.step(env, "click[next >]")
    restore_episode(env, after_search)
    observation, reward, terminated, truncated, info = env.step("click[back to search]")
    recorder.record_step(
        "click[back to search]", observation, reward, terminated, truncated, info, branch_of=(0, 1)
    )
    recorder.close()
    path.write_bytes(path.read_bytes() + b'{"type": "step", "t": 3, "act')  # a crash while writing
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the command says it in its own words, not as a warning
        assert main(["replay", str(path)]) == 0
    printed = capsys.readouterr().out
    assert "skipped a torn last line" in printed
    assert "episode 2 (episode 1 to step 1, then its own): goal 1, 2 steps" in printed
    assert "2 episodes replayed, 0 failed" in printed


def test_serve_sets_the_limits_on_costly_actions(monkeypatch) -> None:
    """Issue 40.3: --costly-actions-per-minute (0: none, e.g. behind a proxy) and --max-pages-per-visit."""
    served = []
    monkeypatch.setattr("webshop_gym.web.server.serve", lambda app, **kwargs: served.append(app))
    quiet = ["--no-log", "--no-access-log"]
    assert main(["serve", *quiet]) == 0
    assert main(["serve", *quiet, "--costly-actions-per-minute", "0", "--max-pages-per-visit", "50"]) == 0
    assert main(["serve", *quiet, "--costly-actions-per-minute", "7", "--audience", "crowd"]) == 0
    configs = [app.extensions["webshop_gym"].config for app in served]
    assert [c.audience for c in configs] == ["research", "research", "crowd"]
    assert [(c.costly_actions_per_minute, c.max_pages_per_visit) for c in configs] == [
        (120, 300),
        (None, 50),
        (7, 300),
    ]


def test_serve_offers_the_configs_choices() -> None:
    """The CLI spells the choices out (importing the config brings Flask); they must stay the config's."""
    from webshop_gym.web.config import AUDIENCES, PRODUCT_IMAGES

    parser = argparse.ArgumentParser()
    serve = add_serve_command(parser.add_subparsers())
    choices = {action.dest: action.choices for action in serve._actions}
    assert tuple(choices["audience"]) == AUDIENCES
    assert tuple(choices["product_images"]) == tuple(PRODUCT_IMAGES)
