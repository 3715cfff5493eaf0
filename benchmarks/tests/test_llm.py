"""The llm agent: a tiny local transformers model, and the HTTP client against a local stub server.

The answer pattern, the budget rule and the HTTP client's own checks are tested with their
code, in packages/apo-agent/tests/test_agent.py."""

from __future__ import annotations

import json
import re
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from benchmarks.harness.agents import make_factory
from benchmarks.harness.agents.llm import ChatPrompting, LLMAgent
from benchmarks.harness.run import env_spec, run_agent
from shared_prompts import action_from_answer, format_model_output

MINI = env_spec("WebShop-Mini-Text-v0", "test")


def test_tiny_transformers_model_plays_two_episodes(tiny_chat_model):
    make_agent = make_factory(
        "llm", {"model": str(tiny_chat_model), "max_new_tokens": "6", "cpu_threads": "1"}
    )
    records = run_agent("llm", make_agent, MINI, episodes=2, n_envs=2, progress=False)
    for record in records:
        steps = record["trajectory"][1:]
        assert 1 <= len(steps) <= 15
        assert all(isinstance(s["model_output"], str) for s in steps)
        # An answer without an action goes to the env as it is, which reports it.
        assert all(bool(s["action_error"]) or s["action"] for s in steps)


def test_tiny_model_prompt_uses_the_chat_template(tiny_chat_model):
    from benchmarks.harness.agents.llm import TransformersChat

    backend = TransformersChat(str(tiny_chat_model), max_new_tokens=4)
    agent = LLMAgent(ChatPrompting(backend))
    info = {"instruction": "red shoes", "available_actions": ["search[<query>]"], "steps_left": 15}
    messages = agent.prompting.conversation([], "WebShop [SEP] Search", info)
    prompt = backend.tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)
    assert prompt.startswith("<|system|>You are a shopping agent") and prompt.endswith("<|assistant|>")
    assert "search[<query>]" in prompt and "Steps left: 15" in prompt
    # Greedy decoding: the same conversation, the same answer; the agent sends what it parsed.
    first = backend.complete([messages])[0]
    assert backend.complete([messages])[0] == first
    action = agent.act("WebShop [SEP] Search", info)
    assert agent.last_output == first and action == action_from_answer(first)


@pytest.mark.parametrize("constrained", [False, True], ids=["free", "constrained"])
def test_reused_prefixes_give_the_same_greedy_answers_and_save_prompt_tokens(tiny_chat_model, constrained):
    # Whole episodes with a thought before each answer, two slots, and one turn of history,
    # so from the third turn on the oldest turn drops out and the common prefix shrinks.
    outputs, counts = {}, {}
    for reuse in (False, True):
        options = {"model": str(tiny_chat_model), "max_new_tokens": "8", "cpu_threads": "1"}
        options.update(think="true", history_turns="1", constrained=str(constrained), reuse_prefix=str(reuse))
        make_agent = make_factory("llm", options)
        records = run_agent("llm", make_agent, MINI, episodes=2, n_envs=2, progress=False)
        outputs[reuse] = [[step["model_output"] for step in record["trajectory"][1:]] for record in records]
        counts[reuse] = make_agent().prompting.backend.token_counts
    assert all(len(turns) >= 3 for turns in outputs[False])
    assert outputs[True] == outputs[False]
    off, on = counts[False], counts[True]
    assert on.sent == off.sent and off.processed >= off.sent  # batched: padding is computed too
    assert on.processed < 0.6 * on.sent


def test_prefix_caches_reuse_only_the_common_token_prefix(tiny_chat_model):
    import torch

    from benchmarks.harness.agents.llm import PrefixCaches, TransformersChat

    backend = TransformersChat(str(tiny_chat_model), max_new_tokens=4, device="cpu")

    def logits(ids, cache):
        with torch.no_grad():
            return backend.model(ids[None], **{backend._cache_argument: cache}).logits[0]

    caches = PrefixCaches()
    first = torch.arange(10, 40)
    cache, reused = caches.take(first)
    assert reused == 0
    fresh = logits(first, cache)
    caches.keep(first, cache)
    # The same prompt again: all but its last token come from the cache.
    again, reused = caches.take(first)
    assert reused == len(first) - 1 and again.get_seq_length() == reused
    # A prompt that shares 12 tokens (an older turn dropped out): only those 12 are reused,
    # the stored cache stays whole, and the logits are those of a fresh pass.
    other = torch.cat([first[:12], torch.arange(100, 110)])
    cut, reused = caches.take(other)
    assert reused == 12 and cut.get_seq_length() == 12
    assert caches.take(first)[1] == len(first) - 1
    with_cache = logits(other[12:], cut)
    without = logits(other, None)
    assert torch.allclose(with_cache, without[12:], atol=1e-5)
    assert torch.allclose(without[:12], fresh[:12], atol=1e-5)
    # A kept sequence replaces the stored ones it extends.
    longer = torch.cat([first, torch.arange(50, 55)])
    cache, _ = caches.take(longer)
    logits(longer[len(first) - 1 :], cache)
    caches.keep(longer, cache)
    assert caches.take(first)[1] == len(first) - 1 and len(caches._entries) == 1


def test_reuse_prefix_is_on_for_the_cpu_and_needs_a_transformers_model(tiny_chat_model):
    on_cpu = make_factory("llm", {"model": str(tiny_chat_model), "device": "cpu"})()
    assert on_cpu.prompting.backend.reuse_prefix
    with pytest.raises(ValueError, match="reuse_prefix must be auto, true or false"):
        make_factory("llm", {"model": str(tiny_chat_model), "reuse_prefix": "sometimes"})
    with pytest.raises(ValueError, match="reuse_prefix=true needs a transformers model"):
        make_factory("llm", {"model": "m", "base_url": "http://127.0.0.1:9/v1", "reuse_prefix": "true"})


class _StubChatServer(BaseHTTPRequestHandler):
    """An OpenAI-compatible chat endpoint that plays the rule policy from the prompt it gets."""

    requests: list[dict] = []
    prose = False  # answer prose instead: a server that ignores structured outputs
    in_flight = peak_in_flight = 0  # requests being answered now, and the most at once
    lock = threading.Lock()

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        cls = type(self)
        with cls.lock:
            cls.requests.append({"path": self.path, "body": body, "auth": self.headers.get("Authorization")})
            cls.in_flight += 1
            cls.peak_in_flight = max(cls.peak_in_flight, cls.in_flight)
        time.sleep(0.05)  # long enough for requests sent together to overlap
        with cls.lock:
            cls.in_flight -= 1
        prompt = body["messages"][-1]["content"]
        actions = re.findall(r"^- (\S.*)$", prompt.split("Available actions:")[1], flags=re.M)
        instruction = prompt.split("\n")[0].removeprefix("Instruction: ")
        if "search[<query>]" in actions:
            action = f"search[{instruction}]"
        elif "click[buy now]" in actions:
            action = "click[buy now]"
        else:
            action = next(a for a in actions if re.fullmatch(r"click\[b0\w{8}\]", a))
        regex = body.get("structured_outputs", {}).get("regex")  # thoughts unless it rules them out
        thought = "<think>go</think>" if regex is None or regex.startswith("<think>") else ""
        content = "I would buy it." if self.prose else f"{thought}<action>{action}</action>"
        message = {"role": "assistant", "content": content}
        answer = {"choices": [{"message": message, "finish_reason": "stop"}]}
        data = json.dumps(answer).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args) -> None:
        pass


@pytest.fixture
def stub_server():
    _StubChatServer.requests = []
    _StubChatServer.prose = False
    _StubChatServer.in_flight = _StubChatServer.peak_in_flight = 0
    server = ThreadingHTTPServer(("127.0.0.1", 0), _StubChatServer)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    server.shutdown()
    server.server_close()


def test_http_client_plays_two_episodes_against_a_local_server(stub_server, monkeypatch):
    monkeypatch.setenv("STUB_KEY", "secret")
    make_agent = make_factory(
        "llm",
        {"model": "stub-model", "base_url": stub_server, "api_key_env": "STUB_KEY", "history_turns": "1"},
    )
    records = run_agent("llm-http", make_agent, MINI, episodes=2, n_envs=2, progress=False)
    for record in records:
        assert record["purchased"] and record["steps"] == 3 and record["invalid_actions"] == 0
        assert record["trajectory"][-1]["model_output"] == "<think>go</think><action>click[buy now]</action>"
    requests = _StubChatServer.requests
    assert len(requests) == 6
    first = requests[0]
    assert first["path"] == "/v1/chat/completions" and first["auth"] == "Bearer secret"
    assert first["body"]["model"] == "stub-model" and first["body"]["temperature"] == 0.0
    assert [m["role"] for m in first["body"]["messages"]] == ["system", "user"]
    # Later turns carry one earlier turn: system, user, assistant, user.
    assert [m["role"] for m in requests[-1]["body"]["messages"]] == ["system", "user", "assistant", "user"]


@pytest.mark.parametrize("parallel", [1, 4])
def test_http_client_asks_parallel_requests_at_once(stub_server, parallel):
    options = {"model": "m", "base_url": stub_server, "parallel_requests": str(parallel)}
    records = run_agent("llm-http", make_factory("llm", options), MINI, episodes=4, n_envs=4, progress=False)
    assert all(record["purchased"] for record in records)
    assert _StubChatServer.peak_in_flight == parallel


def test_constrained_instruction_search_is_never_cut_short(stub_server, tiny_chat_model):
    # 4 tokens cannot hold "<action>search[<instruction>]</action>": both backends stretch.
    options = {"constrained": "true", "think": "false", "max_new_tokens": "4", "search_query": "instruction"}
    served = make_factory("llm", {"model": "stub-model", "base_url": stub_server, **options})
    (record,) = run_agent("llm-http", served, MINI, episodes=1, n_envs=1, progress=False)
    search = format_model_output(f"search[{record['instruction']}]")
    assert _StubChatServer.requests[0]["body"]["max_tokens"] == len(search.encode()) + 1
    local = make_factory("llm", {"model": str(tiny_chat_model), "cpu_threads": "1", **options})
    (record,) = run_agent("llm", local, MINI, episodes=1, n_envs=1, progress=False)
    first = record["trajectory"][1]
    assert first["model_output"] == format_model_output(f"search[{record['instruction']}]")
    assert not first["action_error"]


def test_http_client_sends_the_page_pattern_when_constrained(stub_server):
    make_agent = make_factory(
        "llm", {"model": "stub-model", "base_url": stub_server, "constrained": "true", "max_new_tokens": "40"}
    )
    records = run_agent("llm-http", make_agent, MINI, episodes=1, n_envs=1, progress=False)
    assert records[0]["purchased"] and records[0]["invalid_actions"] == 0
    requests = _StubChatServer.requests
    assert len(requests) == 3
    for request in requests:
        pattern = request["body"]["structured_outputs"]["regex"]
        # Thoughts are on by default: up to 3 characters per token, and as many tokens again to act.
        assert pattern.startswith("<think>[^<]{0,120}</think>(") and request["body"]["max_tokens"] == 80
    assert "search" in requests[0]["body"]["structured_outputs"]["regex"]
    assert "click\\[buy now\\]" in requests[-1]["body"]["structured_outputs"]["regex"]


def test_http_client_refuses_a_server_that_ignores_the_constraint(stub_server):
    _StubChatServer.prose = True
    agent = make_factory("llm", {"model": "m", "base_url": stub_server, "constrained": "true"})()
    with pytest.raises(RuntimeError, match="ignored structured_outputs; constrained=true over HTTP needs"):
        run_agent("llm-http", lambda: agent, MINI, episodes=1, n_envs=1, progress=False)


def test_http_client_says_what_is_wrong_when_the_server_is_down():
    # The client's own errors: packages/apo-agent/tests/test_agent.py.
    client = make_factory("llm", {"model": "m", "base_url": "http://127.0.0.1:9/v1", "timeout_s": "2"})()
    with pytest.raises(RuntimeError, match=r"cannot reach http://127\.0\.0\.1:9/v1/chat/completions"):
        client.prompting.backend.complete([[{"role": "user", "content": "hi"}]])
    with pytest.raises(ValueError, match="base_url must start with http"):
        make_factory("llm", {"model": "m", "base_url": "127.0.0.1:8000"})
    with pytest.raises(ValueError, match="needs model="):
        make_factory("llm", {})


def test_http_client_says_to_wait_longer_when_the_server_is_slow():
    import socket

    with socket.socket() as silent:  # accepts the connection (the kernel's backlog), never answers
        silent.bind(("127.0.0.1", 0))
        silent.listen()
        port = silent.getsockname()[1]
        client = make_factory(
            "llm", {"model": "m", "base_url": f"http://127.0.0.1:{port}/v1", "timeout_s": "0.5"}
        )
        agent = client()
        with pytest.raises(RuntimeError, match=r"took longer than 0\.5 s to answer, 3 times; give it longer"):
            agent.prompting.backend.complete([[{"role": "user", "content": "hi"}]])


# ---- SmolLM2-135M-Instruct: the real tokenizer, chat template and weights ------------------------
REAL = env_spec("WebShop-Mini-Text-v0", "test", {"max_steps": 3})


def _steps(record):
    return record["trajectory"][1:]


def test_smollm2_prompt_is_chatml_from_its_own_template(smollm2):
    from benchmarks.harness.agents.llm import TransformersChat

    backend = TransformersChat(str(smollm2), max_new_tokens=4)
    info = {"instruction": "red shoes", "available_actions": ["search[<query>]"], "steps_left": 15}
    messages = ChatPrompting(backend).conversation([], "WebShop [SEP] Search", info)
    prompt = backend.tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)
    assert prompt.startswith("<|im_start|>system\nYou are a shopping agent")
    assert prompt.endswith("<|im_start|>assistant\n") and "Steps left: 15" in prompt


@pytest.mark.parametrize("think", [False, True], ids=["action-only", "thought-then-action"])
def test_smollm2_constrained_answers_are_always_available_actions(smollm2, think):
    import torch

    torch.manual_seed(0)
    options = {"model": str(smollm2), "constrained": "true", "think": str(think), "cpu_threads": "1"}
    options["max_new_tokens"] = "24" if think else "48"
    records = run_agent("llm", make_factory("llm", options), REAL, episodes=1, n_envs=1, progress=False)
    (record,) = records
    steps = _steps(record)
    assert len(steps) == 3 and record["invalid_actions"] == 0
    for step in steps:
        output = step["model_output"]
        assert output.endswith("</action>") and action_from_answer(output) == step["action"]
        assert output.startswith("<think>") == think
    # The first page has only the search bar: the answer is a whole search, query closed.
    assert re.fullmatch(r"search\[[^\[\]<\n]+\]", steps[0]["action"])


def test_smollm2_free_text_plays_and_counts_what_it_cannot_read(smollm2):
    options = {"model": str(smollm2), "think": "true", "max_new_tokens": "32", "cpu_threads": "1"}
    records = run_agent("llm", make_factory("llm", options), REAL, episodes=1, n_envs=1, progress=False)
    steps = _steps(records[0])
    assert 1 <= len(steps) <= 3
    for step in steps:
        assert isinstance(step["model_output"], str) and step["model_output"]
        assert step["action"] == action_from_answer(step["model_output"])
        assert bool(step["action_error"]) or step["action"]
    assert records[0]["invalid_actions"] == sum(bool(s["action_error"]) for s in steps)
