"""What the web shop's recording costs and how it fails: branches without replay, per-client
limits on costly actions (issue 40.3), and a full disk (issue 40.4), through Flask's test client."""

from __future__ import annotations

import errno
import json
import os
from pathlib import Path

import pytest
from bs4 import BeautifulSoup

from webshop_gym.envs import WebShopEnv
from webshop_gym.trajectories import read_trajectories, replay
from webshop_gym.web import ServerConfig, create_app

from .test_web import PAGE_ADDRESS, act, session_of, start, write_hostile_catalogue

FORWARD, BACK = "click[next >]", "click[< prev]"


def walk(client, depth: int, goal: int = 0) -> list[str]:
    """A session ``depth`` actions deep (a search, then Next > and < Prev in turn); its pages."""
    pages = [start(client, goal=goal, query="shoes")]
    for t in range(2, depth + 1):
        page, _ = act(client, pages[-1], action=FORWARD if t % 2 == 0 else BACK)
        pages.append(page)
    return pages


def log_bytes(folder: Path) -> int:
    return sum(path.stat().st_size for path in folder.glob("*.jsonl"))


def no_space(*args, **kwargs):
    raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))


# -- issue 40.3: going back costs one step, and is limited per client ---------------------------


def test_acting_on_an_earlier_page_takes_one_step_and_writes_one(tmp_path: Path, monkeypatch) -> None:
    app = create_app(ServerConfig(catalog="mini", log_dir=tmp_path))
    client = app.test_client()
    pages = walk(client, depth=60)
    steps = []
    real_step = WebShopEnv.step

    def counted(self, action):
        steps.append(action)
        return real_step(self, action)

    monkeypatch.setattr(WebShopEnv, "step", counted)
    last_line = max(len(line) for line in next(tmp_path.glob("*.jsonl")).read_bytes().splitlines()[-2:])
    for _ in range(5):  # the same request again and again, as a flood would send it
        before = log_bytes(tmp_path)
        response = client.post(pages[-2], data={"action": FORWARD})
        assert response.status_code == 303
        assert len(steps) == 1  # no replay of the 59 steps before
        assert log_bytes(tmp_path) - before < last_line + 1000  # one step line and a short branch line
        steps.clear()
    # Every branch reads back whole and replays.
    session = session_of(app, pages[-1])
    recorded = read_trajectories(session.recorder.path)
    assert len(recorded.episodes) == 6
    for episode in recorded.episodes[1:]:
        assert episode.branch_of == (0, 59) and len(episode.steps) == 60
        assert episode.actions[:59] == recorded.episodes[0].actions[:59]
    monkeypatch.setattr(WebShopEnv, "step", real_step)
    assert all(replay(episode).matches for episode in recorded.episodes[::2])


def test_costly_actions_are_limited_per_client(tmp_path: Path) -> None:
    app = create_app(ServerConfig(catalog="mini", log_dir=tmp_path, costly_actions_per_minute=4))
    client = app.test_client()
    pages = walk(client, depth=3)  # one costly action: the start
    taken = []
    for _ in range(3):  # three branches
        taken.append(client.post(pages[0], data={"action": FORWARD}).status_code)
    assert taken == [303] * 3
    refused = client.post(pages[0], data={"action": FORWARD})
    assert refused.status_code == 429 and 1 <= int(refused.headers["Retry-After"]) <= 15
    assert "4 times a minute" in refused.get_data(as_text=True)
    refused_start = client.post("/?goal=1", data={"search_query": "shoes"})
    assert refused_start.status_code == 429
    # Going on from the newest page costs a page, and is not limited.
    newest = client.get(pages[0].rsplit("/", 2)[0] + "/").headers["Location"]
    assert act(client, newest, action=BACK)[0]
    other = app.test_client()
    other.environ_base["REMOTE_ADDR"] = "198.51.100.7"  # another visitor is not held back
    assert start(other, goal=2)


def test_a_visit_makes_a_bounded_number_of_pages(tmp_path: Path) -> None:
    app = create_app(ServerConfig(catalog="mini", log_dir=tmp_path, max_pages_per_visit=4))
    client = app.test_client()
    pages = walk(client, depth=3)  # pages 0 (the goal's search page) to 3
    response = client.post(pages[0], data={"action": FORWARD})
    assert response.status_code == 409
    assert "limit of 4 pages" in response.get_data(as_text=True) and "/?goal=0" in response.get_data(
        as_text=True
    )
    assert client.get(pages[-1]).status_code == 200


# -- issue 40.4: a record that cannot be written is an action not taken ----------------------


def test_a_step_that_cannot_be_recorded_is_not_taken(tmp_path: Path, monkeypatch) -> None:
    app = create_app(ServerConfig(catalog="mini", log_dir=tmp_path))
    client = app.test_client()
    pages = walk(client, depth=2)
    session = session_of(app, pages[-1])
    shown = client.get(pages[-1]).get_data(as_text=True)
    state, steps, log = session.env.state, session.env.steps, session.recorder.path.read_bytes()
    assert client.get("/healthz").status_code == 200
    with monkeypatch.context() as full:
        full.setattr(os, "fsync", no_space)
        for page in (pages[-1], pages[0]):  # going on, and branching from an earlier page
            response = client.post(page, data={"action": FORWARD})
            assert response.status_code == 503 and response.headers["Retry-After"] == "60"
            text = BeautifulSoup(response.data, "html.parser").get_text()
            assert "No space left on device" in text and "did not take your action" in text
            assert str(tmp_path) not in text
            if page == pages[-1]:  # the env did not move
                assert (session.env.state, session.env.steps) == (state, steps)
        health = client.get("/healthz")
        assert health.status_code == 503 and health.get_json()["status"] == "failing"
        assert "No space left on device" in health.get_json()["reason"]
    # Nothing was added: no page, no line.
    assert len(session.visit.pages) == len(pages) + 1
    assert session.recorder.path.read_bytes() == log
    assert client.get(pages[-1]).get_data(as_text=True) == shown
    # Space is back: health says so, and the same action goes on from the same page.
    assert client.get("/healthz").status_code == 200
    following, _ = act(client, pages[-1], action=FORWARD)
    [episode] = read_trajectories(session.recorder.path).episodes
    assert episode.actions == ["search[shoes]", FORWARD, FORWARD] and replay(episode).matches
    assert PAGE_ADDRESS.fullmatch(following)
    assert not list(tmp_path.glob(".healthz-*"))  # the health probe cleans up


def test_a_first_action_that_cannot_be_recorded_leaves_no_session_or_file(
    tmp_path: Path, monkeypatch
) -> None:
    app = create_app(ServerConfig(catalog="mini", log_dir=tmp_path))
    client = app.test_client()
    with monkeypatch.context() as full:
        full.setattr(os, "write", no_space)
        for _ in range(5):
            response = client.post("/?goal=0", data={"search_query": "shoes"})
            assert response.status_code == 503
    assert len(app.extensions["webshop_gym"].visitors) == 0
    assert list(tmp_path.iterdir()) == []  # no empty trajectory files
    page = start(client)
    [log] = tmp_path.glob("web-*.jsonl")
    assert [json.loads(line)["type"] for line in log.read_text().splitlines()] == ["episode", "step"]
    assert client.get(page).status_code == 200


def test_api_steps_that_cannot_be_recorded_are_not_taken(tmp_path: Path, monkeypatch) -> None:
    client = create_app(ServerConfig(catalog="mini", log_dir=tmp_path, log_api=True)).test_client()
    env_id = client.post("/api/v1/envs", json={}).get_json()["env_id"]
    first = client.post(f"/api/v1/envs/{env_id}/reset", json={"seed": 0, "options": {"goal_index": 0}})
    with monkeypatch.context() as full:
        full.setattr(os, "fsync", no_space)
        failed = client.post(f"/api/v1/envs/{env_id}/step", json={"action": "search[shoes]"})
        assert failed.status_code == 503 and "No space left" in failed.get_json()["error"]
    internals = client.get(f"/api/v1/envs/{env_id}/internals").get_json()
    assert internals["steps"] == 0 and internals["state"]["page"] == "search"
    assert client.post(f"/api/v1/envs/{env_id}/step", json={"action": "search[shoes]"}).status_code == 200
    [log] = tmp_path.glob("api-*.jsonl")
    [episode] = read_trajectories(log).episodes
    assert episode.header["observation"] == first.get_json()["observation"]
    assert episode.actions == ["search[shoes]"]


@pytest.mark.parametrize("problem", ["missing", "full"])
def test_health_reports_a_failing_log_folder(tmp_path: Path, monkeypatch, problem: str) -> None:
    log_dir = tmp_path / "logs"
    client = create_app(ServerConfig(catalog="mini", log_dir=log_dir)).test_client()
    assert log_dir.is_dir()  # made at start-up
    assert client.get("/healthz").status_code == 200
    if problem == "missing":
        log_dir.rmdir()
        expected = "missing"
    else:
        from shutil import disk_usage

        usage = disk_usage(tmp_path)
        monkeypatch.setattr("webshop_gym.web.app.shutil.disk_usage", lambda path: usage._replace(free=4096))
        expected = "disk is full (4096 bytes free"
    health = client.get("/healthz")
    assert health.status_code == 503 and expected in health.get_json()["reason"]
    assert client.get("/healthz").get_json()["visitor_sessions"] == 0
    assert create_app(ServerConfig(catalog="mini")).test_client().get("/healthz").status_code == 200


def test_the_replay_cost_benchmark_runs_and_a_branch_writes_one_step(capsys) -> None:
    """A light run of benchmarks.env.web_replay_cost (its own server process on 127.0.0.1)."""
    from benchmarks.env.web_replay_cost import main

    arguments = ["--depth", "8", "--requests", "3", "--branchers", "2", "--others", "1", "--seconds", "1"]
    assert main(arguments) == 0
    printed = capsys.readouterr().out
    row = next(line for line in printed.splitlines() if line.endswith("| 303: 3 |"))
    assert int(row.split("|")[1].strip().replace(",", "")) < 20_000  # bytes: one step, not eight
    assert "| alone |" in printed and "| 2 branching clients |" in printed


def test_the_finished_visit_page_shows_product_text_as_text(tmp_path: Path) -> None:
    """The 409 page names what was bought: escaped, like every page of the shop."""
    catalogue = write_hostile_catalogue(tmp_path / "hostile")
    client = create_app(ServerConfig(catalog=str(catalogue), split="all")).test_client()
    results, html = act(client, "/?goal=0", search_query="zyzzyva")
    asin = BeautifulSoup(html, "html.parser").select_one("button.product-card")["value"]
    item, _ = act(client, results, action=asin)
    act(client, item, action="click[buy now]")
    response = client.post(results, data={"action": asin})
    assert response.status_code == 409
    text = response.get_data(as_text=True)
    assert (
        "<script>window.pwned" not in text and "&lt;script&gt;window.pwned=1;alert(1)&lt;/script&gt;" in text
    )
    assert BeautifulSoup(text, "html.parser").find("script", src=None) is None
