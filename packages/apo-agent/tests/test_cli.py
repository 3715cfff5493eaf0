"""The command line and the configuration checks: bad settings say how to fix them."""

from __future__ import annotations

import pytest

from apo_agent.__main__ import parse_arguments, parse_config_value
from apo_agent.config import TrainConfig
from apo_agent.presets import PRESETS


def test_no_arguments_is_the_cpu_demo():
    config = parse_arguments([])
    assert config.model == "tiny" and config.algorithm == "apo" and config.device == "cpu"
    assert config.env_id == "WebShop-Mini-Text-v0"
    assert config.extra["command"] == "python -m apo_agent"


def test_flags_and_set_override_the_preset():
    overrides = ["beta1=0.25", "test_goals=none", "goal_filter=none", "goals_per_step=16"]
    config = parse_arguments(["--algorithm", "grpo", "--steps", "3", *(f"--set={o}" for o in overrides)])
    assert (config.algorithm, config.steps, config.beta1) == ("grpo", 3, 0.25)
    assert config.test_goals is None and config.goal_filter == "none"


def test_a_hub_model_is_pi_ref_as_it_is():
    config = parse_arguments(["--preset", "gpu-1.5b", "--model", "Qwen/Qwen2.5-0.5B-Instruct"])
    assert config.model == "Qwen/Qwen2.5-0.5B-Instruct" and config.sft_epochs == 0


@pytest.mark.parametrize(
    "argv, message",
    [
        (["--set", "no_such_field=1"], "unknown field"),
        (["--set", "beta1"], "FIELD=VALUE"),
        (["--set", "beta2=0"], "beta2 must be positive"),
        (["--set", "temperature=0"], "greedy decoding is only for evaluation"),
        (["--set", "sft_epochs=0"], "set sft_epochs >= 1"),
    ],
)
def test_bad_arguments_exit_with_a_message(argv, message, capsys):
    with pytest.raises(SystemExit) as error:
        parse_arguments(argv)
    assert message in str(error.value) + capsys.readouterr().err


def test_values_take_the_type_of_their_field():
    assert parse_config_value("lora_rank", "8") == 8
    assert parse_config_value("beta2", "0.01") == 0.01
    assert parse_config_value("bf16", "yes") is True
    assert parse_config_value("catalog", "1k") == "1k"
    assert parse_config_value("train_goals", "None") is None


def test_every_preset_is_a_valid_config():
    for name in PRESETS:
        assert TrainConfig.from_preset(name).model


def test_from_preset_rejects_unknown_names():
    with pytest.raises(ValueError, match="unknown preset"):
        TrainConfig.from_preset("huge")
    with pytest.raises(ValueError, match="unknown config fields"):
        TrainConfig.from_preset("cpu-demo", stepz=3)


def test_lora_on_the_tiny_model_is_refused():
    with pytest.raises(ValueError, match="lora_rank=0"):
        TrainConfig(model="tiny", sft_epochs=1, lora_rank=8)


def test_negative_option_variants_are_refused():
    with pytest.raises(ValueError, match="demo_option_variants must be >= 0"):
        TrainConfig.from_preset("cpu-demo", demo_option_variants=-1)
    assert TrainConfig.from_preset("cpu-demo", demo_option_variants=3).demo_option_variants == 3
