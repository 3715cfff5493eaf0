"""`WebShop-Remote-v0` beyond the registry checks of test_envs.py: errors and server sharing."""

from __future__ import annotations

import base64
import http.server
import pickle
import socket
import subprocess
import sys
import textwrap
import threading
import time

import gymnasium as gym
import pytest

import webshop_gym  # noqa: F401
from webshop_gym.envs import WebShopEnv
from webshop_gym.web import ServerConfig, create_app
from webshop_gym.web.client import RemoteEnvError, RemoteEnvWarning, RemoteWebShopEnv
from webshop_gym.web.server import ServerThread


@pytest.fixture(scope="module")
def server():
    with ServerThread(create_app(ServerConfig(catalog="mini"))) as running:
        yield running


def unused_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


# Run first in a subprocess: Flask, waitress and werkzeug cannot be imported, as without the web extra.
BLOCK_THE_WEB_EXTRA = """
import importlib.abc, sys

class WithoutTheWebExtra(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.partition(".")[0] in ("flask", "waitress", "werkzeug"):
            raise ModuleNotFoundError(f"No module named {name!r} (blocked by the test)")
        return None

sys.meta_path.insert(0, WithoutTheWebExtra())
"""


def test_the_client_env_needs_no_flask(server) -> None:
    """`WebShop-Remote-v0` imports and plays without the web extra; only the server needs Flask."""
    code = BLOCK_THE_WEB_EXTRA + textwrap.dedent(
        f"""
        import gymnasium as gym
        import webshop_gym.web.client

        env = gym.make("WebShop-Remote-v0", server_url={server.url!r}, split="test")
        observation, info = env.reset(seed=0, options={{"goal_index": 0}})
        assert observation.startswith("WebShop [SEP] Instruction: [SEP] "), observation
        assert env.step("search[shoes]")[-1]["page"] == "results"
        env.close()
        try:
            from webshop_gym.web import create_app
        except ImportError as error:
            assert "pip install 'webshop-gym[web]'" in str(error), error
        else:
            raise AssertionError("create_app imported without Flask")
        assert not {{"flask", "waitress", "werkzeug"}} & set(sys.modules)
        """
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=120)


def test_unreachable_server_says_how_to_start_one() -> None:
    with pytest.raises(RemoteEnvError, match="webshop-gym serve"):
        RemoteWebShopEnv(server_url=f"http://127.0.0.1:{unused_port()}", timeout=5)


def test_server_url_from_the_environment(server, monkeypatch) -> None:
    monkeypatch.setenv("WEBSHOP_GYM_SERVER", server.url)
    env = gym.make("WebShop-Remote-v0", split="test")
    assert env.unwrapped.server_url == server.url
    env.close()


@pytest.mark.parametrize("url", ["127.0.0.1:8000", "ftp://host/", "http://"])
def test_bad_server_url(url: str) -> None:
    with pytest.raises(ValueError, match="server_url must look like"):
        RemoteWebShopEnv(server_url=url)


def test_errors_match_a_local_env(server) -> None:
    env = RemoteWebShopEnv(server_url=server.url, split="test")
    with pytest.raises(gym.error.ResetNeeded):
        env.step("search[shoes]")
    with pytest.raises(ValueError, match="goal_index"):
        env.reset(options={"goal_index": 10_000})
    with pytest.raises(ValueError, match="must be a dict"):
        env.reset(options=["goal_index"])
    with pytest.raises(ValueError, match="got True"):
        env.reset(options={"goal_index": True})
    with pytest.raises(RemoteEnvError, match="observation_mode"):
        RemoteWebShopEnv(server_url=server.url, observation_mode="pixels")
    env.close()
    with pytest.raises(gym.error.ClosedEnvironmentError):
        env.step("search[shoes]")


def test_an_env_the_server_dropped_is_reported_and_reset_makes_a_new_one(server) -> None:
    """Issue 28.13 (idle expiry): step says what happened; reset() makes a new env, with a warning."""
    env = RemoteWebShopEnv(server_url=server.url, split="test")
    env.reset(seed=0)
    server.app.extensions["webshop_gym"].api_envs.remove(env.env_id)
    with pytest.raises(RemoteEnvError, match=r"no longer has env .* call reset\(\)"):
        env.step("search[shoes]")
    with pytest.warns(RemoteEnvWarning, match="reset made a new env there"):
        observation, info = env.reset(seed=1, options={"goal_index": 3})
    assert (observation, info) == WebShopEnv(split="test").reset(seed=1, options={"goal_index": 3})
    assert env.step("search[shoes]")[4]["page"] == "results"
    env.close()


def server_on(port: int) -> ServerThread:
    """A new server process's stand-in on the port an earlier one used (it may take a moment to free)."""
    deadline = time.monotonic() + 20
    while True:
        try:
            return ServerThread(create_app(ServerConfig(catalog="mini")), port=port)
        except OSError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.2)


def test_reset_after_a_server_restart_makes_a_new_env() -> None:
    """Issue 28.13 (restart): the same address, a new server process with no envs."""
    with ServerThread(create_app(ServerConfig(catalog="mini"))) as first:
        url, port = first.url, int(first.url.rsplit(":", 1)[1])
        env = RemoteWebShopEnv(server_url=url, split="test")
        env.reset(seed=0)
    with server_on(port) as second:
        assert second.url == url
        with pytest.raises(RemoteEnvError, match="no longer has env"):
            env.step("search[shoes]")
        with pytest.warns(RemoteEnvWarning):
            env.reset(seed=0)
        assert env.step("search[shoes]")[4]["page"] == "results"
        env.close()
        assert len(second.app.extensions["webshop_gym"].api_envs) == 0


def test_pickling_leaves_nothing_on_the_server(server) -> None:
    """Issue 28.14: 1 env + 50 pickles is 1 env on the server; copies continue the episode."""
    envs = server.app.extensions["webshop_gym"].api_envs
    before = len(envs)
    env = RemoteWebShopEnv(server_url=server.url, split="test", reward="shaped")
    env.reset(seed=4)
    env.step("search[red shoes]")
    pickles = [pickle.dumps(env) for _ in range(50)]
    assert len(envs) == before + 1
    copy = pickle.loads(pickles[-1])
    assert len(envs) == before + 2 and copy.env_id != env.env_id
    assert copy.state == env.state and copy.goal == env.goal and copy.steps == env.steps
    for action in ("click[next >]", "click[back to search]", "search[shoes]"):
        assert copy.step(action) == env.step(action)
    assert copy.reset()[1]["instruction"] == env.reset()[1]["instruction"]  # the server's generator too
    copy.close()
    env.close()
    assert len(envs) == before


def test_a_pickle_restores_on_a_restarted_server() -> None:
    with ServerThread(create_app(ServerConfig(catalog="mini"))) as first:
        port = int(first.url.rsplit(":", 1)[1])
        env = RemoteWebShopEnv(server_url=first.url, split="test")
        env.reset(seed=2)
        first_step = env.step("search[leggings]")
        saved = pickle.dumps(env)
        expected = env.step("click[next >]")
    with server_on(port):
        copy = pickle.loads(saved)
        assert copy.state is not None and copy.steps == 1 and first_step[4]["page"] == "results"
        assert copy.step("click[next >]") == expected
        copy.close()


@pytest.mark.parametrize("suffix", ["/api/v1", "/api/v1/", "/"])
def test_the_api_address_works_as_server_url(server, suffix: str) -> None:
    """Issue 28.15: the URL the server prints for the API is accepted."""
    env = RemoteWebShopEnv(server_url=server.url + suffix, split="test")
    assert env.server_url == server.url
    assert env.reset(seed=0)[1]["page"] == "search"
    env.close()


def test_a_server_url_with_a_wrong_path_says_what_to_pass(server) -> None:
    with pytest.raises(RemoteEnvError, match=r"is server_url the address `webshop-gym serve` prints"):
        RemoteWebShopEnv(server_url=server.url + "/shop")


def test_a_malformed_snapshot_is_refused(server) -> None:
    client = server.app.test_client()
    env_id = client.post("/api/v1/envs", json={"split": "test"}).get_json()["env_id"]
    client.post(f"/api/v1/envs/{env_id}/reset", json={"seed": 0})
    good = client.get(f"/api/v1/envs/{env_id}/snapshot").get_json()
    bad_asin = {**good, "state": {**good["state"], "asin": "B000NOSUCH", "page": "item"}}
    for snapshot, message in (
        ({**good, "steps": 10_000}, "steps must be an int"),
        ({**good, "goal_index": True}, "goal_index must be null or an int"),
        ({**good, "np_random": {"bit_generator": "MT19937"}}, "np_random is not a PCG64 state"),
        (bad_asin, "not in catalogue 'mini'"),
        ({**good, "state": {**good["state"], "page": "item"}}, "needs an asin"),
    ):
        answer = client.post(f"/api/v1/envs/{env_id}/restore", json=snapshot)
        assert answer.status_code == 400 and message in answer.get_json()["error"], answer.get_json()
    assert client.post(f"/api/v1/envs/{env_id}/restore", json=good).status_code == 200


def test_render_and_html_mode_equal_a_local_env(server) -> None:
    remote = RemoteWebShopEnv(
        server_url=server.url, split="test", observation_mode="html", render_mode="ansi"
    )
    local = WebShopEnv(split="test", observation_mode="html", render_mode="ansi")
    assert remote.reset(seed=9) == local.reset(seed=9)
    assert remote.step("search[red dress]") == local.step("search[red dress]")
    assert remote.render() == local.render()
    remote.close()


def test_many_envs_share_one_server_catalogue(server) -> None:
    envs = [RemoteWebShopEnv(server_url=server.url, split="test") for _ in range(20)]
    instructions = [
        env.reset(seed=0, options={"goal_index": i})[1]["instruction"] for i, env in enumerate(envs)
    ]
    local = WebShopEnv(split="test")
    assert instructions == [local.reset(options={"goal_index": i})[1]["instruction"] for i in range(20)]
    for env in envs:
        env.close()
    assert len(server.app.extensions["webshop_gym"].api_envs) < 20


class FakeServer:
    """A stand-in server on 127.0.0.1 that answers every request with ``body`` (and records headers)."""

    def __init__(self) -> None:
        self.status, self.body, self.headers_seen = 200, b"{}", []
        fake = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def _answer(self) -> None:
                fake.headers_seen.append(dict(self.headers))
                length = int(self.headers.get("Content-Length") or 0)
                self.rfile.read(length)
                self.send_response(fake.status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(fake.body)))
                self.end_headers()
                self.wfile.write(fake.body)

            do_GET = do_POST = do_DELETE = _answer

            def log_message(self, *args: object) -> None:
                pass

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def fake():
    server = FakeServer()
    yield server
    server.close()


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (b"<html>proxy login</html>", r"answered HTTP 200 with a body that is not JSON \('<html>proxy login"),
        (b'{"env_id": NaN}', "not JSON .*NaN"),
        (b"[1, 2]", "answered a JSON list, not an object"),
        (b'{"other": 1}', "lacks 'env_id'"),
    ],
)
def test_an_answer_that_is_not_the_apis_is_a_clear_error(fake, body: bytes, message: str) -> None:
    fake.body = body
    with pytest.raises(RemoteEnvError, match=message) as raised:
        RemoteWebShopEnv(server_url=fake.url, timeout=5)
    assert "is server_url the address `webshop-gym serve` prints" in str(raised.value)


def test_an_oversized_answer_is_refused_not_read(fake, monkeypatch) -> None:
    monkeypatch.setattr("webshop_gym.web.client.MAX_RESPONSE_BYTES", 1000)
    fake.body = b'{"env_id": "' + b"x" * 5000 + b'"}'
    with pytest.raises(RemoteEnvError, match="answer is 5014 bytes, more than the 1000 a WebShop answer"):
        RemoteWebShopEnv(server_url=fake.url, timeout=5)


def test_credentials_in_the_server_url_are_sent_but_never_shown(fake) -> None:
    fake.body = b'{"env_id": "' + b"a" * 43 + b'"}'
    env = RemoteWebShopEnv(server_url=f"http://agent:s3cret-token@{fake.url[7:]}", timeout=5)
    sent = fake.headers_seen[-1]["Authorization"]
    assert sent == "Basic " + base64.b64encode(b"agent:s3cret-token").decode()
    assert env.server_url == fake.url and "s3cret" not in repr(env.__dict__) + repr(vars(env._client))
    fake.status, fake.body = 500, b'{"error": "boom", "status": 500}'
    with pytest.raises(RemoteEnvError) as raised:
        env.reset(seed=0)
    assert "s3cret" not in str(raised.value) and "boom" in str(raised.value)
    port = unused_port()
    with pytest.raises(RemoteEnvError) as unreachable:
        RemoteWebShopEnv(server_url=f"http://agent:s3cret-token@127.0.0.1:{port}", timeout=5)
    assert "s3cret" not in str(unreachable.value) and f"http://127.0.0.1:{port}" in str(unreachable.value)
