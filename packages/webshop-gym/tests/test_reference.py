"""The env reference page matches the code, and the documented info keys are the real ones."""

from __future__ import annotations

import importlib.util
from pathlib import Path

from webshop_gym.agents.scripted import ExpertPolicy
from webshop_gym.envs import INFO_KEYS, PURCHASE_INFO_KEYS, WebShopEnv

PACKAGE = Path(__file__).resolve().parents[1]
PAGE = PACKAGE / "docs" / "env-reference.md"


def env_reference() -> str:
    # A developer script, not part of the installed package: load it from its file.
    spec = importlib.util.spec_from_file_location("env_reference", PACKAGE / "scripts" / "env_reference.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.env_reference()  # type: ignore[no-any-return]


def test_committed_reference_page_is_up_to_date():
    assert PAGE.read_text(encoding="utf-8") == env_reference(), (
        "docs/env-reference.md is stale: run `python packages/webshop-gym/scripts/env_reference.py > "
        "packages/webshop-gym/docs/env-reference.md`"
    )


def test_documented_info_keys_are_exactly_the_env_info_keys():
    env = WebShopEnv(split="test")
    observation, info = env.reset(seed=0, options={"goal_index": 0})
    assert set(info) == set(INFO_KEYS)
    expert, terminated = ExpertPolicy(env), False
    while not terminated:
        observation, _, terminated, _, info = env.step(expert.act(observation, info))
        if not terminated:
            assert set(info) == set(INFO_KEYS)
    assert set(info) == set(INFO_KEYS) | set(PURCHASE_INFO_KEYS)
