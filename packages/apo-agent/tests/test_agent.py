"""The one agent stack: `apo_agent.agent` over the chat backends (HTTP against a local fake
OpenAI server, transformers in process), the one constrained mask and the one answer budget."""

from __future__ import annotations

import json
import re
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import gymnasium as gym
import pytest
import torch

from apo_agent.agent import ChatPrompting, LLMAgent, TokenPrompting, step_seed
from apo_agent.engines import TransformersEngine
from apo_agent.engines.openai_http import OpenAIChat
from apo_agent.engines.transformers import AllowedTokens, sample_batch
from apo_agent.engines.transformers_chat import TransformersChat
from apo_agent.model.answer_regex import answer_pattern, answer_token_budget
from apo_agent.model.constrained import (
    ActionConstraint,
    ActionVocabulary,
    PageActions,
    answer_budget,
    whole_answer_budget,
)
from apo_agent.model.policy import LMPolicy
from apo_agent.rollout.episodes import collect_episodes
from apo_agent.rollout.tokens import PromptEncoder
from shared_prompts import PromptConfig, format_model_output

INFO = {"instruction": "red shoes", "available_actions": ["search[<query>]"], "steps_left": 15}


# ---- the one agent: any prompting behind the protocol ---------------------------------------------
class _FirstActionPrompting:
    """Answers every page with its first action, or with ``reply`` when one is set."""

    def __init__(self, reply=None):
        self.reply = reply
        self.seeds = []

    def new_context(self):
        return []

    def answer(self, contexts, observations, infos, seed):
        self.seeds.append(seed)
        answers = [self.reply or format_model_output(info["available_actions"][0]) for info in infos]
        for turns, answer in zip(contexts, answers, strict=True):
            turns.append(answer)
        return answers


def test_llm_agent_seeds_each_turn_from_its_episode_and_keeps_raw_answers():
    prompting = _FirstActionPrompting()
    agents = [LLMAgent(prompting), LLMAgent(prompting)]
    agents[0].reset(seed=4)
    agents[1].reset(seed=9)
    pages = [{**INFO, "available_actions": ["click[buy now]"]}] * 2
    assert LLMAgent.act_batch(agents, ["a", "b"], pages) == ["click[buy now]"] * 2
    assert agents[0].act("a", pages[0]) == "click[buy now]"
    # The batch asks with its first agent's seed and turn; each agent counts its own turns.
    assert prompting.seeds == [step_seed(4, 0), step_seed(4, 1)] == [4000, 4001]
    assert agents[0].context == [format_model_output("click[buy now]")] * 2 and len(agents[1].context) == 1
    assert agents[0].last_output == format_model_output("click[buy now]")
    agents[0].reset()
    assert agents[0].context == [] and agents[0].last_output is None
    agents[0].act("a", pages[0])
    assert prompting.seeds[-1] is None  # unseeded: sampling goes on from the global generator


def test_llm_agent_sends_an_unreadable_answer_as_it_is():
    agent = LLMAgent(_FirstActionPrompting(reply="I think I will buy it"))
    assert agent.act("a page", INFO) == "I think I will buy it"  # the env reports it as invalid
    assert agent.last_output == "I think I will buy it"


# ---- the answer budget: one rule, in process and over HTTP --------------------------------------
def test_answer_token_budget_covers_the_longest_whole_answer():
    clicks = PageActions(("click[back to search]", "click[b0123456789]"))
    assert answer_token_budget(clicks, 64) == 64  # every click fits
    query = "a long instruction, " * 10 + "caf\u00e9"  # 204 characters, 205 UTF-8 bytes
    fixed = PageActions(("search[<query>]", "click[next >]"), fixed_query=query)
    assert answer_token_budget(fixed, 64) == len(format_model_output(f"search[{query}]").encode()) + 1
    # A free query is left to max_tokens: its length is the model's.
    assert answer_token_budget(PageActions(("search[<query>]",)), 64) == 64


def test_in_process_and_http_budgets_are_the_same_rule(tokenizer):
    vocabulary = ActionVocabulary(tokenizer)
    page = PageActions(("search[<query>]", "click[next >]"), fixed_query="red shoes " * 12)
    constraint = ActionConstraint.for_page(vocabulary, page.available_actions, page.fixed_query)
    for max_tokens in (4, 64, 500):
        assert answer_budget(max_tokens, constraint) == whole_answer_budget(max_tokens, constraint.answers)
        assert answer_token_budget(page, max_tokens) == whole_answer_budget(max_tokens, page.whole_answers())
        # The tiny tokenizer spells answers as they are written: both budgets agree.
        assert answer_budget(max_tokens, constraint) == answer_token_budget(page, max_tokens)


# ---- the regular expression an HTTP server constrains by -----------------------------------------
def test_answer_pattern_allows_exactly_the_page_actions():
    clicks = ("click[back to search]", "click[1.5 oz (pack of 2)]", "click[a|b*]")
    pattern = answer_pattern(PageActions(("search[<query>]", *clicks)))
    for action in (*clicks, "search[red socks, 2 pack]"):
        assert re.fullmatch(pattern, f"<action>{action}</action>"), action
    for answer in (
        "<action>click[1.5 oz]</action>",  # not on the page
        "<action>click[a]</action>",  # the | of an action is not an alternative
        "<action>search[]</action>",
        "<action>search[a]b]</action>",
        "click[back to search]",  # no tags
        "<think>x</think><action>click[back to search]</action>",  # no thoughts asked for
    ):
        assert not re.fullmatch(pattern, answer), answer
    fixed = answer_pattern(PageActions(("search[<query>]",), fixed_query="red (2) socks"))
    assert re.fullmatch(fixed, "<action>search[red (2) socks]</action>")
    assert not re.fullmatch(fixed, "<action>search[red socks]</action>")
    thinking = answer_pattern(PageActions(("click[buy now]",)), think=True, max_thought_chars=5)
    assert re.fullmatch(thinking, "<think>ok</think><action>click[buy now]</action>")
    assert not re.fullmatch(thinking, "<think>too long</think><action>click[buy now]</action>")
    assert not re.fullmatch(thinking, "<action>click[buy now]</action>")
    with pytest.raises(ValueError, match="without actions"):
        answer_pattern(PageActions(()))


# ---- the HTTP backend against a fake OpenAI server ------------------------------------------------
class _FakeOpenAI(BaseHTTPRequestHandler):
    """Answers chat completions with ``reply``; the first ``failures`` requests get ``status``."""

    bodies: list[dict] = []
    reply = "<action>click[buy now]</action>"
    finish_reason = "stop"
    failures = 0
    status = 503
    lock = threading.Lock()

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        cls = type(self)
        with cls.lock:
            cls.bodies.append({"body": body, "path": self.path, "auth": self.headers.get("Authorization")})
            failing = cls.failures > 0
            cls.failures -= failing
        if failing:
            self._send(cls.status, {"error": "busy"})
            return
        message = {"role": "assistant", "content": cls.reply}
        self._send(200, {"choices": [{"message": message, "finish_reason": cls.finish_reason}]})

    def _send(self, status: int, answer: dict) -> None:
        data = json.dumps(answer).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args) -> None:
        pass


@pytest.fixture
def fake_openai():
    _FakeOpenAI.bodies = []
    _FakeOpenAI.reply = "<action>click[buy now]</action>"
    _FakeOpenAI.finish_reason = "stop"
    _FakeOpenAI.failures, _FakeOpenAI.status = 0, 503
    server = ThreadingHTTPServer(("127.0.0.1", 0), _FakeOpenAI)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    server.shutdown()
    server.server_close()


def test_http_backend_sends_the_conversation_budget_and_pattern(fake_openai):
    client = OpenAIChat(fake_openai, "m", api_key="k", max_tokens=8, constrained=True)
    prompting = ChatPrompting(client, PromptConfig(think=False), search_query="instruction")
    agent = LLMAgent(prompting)
    info = {
        "instruction": "red shoes in size 9, " * 3 + "under 30 dollars",
        "available_actions": ["search[<query>]"],
        "steps_left": 15,
    }
    _FakeOpenAI.reply = format_model_output(f"search[{info['instruction']}]")
    action = agent.act("WebShop [SEP] Search", info)
    assert action == f"search[{info['instruction']}]"
    (request,) = _FakeOpenAI.bodies
    body = request["body"]
    assert request["path"] == "/v1/chat/completions" and request["auth"] == "Bearer k"
    assert body["messages"] == prompting.conversation([], "WebShop [SEP] Search", info)
    assert [m["role"] for m in body["messages"]] == ["system", "user"]
    page = prompting.page_actions(info)
    assert body["max_tokens"] == whole_answer_budget(8, page.whole_answers()) > 8
    assert body["structured_outputs"] == {"regex": answer_pattern(page)}
    assert body["model"] == "m" and body["temperature"] == 0.0 and "seed" not in body
    agent.reset(seed=3)
    agent.act("WebShop [SEP] Search", info)
    assert _FakeOpenAI.bodies[-1]["body"]["seed"] == step_seed(3, 0) == 3000


def test_http_backend_retries_busy_answers_and_stops_on_client_errors(fake_openai, monkeypatch):
    monkeypatch.setattr(time, "sleep", lambda seconds: None)
    client = OpenAIChat(fake_openai, "m", retries=3)
    _FakeOpenAI.failures = 2  # two 503s, then an answer
    assert client.complete([[{"role": "user", "content": "hi"}]]) == ["<action>click[buy now]</action>"]
    assert len(_FakeOpenAI.bodies) == 3
    _FakeOpenAI.failures = 5  # more than the retries
    with pytest.raises(RuntimeError, match="answered HTTP 503"):
        client.complete([[{"role": "user", "content": "hi"}]])
    _FakeOpenAI.bodies, _FakeOpenAI.failures, _FakeOpenAI.status = [], 1, 400
    with pytest.raises(RuntimeError, match="answered HTTP 400"):
        client.complete([[{"role": "user", "content": "hi"}]])
    assert len(_FakeOpenAI.bodies) == 1  # a bad request is not asked again


def test_http_backend_checks_constrained_answers(fake_openai):
    client = OpenAIChat(fake_openai, "m", constrained=True)
    page = PageActions(("click[buy now]",))
    conversation = [{"role": "user", "content": "hi"}]
    _FakeOpenAI.reply = "I would buy it."
    with pytest.raises(RuntimeError, match="ignored structured_outputs"):
        client.complete([conversation], pages=[page])
    _FakeOpenAI.finish_reason = "length"  # cut short by max_tokens: the env reports it
    assert client.complete([conversation], pages=[page]) == ["I would buy it."]
    with pytest.raises(ValueError, match="needs the page's actions"):
        client.complete([conversation])


def test_http_backend_says_what_is_wrong_when_the_server_is_down():
    client = OpenAIChat("http://127.0.0.1:9/v1", "m", retries=1, timeout=2)
    with pytest.raises(RuntimeError, match=r"cannot reach http://127\.0\.0\.1:9/v1/chat/completions"):
        client.complete([[{"role": "user", "content": "hi"}]])
    with pytest.raises(ValueError, match="base_url must start with http"):
        OpenAIChat("127.0.0.1:8000", "m")


# ---- one mask: the chat backend and training's sampler ---------------------------------------------
def test_the_chat_mask_is_the_samplers_mask_until_a_query_is_closed(tokenizer):
    vocabulary = ActionVocabulary(tokenizer)
    clicks = ActionConstraint.for_page(vocabulary, ["click[buy now]", "click[< prev]"])
    search = ActionConstraint.for_page(vocabulary, ["search[<query>]"])
    prefix = tokenizer(search.open_prefix, add_special_tokens=False)["input_ids"]
    ids = torch.tensor([[5, 6, *prefix], [5, 6, *prefix]])
    scores = torch.randn(2, len(tokenizer))
    sampler = AllowedTokens([clicks, search], prompt_width=2)(ids, scores.clone())
    chat = AllowedTokens([clicks, search], prompt_width=2, close_queries_at=40)(ids, scores.clone())
    assert torch.equal(sampler[0], chat[0])  # a click page: the same mask
    assert torch.equal(sampler[1], scores[1])  # in a query the sampler leaves the model free
    banned = chat[1] == float("-inf")
    assert banned.any() and not banned.all()
    for token_id, text in vocabulary.text.items():
        if "<" in text or "\n" in text:
            assert banned[token_id], text


def test_constrained_chat_answers_as_training_samples(tiny_model_dir):
    chat = TransformersChat(str(tiny_model_dir), max_new_tokens=16, device="cpu", constrained=True)
    policy = LMPolicy.load(str(tiny_model_dir), device="cpu", with_reference=False)
    actions = ["click[back to search]", "click[b0000000001]", "click[buy now]"]
    conversation = ChatPrompting(chat, PromptConfig(think=False)).conversation(
        [], "a page", {**INFO, "available_actions": actions}
    )
    (answer,) = chat.complete([conversation], pages=[PageActions(tuple(actions))])
    text = chat.tokenizer.apply_chat_template(conversation, tokenize=False, add_generation_prompt=True)
    prompt = chat.tokenizer(text, add_special_tokens=False)["input_ids"]
    constraint = ActionConstraint.for_page(ActionVocabulary(policy.tokenizer, policy.stop_ids), actions)
    (sample,) = sample_batch(
        policy.model,
        [prompt],
        stop_ids=policy.stop_ids,
        pad_id=policy.pad_id,
        device=policy.device,
        max_new_tokens=16,
        temperature=0.0,
        constraints=[constraint],
    )
    assert answer == policy.tokenizer.decode(sample.ids, skip_special_tokens=True)
    assert answer in [format_model_output(a) for a in actions]


# ---- the policy agent plays as the rollouts do -----------------------------------------------------
def test_policy_agent_plays_the_rollouts_episodes(tiny_model_dir):
    policy = LMPolicy.load(str(tiny_model_dir), device="cpu", with_reference=False)
    encoder = PromptEncoder(
        policy.tokenizer, PromptConfig(think=False), "last_observation", constrain_actions=True
    )
    env = gym.make("WebShop-Mini-Text-v0", split="test", max_steps=4)
    (episode,) = collect_episodes(policy, [env], encoder, [(2, 7)], max_new_tokens=12, temperature=0.0)
    agent = LLMAgent(TokenPrompting(TransformersEngine(policy), encoder, temperature=0.0, max_new_tokens=12))
    agent.reset(seed=7)
    observation, info = env.reset(seed=7, options={"goal_index": 2})
    actions, done = [], False
    while not done:
        actions.append(agent.act(observation, info))
        observation, _, terminated, truncated, info = env.step(actions[-1])
        done = terminated or truncated
    assert actions == episode.actions
    assert [s.ids for s in agent.context.sequences] == [s.ids for s in episode.sequences]
