"""A light run of benchmarks.env.web_load: concurrent sessions over real sockets stay apart,
and a flood of anonymous GETs leaves room for the next visitor.

The full load test (10,000 anonymous GETs, then 50 sessions x 20 steps, with the server in
its own process) is ``python -m benchmarks.env.web_load``; its figures are in
benchmarks/results/web_load.md.
"""

from __future__ import annotations

import pytest

from benchmarks.env.web_load import main
from webshop_gym.web import ServerConfig, create_app
from webshop_gym.web.server import ServerThread


@pytest.fixture
def server(tmp_path):
    app = create_app(ServerConfig(catalog="mini", split="test", log_dir=tmp_path))
    with ServerThread(app) as running:
        yield running


def test_concurrent_sessions_get_their_own_pages(server, tmp_path, capsys) -> None:
    assert (
        main(["--sessions", "16", "--steps", "10", "--anonymous-gets", "0", "--server-url", server.url]) == 0
    )
    printed = capsys.readouterr().out
    assert "16 concurrent sessions x 10 steps" in printed and "; 0 errors" in printed
    assert "| web (post + page) | 80 |" in printed and "| api (step) | 80 |" in printed
    assert len(list(tmp_path.glob("web-*.jsonl"))) == 8  # every web session recorded


def test_the_load_test_catches_a_server_that_mixes_sessions_up(server, capsys) -> None:
    visitors = server.app.extensions["webshop_gym"].visitors
    honest_get = visitors.get
    first: list = []

    def mixed_up(session_id: str):
        session = honest_get(session_id)
        if session is not None and not first:
            first.append(session)
        return first[0] if first else session

    visitors.get = mixed_up
    assert main(["--sessions", "6", "--steps", "4", "--anonymous-gets", "0", "--server-url", server.url]) == 1
    printed = capsys.readouterr().out
    assert "error: session" in printed and "; 0 errors" not in printed


def test_ten_thousand_anonymous_gets_then_a_new_visitor_is_served(tmp_path, capsys) -> None:
    """Issue 28.3: front-page GETs cost no session, so a store of 4 still serves the visitors after them."""
    app = create_app(ServerConfig(catalog="mini", split="test", log_dir=tmp_path, max_sessions=4))
    with ServerThread(app) as running:
        arguments = [
            "--sessions",
            "2",
            "--steps",
            "4",
            "--anonymous-gets",
            "10000",
            "--server-url",
            running.url,
        ]
        assert main(arguments) == 0
    printed = capsys.readouterr().out
    assert "10000 anonymous GETs of / and /?goal=i from one client" in printed
    assert "no sessions created" in printed and "; 0 errors" in printed
    assert "| web (post + page) | 4 |" in printed  # the visitor after the flood was served
    [log] = tmp_path.glob("web-*.jsonl")  # one file: the visitor's, none for the flood
    assert log.stat().st_size > 0
