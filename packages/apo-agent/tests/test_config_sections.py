"""The configuration split into sections keeps what the flat one held: presets, recorded
runs' ``config.json`` files, command-line keys and the old import paths."""

from __future__ import annotations

import dataclasses
import importlib
import json
from pathlib import Path

import pytest

from apo_agent.__main__ import parse_arguments
from apo_agent.config import (
    DecodingConfig,
    EnvConfig,
    ModelConfig,
    RLConfig,
    RunConfig,
    TinyModelConfig,
    TrainConfig,
    WarmStartConfig,
)
from apo_agent.presets import PRESETS

DATA = Path(__file__).parent / "data"
SECTIONS = (RunConfig, ModelConfig, DecodingConfig, EnvConfig, TinyModelConfig, WarmStartConfig, RLConfig)


def test_every_preset_resolves_to_the_values_it_had_before_the_split():
    # presets-before-split.json: each preset's resolved TrainConfig, written by the flat config.
    before = json.loads((DATA / "presets-before-split.json").read_text())
    assert sorted(before) == sorted(PRESETS)
    for name in PRESETS:
        now = json.loads(json.dumps(dataclasses.asdict(TrainConfig.from_preset(name)), default=str))
        assert now == before[name], name


def test_each_field_belongs_to_exactly_one_section():
    owners: dict[str, list[str]] = {}
    for section in SECTIONS:
        for f in dataclasses.fields(section):
            owners.setdefault(f.name, []).append(section.__name__)
    assert {name for name, where in owners.items() if len(where) > 1} == set()
    assert set(owners) == {f.name for f in dataclasses.fields(TrainConfig)}
    # The RL config holds no warm-start or tiny-model field, and the other way round.
    rl = {f.name for f in dataclasses.fields(RLConfig)}
    assert not rl & {f.name for f in dataclasses.fields(WarmStartConfig)}
    assert not any(name.startswith(("tiny_", "sft_", "demo_")) for name in rl)


def test_a_section_is_a_standalone_config_with_its_own_checks():
    config = TrainConfig.from_preset("cpu-demo", beta2=0.01, sft_epochs=2)
    assert config.section(RLConfig) == RLConfig(
        **{f.name: getattr(config, f.name) for f in dataclasses.fields(RLConfig)}
    )
    assert config.section(RLConfig).beta2 == 0.01 and config.section(WarmStartConfig).sft_epochs == 2
    with pytest.raises(ValueError, match="group_size"):
        RLConfig(algorithm="grpo", group_size=1)
    with pytest.raises(ValueError, match="probability"):
        WarmStartConfig(demo_skip_options_prob=2.0)


def test_a_config_json_written_before_the_split_loads():
    stored = json.loads((DATA / "old-run-config.json").read_text())
    config = TrainConfig(**stored)
    assert json.loads(json.dumps(config.to_dict(), default=str)) == stored
    assert config.section(RLConfig).algorithm == stored["algorithm"]


def test_the_command_line_keys_stay_flat():
    config = parse_arguments(
        [
            *("--set", "goals_per_step=16", "--set", "cpu_budget_s=1500", "--set", "torch_threads=1"),
            *("--set", "sft_epochs=3", "--set", "rollout_engine=transformers", "--set", "tiny_layers=3"),
            *("--set", "demo_option_variants=2", "--set", "rl_option_variants=1", "--set", "beta2=0.01"),
        ]
    )
    assert (config.goals_per_step, config.cpu_budget_s, config.torch_threads) == (16, 1500.0, 1)
    assert (config.tiny_layers, config.demo_option_variants, config.rl_option_variants) == (3, 2, 1)
    assert config.section(RLConfig).beta2 == 0.01


@pytest.mark.parametrize(
    "old, names",
    [
        ("apo_agent.rollout", ["Episode", "EnvSpec", "collect_episodes", "make_envs", "action_from_answer"]),
        ("apo_agent.warm_start", ["NoisyExpert", "collect_demonstrations", "supervised_warm_start"]),
        ("apo_agent.config", ["PRESETS", "ALGORITHMS", "TrainConfig"]),
        ("apo_agent.trainer", ["env_spec", "prompt_encoder", "split_goals", "apo_update", "grpo_update"]),
        ("apo_agent.pipeline", ["build_reference", "evaluate_reference", "run_pipeline"]),
    ],
)
def test_the_old_import_paths_keep_working(old, names):
    module = importlib.import_module(old)
    assert all(hasattr(module, name) for name in names)
