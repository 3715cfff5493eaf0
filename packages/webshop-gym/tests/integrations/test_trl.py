"""`webshop_gym.integrations.trl` against TRL itself: the tools step the env, GRPOTrainer trains on it.

The GRPO runs (with a dataset; without one, the README's snippet) use a model built here,
offline: a byte-level BPE tokenizer trained on the episode's text with TRL's own Qwen2.5 chat
template (so TRL parses its tool calls), and a tiny random Qwen2 taught by 100 supervised steps
to play one goal in two ways: buy the first result, or give up after the search. Sampling then
mixes the two, so the rewards of a group differ and GRPO has a gradient.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from webshop_gym import WebShopEnv
from webshop_gym.actions import clicked_product, parse_action
from webshop_gym.agents.scripted import ExpertPolicy, RulePolicy
from webshop_gym.integrations.trl import GoalSampler, WebShopToolEnv, goal_dataset


def play_through_tools(env: WebShopToolEnv, action: str) -> str:
    """Calls the tool an action string names, as TRL does when the model asks for it."""
    parsed = parse_action(action)
    assert not isinstance(parsed, str), parsed
    return env.search(parsed.arg) if parsed.kind == "search" else env.click(parsed.arg)


# -- the class itself ------------------------------------------------------------------------


@pytest.mark.parametrize("policy_kind", ["expert", "rule"])
def test_tools_step_the_env_as_step_does(policy_kind: str) -> None:
    """Same actions, same pages and the same reward as WebShopEnv.step, on five test goals."""
    reference = WebShopEnv(split="test")
    tools = WebShopToolEnv()
    for goal_index in range(5):
        policy = ExpertPolicy(reference) if policy_kind == "expert" else RulePolicy()
        observation, info = reference.reset(options={"goal_index": goal_index})
        first = tools.reset(catalog="mini", goals="human", split="test", goal_index=goal_index, prompt=[])
        assert first == "\n\n" + observation
        total, done = 0.0, False
        while not done:
            action = policy.act(observation, info)
            observation, reward, terminated, truncated, info = reference.step(action)
            assert play_through_tools(tools, action) == observation
            total += reward
            done = terminated or truncated
        assert tools.done and tools.info == info
        assert tools.get_reward() == total == tools.reward
        if policy_kind == "expert":
            assert total == 1.0


def test_invalid_actions_come_back_as_text() -> None:
    tools = WebShopToolEnv(max_steps=3)
    first = tools.reset(split="test", goal_index=0)
    answer = tools.click("buy now")
    assert answer == f"No clickable 'buy now' on this page. Valid actions: search[<query>].{first}"
    answer = tools.search("")
    assert answer.startswith("Empty argument in 'search[]'")
    assert (tools.reward, tools.done, tools.env is not None and tools.env.steps) == (0.0, False, 2)
    answer = tools.search("yoga leggings")  # the third and last step
    assert answer.endswith("No actions left. The episode has ended: no more actions are taken.")
    assert tools.done and tools.info["page"] == "results"
    assert tools.click("buy now") == "The episode has ended: no more actions are taken."
    assert tools.env is not None and tools.env.steps == 3


def test_reset_starts_over_and_checks_the_row() -> None:
    tools = WebShopToolEnv()
    tools.reset(split="test", goal_index=0)
    tools.search("yoga leggings")
    first = tools.reset(split="dev", goal_index=3)
    assert tools.info["goal_index"] == 3 and tools.env is not None and tools.env.steps == 0
    assert first.endswith(" [SEP] Search") and not tools.done and tools.reward == 0.0
    with pytest.raises(ValueError, match="build the dataset with goal_dataset"):
        tools.reset(prompt=[{"role": "user", "content": "buy shoes"}])
    with pytest.raises(ValueError, match="build the dataset with goal_dataset"):
        tools.reset(split="test", prompt=[])  # a row without its goal_index is not drawn from a sampler
    with pytest.raises(ValueError, match="goal_index must be an int in"):
        tools.reset(split="test", goal_index=100)
    with pytest.raises(ValueError, match="split='val' is not one of"):
        tools.reset(split="val", goal_index=0)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="use 'text' or 'text_rich'"):
        WebShopToolEnv(observation_mode="html")
    with pytest.raises(ValueError, match="num_generations must be a positive int"):
        GoalSampler("train", num_generations=0)


# TRL's row when there is no dataset.
EMPTY_ROW: dict[str, Any] = {"prompt": [{"role": "user", "content": ""}]}


def test_sampler_gives_each_group_one_goal() -> None:
    """Envs sharing a sampler, reset in TRL's order, play one goal per group; the prompt is theirs."""
    sampler = GoalSampler("train", num_generations=3, seed=7)
    envs = [WebShopToolEnv(max_steps=4, goal_sampler=sampler) for _ in range(6)]  # two groups a batch
    reference = WebShopEnv(split="train", max_steps=4)
    order = list(np.random.default_rng([7, 0]).permutation(len(reference.goal_indices)))
    for batch in range(2):
        prompts = [env.reset(**EMPTY_ROW) for env in envs]
        for rank, (env, prompt) in enumerate(zip(envs, prompts, strict=True)):
            goal_index = int(order[2 * batch + rank // 3])
            observation, info = reference.reset(options={"goal_index": goal_index})
            assert env.info == info and env.env is not None and env.env.steps == 0
            assert prompt == f"{reference.goal_at(goal_index).instruction_text}\n\n{observation}"
    assert sampler.resets == 12
    # A row that names its goal is played as it is, and draws nothing.
    assert envs[0].reset(split="test", goal_index=0).startswith("\n\nWebShop [SEP]") and sampler.resets == 12


def test_sampler_walks_through_the_split_before_repeating() -> None:
    sampler = GoalSampler("test", num_generations=1, seed=0)
    first = [sampler.next_goal(goal_count=100) for _ in range(100)]
    second = [sampler.next_goal(goal_count=100) for _ in range(100)]
    assert sorted(first) == sorted(second) == list(range(100)) and first != second
    again = GoalSampler("test", num_generations=1, seed=0)
    assert [again.next_goal(goal_count=100) for _ in range(100)] == first  # seeded
    other = GoalSampler("test", num_generations=1, seed=1)
    assert [other.next_goal(goal_count=100) for _ in range(100)] != first


def test_import_without_trl_names_the_extra() -> None:
    code = "import sys; sys.modules['trl'] = None; import webshop_gym.integrations.trl"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.returncode == 1
    assert "ImportError: webshop_gym.integrations.trl is an adapter for TRL" in result.stderr
    assert "pip install 'webshop-gym[trl]'" in result.stderr


def test_goal_dataset_follows_the_fixed_split() -> None:
    rows = goal_dataset("dev")
    env = WebShopEnv(split="dev")
    assert len(rows) == len(env.goal_indices) == 100
    for i in (0, 1, 99):
        assert rows[i]["prompt"] == [{"role": "user", "content": env.goal_at(i).instruction_text}]
        assert (rows[i]["catalog"], rows[i]["goals"], rows[i]["split"], rows[i]["goal_index"]) == (
            "mini",
            "human",
            "dev",
            i,
        )
    assert rows["goal_index"] == list(range(100))  # split order, never shuffled
    tools = WebShopToolEnv()
    row = rows[7]
    assert tools.reset(**row) == "\n\n" + env.reset(options={"goal_index": 7})[0]


# -- GRPOTrainer, for real ---------------------------------------------------------------------


README = Path(__file__).resolve().parents[2] / "README.md"
GOAL: dict[str, Any] = {"catalog": "mini", "goals": "human", "split": "test", "goal_index": 0}
GAVE_UP = "Nothing here fits."
BOUGHT = "Bought."


def tool_call(name: str, **arguments: str) -> dict[str, Any]:
    return {"type": "function", "function": {"name": name, "arguments": arguments}}


def demonstrations() -> tuple[list[list[dict[str, Any]]], float, list[str]]:
    """Two conversations on GOAL (buy the first result; give up after searching), its reward, the buy."""
    rows = goal_dataset("test")
    tools = WebShopToolEnv()
    user: dict[str, Any] = dict(rows[GOAL["goal_index"]]["prompt"][0])
    user["content"] += tools.reset(**GOAL)
    query = "yoga leggings"
    results = tools.search(query)
    first_product = next(filter(None, map(clicked_product, tools.info["available_actions"])))
    item = tools.click(first_product)
    done_page = tools.click("buy now")
    assert tools.done and tools.reward > 0, "the first result should earn a reward"
    search: list[dict[str, Any]] = [
        {"role": "assistant", "content": "", "tool_calls": [tool_call("search", query=query)]},
        {"role": "tool", "name": "search", "content": results},
    ]
    buy: list[dict[str, Any]] = [
        {"role": "assistant", "content": "", "tool_calls": [tool_call("click", button=first_product)]},
        {"role": "tool", "name": "click", "content": item},
        {"role": "assistant", "content": "", "tool_calls": [tool_call("click", button="buy now")]},
        {"role": "tool", "name": "click", "content": done_page},
        {"role": "assistant", "content": BOUGHT},
    ]
    give_up = [{"role": "assistant", "content": GAVE_UP}]
    actions = [f"search[{query}]", f"click[{first_product}]", "click[buy now]"]
    return [[user, *search, *buy], [user, *search, *give_up]], tools.reward, actions


def build_tool_calling_model(conversations: list[list[dict[str, Any]]], tools: list[Any]) -> tuple[Any, Any]:
    """A tokenizer trained on the conversations' text and a tiny Qwen2 taught to say their assistant turns."""
    import torch
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast, Qwen2Config, Qwen2ForCausalLM
    from trl.chat_template_utils import qwen2_5_chat_template

    # The vocabulary comes from the conversations as the chat template writes them.
    def wrap(core: Tokenizer) -> PreTrainedTokenizerFast:
        return PreTrainedTokenizerFast(
            tokenizer_object=core,
            eos_token="<|im_end|>",
            pad_token="<|endoftext|>",
            chat_template=qwen2_5_chat_template,
            padding_side="left",
        )

    renderer = wrap(Tokenizer(models.BPE()))
    texts = [renderer.apply_chat_template(c, tools=tools, tokenize=False) for c in conversations]
    core = Tokenizer(models.BPE())
    # No split into words first: merges span whole phrases, so the pages cost few tokens.
    core.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)
    core.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=4000,
        special_tokens=["<|endoftext|>", "<|im_start|>", "<|im_end|>"],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    core.train_from_iterator(texts, trainer=trainer)
    tokenizer = wrap(core)
    # Text, not special tokens: TRL finds the tool calls in the decoded reply.
    tokenizer.add_tokens(
        ["<tool_call>", "</tool_call>", "<tool_response>", "</tool_response>", "<tools>", "</tools>"]
    )

    torch.manual_seed(0)
    config = Qwen2Config(
        vocab_size=len(tokenizer),
        hidden_size=64,
        intermediate_size=128,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=16384,  # the README's snippet: max_completion_length=8192
        tie_word_embeddings=True,
        pad_token_id=tokenizer.pad_token_id,
        eos_token_id=tokenizer.eos_token_id,
        bos_token_id=None,
    )
    model = Qwen2ForCausalLM(config)
    model.generation_config.eos_token_id = tokenizer.eos_token_id
    model.generation_config.pad_token_id = tokenizer.pad_token_id

    def token_ids(messages: list[dict[str, Any]], add_generation_prompt: bool = False) -> list[int]:
        return list(
            tokenizer.apply_chat_template(
                messages, tools=tools, add_generation_prompt=add_generation_prompt, return_dict=False
            )
        )

    # Teacher forcing on the assistant turns only (the pages are the env's, not the model's).
    batch = []
    for conversation in conversations:
        ids = token_ids(conversation)
        labels = [-100] * len(ids)
        for end, message in enumerate(conversation, start=1):
            if message["role"] == "assistant":
                start = len(token_ids(conversation[: end - 1], add_generation_prompt=True))
                stop = len(token_ids(conversation[:end]))
                labels[start:stop] = ids[start:stop]
        batch.append((ids, labels))
    length = max(len(ids) for ids, _ in batch)
    input_ids = torch.tensor([ids + [tokenizer.pad_token_id] * (length - len(ids)) for ids, _ in batch])
    targets = torch.tensor([labels + [-100] * (length - len(labels)) for _, labels in batch])
    attention_mask = torch.tensor([[1] * len(ids) + [0] * (length - len(ids)) for ids, _ in batch])
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-2)
    model.train()
    for _ in range(100):
        loss = model(input_ids=input_ids, attention_mask=attention_mask, labels=targets).loss
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    return model, tokenizer


@pytest.fixture(scope="module")
def taught() -> tuple[Any, Any, float, list[str]]:
    """The tiny model taught the two demonstrations, its tokenizer, the purchase's reward and actions."""
    import torch

    torch.set_num_threads(1)
    conversations, bought_reward, buy_actions = demonstrations()
    probe = WebShopToolEnv()
    model, tokenizer = build_tool_calling_model(conversations, tools=[probe.click, probe.search])
    return model, tokenizer, bought_reward, buy_actions


@pytest.mark.filterwarnings("ignore:You are using 'environment_factory'")  # "experimental" in TRL 1.x
def test_grpo_trainer_plays_webshop_through_the_tools(
    tmp_path: Path, taught: tuple[Any, Any, float, list[str]]
) -> None:
    """Rows of goal_dataset, the reward from get_reward alone (no reward_funcs)."""
    import copy

    import torch
    from trl import GRPOConfig, GRPOTrainer

    taught_model, tokenizer, bought_reward, buy_actions = taught
    model = copy.deepcopy(taught_model)
    before = {name: p.detach().clone() for name, p in model.named_parameters()}

    # What each rollout's env held when TRL asked it for its reward.
    scored: list[dict[str, Any]] = []

    class ScoredToolEnv(WebShopToolEnv):
        def get_reward(self) -> float:
            reward = super().get_reward()
            assert self.env is not None
            scored.append({"reward": reward, "steps": self.env.steps, "info": dict(self.info)})
            return reward

    dataset = goal_dataset("test").select([GOAL["goal_index"]])
    args = GRPOConfig(
        output_dir=str(tmp_path),
        max_steps=2,
        per_device_train_batch_size=8,
        num_generations=8,
        max_completion_length=1024,
        max_tool_calling_iterations=5,
        learning_rate=1e-3,
        logging_steps=1,
        save_strategy="no",
        report_to="none",
        use_cpu=True,
        seed=0,
        disable_tqdm=True,
    )
    trainer = GRPOTrainer(
        model=model,
        args=args,
        train_dataset=dataset,
        processing_class=tokenizer,
        environment_factory=ScoredToolEnv,
    )
    trainer.train()

    # The reward of the demonstrated purchase, from WebShopEnv.step itself.
    reference = WebShopEnv(split="test")
    reference.reset(options={"goal_index": GOAL["goal_index"]})
    purchase = [reference.step(action) for action in buy_actions][-1]
    assert purchase[2] and purchase[1] == bought_reward > 0

    logged = [entry for entry in trainer.state.log_history if "loss" in entry]
    assert [entry["step"] for entry in logged] == [1, 2]
    assert len(scored) == 16  # 2 steps x 8 rollouts of the one goal
    bought = [s for s in scored if s["info"].get("purchased_asin")]
    assert 0 < len(bought) < len(scored)
    for s in scored:
        assert s["info"]["goal_index"] == GOAL["goal_index"]
        if s["info"].get("purchased_asin"):
            assert s["steps"] >= len(buy_actions) and s["reward"] == bought_reward
            assert s["info"]["purchased_asin"] == purchase[4]["purchased_asin"]
        else:
            assert s["reward"] == 0.0
    for entry, group in zip(logged, (scored[:8], scored[8:]), strict=True):
        assert entry["tools/call_frequency"] > 0
        # The env's reward is logged under its class's name, and is the only reward.
        assert entry["rewards/ScoredToolEnv/mean"] == pytest.approx(sum(s["reward"] for s in group) / 8)
        assert entry["reward"] == pytest.approx(entry["rewards/ScoredToolEnv/mean"])
    after = dict(model.named_parameters())
    assert any(not torch.equal(before[name], after[name].detach()) for name in before)


@pytest.mark.filterwarnings("ignore:You are using 'environment_factory'")
def test_the_readmes_trl_snippet_trains_without_a_dataset(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, taught: tuple[Any, Any, float, list[str]]
) -> None:
    """The README's snippet as written, but for the model (the tiny one, saved), two steps and short turns.

    The tiny model has only learnt one test goal; on train goals it may ramble to the length
    limit, so the test shortens completions and tool turns to keep CPU time to minutes.
    """
    import copy

    taught_model, tokenizer, _, _ = taught
    model_folder = tmp_path / "tiny-tool-model"
    copy.deepcopy(taught_model).save_pretrained(model_folder)
    tokenizer.save_pretrained(model_folder)
    section = README.read_text(encoding="utf-8").split("### TRL", 1)[1].split("\n### ", 1)[0]
    code = re.search(r"```python\n(.*?)```", section, re.S)
    assert code is not None
    snippet = code.group(1)
    swaps = {
        '"Qwen/Qwen3-0.6B"': repr(str(model_folder)),
        "max_steps=200": "max_steps=2",
        "max_completion_length=8192": "max_completion_length=512",
        "max_tool_calling_iterations=15": "max_tool_calling_iterations=3",
    }
    for old, new in swaps.items():
        assert snippet.count(old) == 1, old
        snippet = snippet.replace(old, new)
    monkeypatch.chdir(tmp_path)  # the trainer's output folder
    namespace: dict[str, Any] = {}
    exec(compile(snippet, str(README), "exec"), namespace)

    trainer = namespace["trainer"]
    assert trainer.state.global_step == 2
    # No reward_funcs: the env's get_reward is the one reward, named after its class.
    assert trainer.reward_func_names == ["WebShopToolEnv"]
    # Each step drew one train goal for its group of 8; the envs hold the second step's.
    envs = trainer.environments
    assert len(envs) == 8 and all(isinstance(env, WebShopToolEnv) for env in envs)
    sampler = envs[0].goal_sampler
    assert sampler is not None and all(env.goal_sampler is sampler for env in envs) and sampler.resets == 16
    expected = GoalSampler("train", num_generations=8)
    draws = [expected.next_goal(len(WebShopEnv(split="train").goal_indices)) for _ in range(16)]
    assert [env.info["goal_index"] for env in envs] == draws[8:] and draws[0] != draws[8]
