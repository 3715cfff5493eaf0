"""The ``webshop_env`` package (OpenEnv's layout), the MCP tools and the TRL bridge, against the real library.

AutoEnv and ``openenv validate`` read the installed package and its folder; the MCP tools and
`WebShopServerToolEnv` play on a server in this process and must answer what a local env does.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import uvicorn
import webshop_env
from openenv import AutoAction, AutoEnv
from openenv.auto._discovery import get_discovery
from openenv.core.mcp_client import MCPToolClient

from webshop_gym.agents.scripted import ExpertPolicy
from webshop_gym.envs import WebShopEnv as GymWebShopEnv
from webshop_gym.integrations.openenv import (
    ENDED,
    NO_EPISODE,
    BadResetError,
    SessionConfig,
    WebShopAction,
    WebShopEnvironment,
    WebShopServerToolEnv,
)

OPENENV = Path(__file__).resolve().parents[2] / "openenv"
ENV_FOLDER = OPENENV / "webshop_env"
sys.path.insert(0, str(OPENENV))
from prepare import vendor_webshop_gym  # noqa: E402  (packages/webshop-gym/openenv/prepare.py)


@pytest.fixture(scope="module")
def server_url() -> Iterator[str]:
    """The image's app (webshop_env.server.app: the bundled catalogue, test split) on uvicorn, in a thread."""
    from webshop_env.server.app import app

    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=0, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 60
    while not server.started:
        assert thread.is_alive() and time.monotonic() < deadline, "uvicorn did not start"
        time.sleep(0.05)
    port = server.servers[0].sockets[0].getsockname()[1]
    yield f"http://127.0.0.1:{port}"
    server.should_exit = True
    thread.join(timeout=30)


def expert_actions(goal_index: int) -> list[str]:
    """The scripted expert's actions for a goal of the test split, on a local env."""
    env = GymWebShopEnv(catalog="mini", split="test")
    policy = ExpertPolicy(env)
    observation, info = env.reset(options={"goal_index": goal_index})
    actions, done = [], False
    while not done:
        actions.append(policy.act(observation, info))
        observation, _, terminated, truncated, info = env.step(actions[-1])
        done = terminated or truncated
    return actions


class LocalTools:
    """What a tool call answers, from a local env: the page after why the action was invalid, a last
    line at the last step, and nothing more once the episode is over (as webshop_gym.integrations.trl)."""

    def __init__(self, goal_index: int) -> None:
        self.env = GymWebShopEnv(catalog="mini", split="test")
        self.first_page = "\n\n" + self.env.reset(options={"goal_index": goal_index})[0]
        self.reward, self.done = 0.0, False

    def call(self, name: str, argument: str) -> str:
        if self.done:
            return ENDED
        page, reward, terminated, truncated, info = self.env.step(f"{name}[{argument}]")
        self.reward += reward
        self.done = terminated or truncated
        text = f"{info['action_error']}\n\n{page}" if info["action_error"] else page
        return text + (f"\n\nNo actions left. {ENDED}" if truncated else "")


def as_tool_call(action: str) -> tuple[str, str]:
    """``search[x]`` -> ("search", "x"): the tool and its one argument."""
    name, argument = action.split("[", 1)
    return name, argument[:-1]


def test_autoenv_finds_the_package_by_its_name() -> None:
    get_discovery().clear_cache()  # the file cache in /tmp may predate this install
    assert AutoEnv.get_env_class("webshop") is webshop_env.WebShopEnv
    assert AutoAction.from_env("webshop") is webshop_env.WebShopAction is WebShopAction
    info = AutoEnv.get_env_info("webshop")
    assert (info["package"], info["module"], info["default_image"]) == (
        "openenv-webshop-env",
        "webshop_env.client",
        "webshop-env:latest",
    )


def test_the_images_app_serves_the_bundled_catalogues_test_split(server_url: str) -> None:
    """server/app.py, the app of openenv.yaml and the image: resets naming no split play the test split."""
    with webshop_env.WebShopEnv(base_url=server_url).sync() as env:
        observation = env.reset(goal_index=0).observation
    local = GymWebShopEnv(catalog="mini", split="test")
    assert observation.info["instruction"] == local.goal_at(0).instruction_text
    assert observation.info["steps_left"] == 15


def test_autoenv_connects_to_a_running_server_and_plays_the_local_envs_episode(server_url: str) -> None:
    get_discovery().clear_cache()
    local = GymWebShopEnv(catalog="mini", split="test")
    page, _ = local.reset(options={"goal_index": 3})
    with AutoEnv.from_env("webshop", base_url=server_url).sync() as env:
        assert type(env._async) is webshop_env.WebShopEnv
        assert env.reset(goal_index=3).observation.text == page
        for action in expert_actions(3):
            result = env.step(WebShopAction(action=action))
            page, reward, terminated, truncated, _ = local.step(action)
            assert (result.observation.text, result.reward, result.done) == (
                page,
                reward,
                terminated or truncated,
            )
    assert result.done and result.reward == 1.0


def test_the_folder_passes_openenv_validate() -> None:
    checked = subprocess.run(
        [sys.executable, "-m", "openenv.cli", "validate", "--json", str(ENV_FOLDER)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert checked.returncode == 0 and '"passed": true' in checked.stdout, checked.stdout + checked.stderr


def test_the_folder_alone_is_the_images_build_context_and_its_lock_is_current(tmp_path: Path) -> None:
    """What the Dockerfile does short of docker: the folder by itself, vendor/ written, uv.lock current
    (``uv lock --check``) and installable as the image installs it (``uv sync --frozen``, dry run)."""
    context = tmp_path / "webshop_env"
    shutil.copytree(
        ENV_FOLDER, context, ignore=shutil.ignore_patterns("vendor", "build", "*.egg-info", ".venv")
    )
    dockerfile = (context / "server" / "Dockerfile").read_text()
    assert "ARG BASE_IMAGE=ghcr.io/meta-pytorch/openenv-base:latest" in dockerfile
    assert "COPY . /app/env" in dockerfile and ".." not in dockerfile.replace("...", "")
    vendor_webshop_gym(context)
    uv = shutil.which("uv", path=str(Path(sys.executable).parent)) or "uv"
    checked = subprocess.run(
        [uv, "lock", "--check", "--directory", str(context)], capture_output=True, text=True
    )
    assert checked.returncode == 0, (
        f"{checked.stderr}\nuv.lock is stale: run `nox -s build -- openenv` and commit it"
    )
    synced = subprocess.run(
        [uv, "sync", "--frozen", "--no-dev", "--no-editable", "--dry-run", "--directory", str(context)],
        capture_output=True,
        text=True,
    )
    assert synced.returncode == 0, synced.stderr
    assert f"webshop-gym @ file://{context}/vendor/webshop-gym" in synced.stderr
    assert "openenv-core==" in synced.stderr


def test_a_copy_that_prepare_did_not_write_is_left_alone(tmp_path: Path) -> None:
    (tmp_path / "vendor" / "webshop-gym").mkdir(parents=True)
    with pytest.raises(FileExistsError, match="was not written by this script"):
        vendor_webshop_gym(tmp_path)


def test_the_mcp_tools_play_the_episode_and_answer_the_local_tool_envs_pages(server_url: str) -> None:
    local = LocalTools(5)
    with webshop_env.WebShopEnv(base_url=server_url).sync() as env:
        assert env.call_tool("click", button="buy now") == NO_EPISODE
        env.reset(goal_index=5)
        tools = {tool.name: tool for tool in env.list_tools()}
        assert set(tools) == {"search", "click"}
        assert tools["search"].input_schema["required"] == ["query"]
        calls = [("click", "buy now"), *map(as_tool_call, expert_actions(5)), ("click", "buy now")]
        for name, argument in calls:
            remote = env.call_tool(name, **{"query" if name == "search" else "button": argument})
            assert remote == local.call(name, argument)
        assert remote == ENDED
        state = env.state()
        assert (state.episode_return, state.done, state.page) == (local.reward, True, "done")


def test_openenvs_own_mcp_client_lists_the_tools_at_mcp(server_url: str) -> None:
    with MCPToolClient(base_url=server_url).sync() as client:
        client._async.use_production_mode = True
        assert sorted(tool.name for tool in client.list_tools()) == ["click", "search"]
        assert client.call_tool("search", query="shoes") == NO_EPISODE  # its own session: no reset there


def test_the_trl_bridge_answers_what_the_local_tool_env_does(server_url: str) -> None:
    row = {
        "prompt": [{"role": "user", "content": "..."}],
        "catalog": "mini",
        "goals": "human",
        "split": "test",
    }
    remote = WebShopServerToolEnv(base_url=server_url)
    for goal_index in (0, 7):
        local = LocalTools(goal_index)
        assert remote.reset(**row, goal_index=goal_index) == local.first_page
        calls = [("click", "next >"), *map(as_tool_call, expert_actions(goal_index)), ("click", "buy now")]
        for name, argument in calls:
            assert getattr(remote, name)(argument) == local.call(name, argument)
            assert (remote.get_reward(), remote.done) == (local.reward, local.done)
        assert remote.get_reward() == 1.0


def test_the_trl_bridge_runs_out_of_steps_as_the_env_does(server_url: str) -> None:
    remote, local = WebShopServerToolEnv(base_url=server_url), LocalTools(2)
    remote.reset(split="test", goal_index=2)
    answers = [remote.click("< prev") for _ in range(16)]
    assert answers == [local.call("click", "< prev") for _ in range(16)]
    assert answers[14].endswith(f"No actions left. {ENDED}") and answers[15] == ENDED
    assert (remote.get_reward(), remote.done) == (0.0, True)


def test_the_trl_bridge_refuses_a_row_of_another_catalogue(server_url: str) -> None:
    remote = WebShopServerToolEnv(base_url=server_url)
    with pytest.raises(RuntimeError, match="this server plays catalog 'mini', not '1k'"):
        remote.reset(catalog="1k", split="test", goal_index=0)
    with pytest.raises(ValueError, match="goal_dataset"):
        remote.reset(prompt="...")
    with pytest.raises(RuntimeError, match="reset"):
        WebShopServerToolEnv(base_url=server_url).search("shoes")


def test_a_server_of_another_catalogue_plays_its_own_goals() -> None:
    """The reset's catalogue check compares with the server's settings, not a constant."""
    session = WebShopEnvironment(SessionConfig(catalog="mini", goals="synthetic", split="test"))
    with pytest.raises(BadResetError, match="this server plays goals 'synthetic', not 'human'"):
        session.reset(goals="human", goal_index=0)
    assert session.reset(goals="synthetic", goal_index=0).info["goal_index"] == 0


def test_an_import_without_the_extra_says_what_to_install() -> None:
    blocked = "import sys; sys.modules['openenv'] = None; import webshop_gym.integrations.openenv"
    imported = subprocess.run([sys.executable, "-c", blocked], capture_output=True, text=True, timeout=120)
    assert imported.returncode == 1
    expected = "runs on openenv-core, and openenv.core is not installed: pip install 'webshop-gym[openenv]'"
    assert expected in imported.stderr
