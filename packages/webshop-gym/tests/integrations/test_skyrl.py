"""`webshop_gym.integrations.skyrl` through skyrl-gym itself (``skyrl_gym.make("webshop", ...)``) and
skyrl-train's typed config (``skyrl.train.config`` of the ``skyrl`` wheel, installed by the nox
session without the GPU stack it asks for)."""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
import typing
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest
import skyrl_gym
from omegaconf import DictConfig

from webshop_gym import WebShopEnv
from webshop_gym.agents.scripted import ExpertPolicy
from webshop_gym.integrations.skyrl import (
    ENV_ID,
    SETTINGS,
    WebShopTextEnv,
    goal_rows,
    parse_reply,
    register_env,
)


def make(row: dict[str, Any], env_config: Any = None, **extras: Any) -> Any:
    """The env as SkyRL's generator makes it: the row's fields but the prompt and env_class are extras."""
    fields = {key: value for key, value in row.items() if key not in ("prompt", "env_class")}
    return skyrl_gym.make(
        row["env_class"], env_config=env_config or DictConfig({}), extras={**fields, **extras}
    )


def test_registered_with_skyrl_gym() -> None:
    assert ENV_ID == "webshop" and ENV_ID in skyrl_gym.registry
    register_env()  # idempotent: a second registration would raise in skyrl_gym
    env = make(goal_rows("test")[0])
    assert isinstance(env, WebShopTextEnv) and isinstance(env, skyrl_gym.Env)
    assert env.spec is not None and env.spec.id == "webshop"


@pytest.mark.parametrize("goal_index", range(5))
def test_expert_episode_earns_what_webshop_env_gives(goal_index: int) -> None:
    row = goal_rows("test")[goal_index]
    env = make(row, max_turns=15)
    prompt, metadata = env.init(row["prompt"])
    reference = WebShopEnv(split="test")
    observation, info = reference.reset(options={"goal_index": goal_index})
    expert = ExpertPolicy(reference)
    assert prompt == [{"role": "user", "content": row["prompt"][0]["content"] + "\n\n" + observation}]
    assert metadata == info
    total, done = 0.0, False
    while not done:
        action = expert.act(observation, info)
        observation, reward, terminated, truncated, info = reference.step(action)
        output = env.step(f"<think>the goal asks for this</think>\n<action>{action}</action>")
        assert (output["reward"], output["done"]) == (reward, terminated or truncated)
        assert output["metadata"] == {"action": action, **info}
        done = output["done"]
        assert output["observations"] == ([] if done else [{"role": "user", "content": observation}])
        total += output["reward"]
    assert terminated and info["success"] and total == 1.0  # done at the purchase, with the env's reward
    assert env.get_metrics() == {"steps": reference.steps, "score": 1.0, "success": True}
    env.close()


def test_invalid_actions_are_reported() -> None:
    row = goal_rows("test")[0]
    env = make(row)
    prompt, _ = env.init(row["prompt"])
    first_page = prompt[-1]["content"].split("\n\n")[-1]
    output = env.step("<action>click[buy now]</action>")
    message = output["observations"][0]["content"]
    assert message == f"No clickable 'buy now' on this page. Valid actions: search[<query>].\n\n{first_page}"
    assert (output["reward"], output["done"], output["metadata"]["page"]) == (0.0, False, "search")
    output = env.step("I would like to buy the leggings")
    assert output["observations"][0]["content"].startswith(
        "Malformed action 'I would like to buy the leggings'"
    )
    assert output["metadata"]["action_error"] and not output["done"]
    output = env.step("<action>search[yoga leggings]</action>")  # still playable after invalid actions
    assert output["metadata"]["page"] == "results" and output["metadata"]["action_error"] == ""
    assert env.get_metrics() == {"steps": 3, "score": 0.0, "success": False}


def test_done_at_max_turns_without_a_purchase() -> None:
    row = goal_rows("test")[0]
    env = make(row, max_turns=3)
    env.init(row["prompt"])
    outputs = [env.step(reply) for reply in ("search[yoga leggings]", "click[next >]", "click[< prev]")]
    assert [o["done"] for o in outputs] == [False, False, True]
    assert [o["reward"] for o in outputs] == [0.0, 0.0, 0.0]
    assert outputs[-1]["observations"] == [] and outputs[-1]["metadata"]["steps_left"] == 0
    assert env.get_metrics() == {"steps": 3, "score": 0.0, "success": False}


def test_settings_from_rows_and_env_config() -> None:
    row = goal_rows("dev", goals="human", observation_mode="text_rich")[4]
    env = make(row)
    prompt, metadata = env.init([{"role": "system", "content": "You shop."}, *row["prompt"]])
    assert metadata["goal_index"] == 4 and env.max_turns == 15  # WebShop's limit when the row has none
    assert "[button] Search [button_]" in prompt[-1]["content"] and prompt[0]["content"] == "You shop."
    # A row without settings takes env_config's; a row's setting wins over env_config's.
    bare = {key: value for key, value in row.items() if key not in SETTINGS}
    env = make(bare, env_config=DictConfig({"observation_mode": "text_rich", "reward": "binary"}))
    assert (env.env.observation_mode, env.env.reward_variant) == ("text_rich", "binary")
    env = make({**bare, "reward": "original"}, env_config={"observation_mode": "text", "reward": "binary"})
    assert (env.env.observation_mode, env.env.reward_variant) == ("text", "original")
    # A prompt that does not end with a user message gets the page as a message of its own.
    original = [{"role": "assistant", "content": "Ready."}]
    prompt, _ = env.init(original)
    assert prompt[0] == {"role": "assistant", "content": "Ready."} and prompt[1]["role"] == "user"
    assert len(original) == 1  # the caller's prompt is left alone
    with pytest.raises(ValueError, match="build the rows with goal_rows"):
        make({"env_class": "webshop", "prompt": []})
    with pytest.raises(ValueError, match="unknown WebShop env_config keys \\['max_step'\\]"):
        make(row, env_config={"max_step": 3})
    with pytest.raises(ValueError, match="use 'text' or 'text_rich'"):
        make(bare, env_config={"observation_mode": "html"})
    with pytest.raises(ValueError, match="use 'text' or 'text_rich'"):
        make({**row, "observation_mode": "html"})
    with pytest.raises(ValueError, match="use 'text' or 'text_rich'"):
        goal_rows("dev", observation_mode="html")
    with pytest.raises(ValueError, match="reward="):
        goal_rows("dev", reward="best")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="goal_index must be an int in"):
        make({**row, "goal_index": 100}).init(row["prompt"])


def test_goal_rows_follow_the_fixed_split() -> None:
    rows = goal_rows("train")
    env = WebShopEnv(split="train")
    assert len(rows) == len(env.goal_indices) == 630
    assert [row["goal_index"] for row in rows] == list(range(630))  # split order, never shuffled
    for i in (0, 629):
        assert rows[i]["prompt"][0]["content"].startswith(env.goal_at(i).instruction_text + "\n\n")
        assert {k: v for k, v in rows[i].items() if k not in ("prompt", "goal_index")} == {
            "data_source": "webshop/mini/human/train",
            "env_class": "webshop",
            "catalog": "mini",
            "goals": "human",
            "split": "train",
            "observation_mode": "text",
            "reward": "original",
            "search_engine": "bm25",
            "show_attributes": False,
        }


def test_parse_reply_takes_the_last_action_tag() -> None:
    assert parse_reply("<action>search[a]</action> then <action> click[b] </action>") == "click[b]"
    assert parse_reply("<action>\nclick[buy now]\n</action>") == "click[buy now]"
    assert parse_reply("click[buy now]") == "click[buy now]"
    assert parse_reply("<action>click[x]") == "<action>click[x]"  # unclosed: left to the env to report


# -- skyrl-train: its typed config, its data, its generator's make ------------------------------

README = Path(__file__).resolve().parents[2] / "README.md"


def readme_section() -> str:
    return README.read_text(encoding="utf-8").split("### SkyRL\n", 1)[1].split("\n### ", 1)[0]


def readme_overrides() -> list[str]:
    """The overrides of the README's training command."""
    command = re.search(r"```bash\n(.*?)```", readme_section(), re.S)
    assert command is not None
    words = shlex.split(command.group(1).replace("\\\n", " "))
    assert words[:2] == ["python", "main_webshop.py"]
    return words[2:]


def readme_config() -> Any:
    """The README command's config, built and validated by skyrl-train's own code, section by section.

    ``SkyRLTrainConfig.from_cli_overrides`` parses the overrides with OmegaConf and builds each
    section with ``build_nested_dataclass`` (``validate_dict_keys_against_dataclass`` at every
    level); only the last step, ``SkyRLTrainConfig.__post_init__``, is left out: it imports the GPU
    backends, and skyrl 0.3.0's (``skyrl.tinker.types``) do not import on Python 3.11.
    """
    import dataclasses
    from types import SimpleNamespace

    from omegaconf import OmegaConf
    from skyrl.train.config.config import (
        SkyRLTrainConfig,
        build_nested_dataclass,
        validate_dict_keys_against_dataclass,
    )

    raw = OmegaConf.to_container(OmegaConf.from_cli(readme_overrides()), resolve=True)
    assert isinstance(raw, dict)
    validate_dict_keys_against_dataclass(SkyRLTrainConfig, raw)
    kinds = typing.get_type_hints(SkyRLTrainConfig)  # data: DataConfig, trainer: TrainerConfig, ...
    sections = [field.name for field in dataclasses.fields(SkyRLTrainConfig)]
    return SimpleNamespace(
        **{name: build_nested_dataclass(kinds[name], raw.get(name, {})) for name in sections}
    )


def test_skyrl_trains_config_takes_the_readmes_overrides() -> None:
    from skyrl.train.config import SkyRLTrainConfig

    cfg = readme_config()
    assert cfg.environment.env_class == "webshop" and cfg.generator.max_turns == 15
    assert cfg.data.train_data == ["data/webshop/train.parquet"]
    assert cfg.generator.batched is False
    # What the README says the settings in the rows avoid: the typed config refuses a webshop section.
    with pytest.raises(ValueError, match="Invalid fields \\{'webshop'\\} for SkyRLGymConfig"):
        SkyRLTrainConfig.from_cli_overrides(["environment.skyrl_gym.webshop.reward=binary"])
    with pytest.raises(ValueError, match="The '\\+' prefix"):
        SkyRLTrainConfig.from_cli_overrides(["+environment.skyrl_gym.webshop.reward=binary"])
    from skyrl.train.config import GeneratorConfig

    assert GeneratorConfig().max_turns == 1  # why the README sets it


def test_the_readmes_rows_play_as_skyrls_generator_makes_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The README's data snippet as written; each env made from a parquet row as the generator does."""
    monkeypatch.chdir(tmp_path)
    code = re.search(r"```python\n(.*?)```", readme_section(), re.S)
    assert code is not None
    exec(compile(code.group(1), str(README), "exec"), {})
    cfg = readme_config()
    rows = {
        split: pq.read_table(path).to_pylist()
        for split, path in (("train", cfg.data.train_data[0]), ("dev", cfg.data.val_data[0]))
    }
    assert rows == {"train": goal_rows("train"), "dev": goal_rows("dev")}
    dev = rows["dev"]
    assert {row["data_source"] for row in dev} == {"webshop/mini/human/dev"}
    for row in dev[:3]:
        # skyrl.train.dataset.PromptDataset: the prompt and env_class apart, the rest are extras;
        # SkyRLGymGenerator: extras["max_turns"] = generator.max_turns, env_config from the config.
        env_class = row["env_class"] or cfg.environment.env_class
        extras = {key: value for key, value in row.items() if key not in ("prompt", "env_class")}
        extras["max_turns"] = cfg.generator.max_turns
        env_config = getattr(cfg.environment.skyrl_gym, env_class, dict())
        env = skyrl_gym.make(env_class, env_config=env_config, extras=extras)
        prompt, info = env.init(row["prompt"])
        reference = WebShopEnv(split="dev")
        observation, reference_info = reference.reset(options={"goal_index": row["goal_index"]})
        assert info == reference_info and prompt[-1]["content"].endswith(observation)
        expert = ExpertPolicy(reference)
        done, total = False, 0.0
        while not done:
            action = expert.act(observation, reference_info)
            observation, reward, terminated, truncated, reference_info = reference.step(action)
            output = env.step(f"<action>{action}</action>")
            assert (output["reward"], output["done"]) == (reward, terminated or truncated)
            assert output["metadata"] == {"action": action, **reference_info}
            done, total = output["done"], total + output["reward"]
        assert env.env.max_steps == 15 and total == 1.0


def test_import_without_skyrl_gym_names_the_extra() -> None:
    code = "import sys; sys.modules['skyrl_gym'] = None; import webshop_gym.integrations.skyrl"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.returncode == 1
    assert "ImportError: webshop_gym.integrations.skyrl needs skyrl-gym" in result.stderr
    assert "pip install 'webshop-gym[skyrl]'" in result.stderr
