"""The envs a run plays in: Gymnasium's `EnvSpec` with the run's arguments, and the Stage 1
cache key that names them (pinned: a changed key would orphan every cached reference run)."""

from __future__ import annotations

import hashlib
import json

import pytest

from apo_agent.config import TrainConfig
from apo_agent.optimal_values import ReferenceRewardCache
from apo_agent.rollout.envs import env_spec
from apo_agent.trainer import _reference_cache_key

# Keys and file names computed by the code before `EnvSpec` became Gymnasium's.
PINNED = [
    (
        {},
        {"env_id": "WebShop-Mini-Text-v0", "goals": "human", "reward": "original", "max_steps": 15},
        "685bc756ad6b55c8e6d7c376",
    ),
    (
        {"catalog": "mini"},
        {
            "env_id": "WebShop-Mini-Text-v0",
            "goals": "human",
            "reward": "original",
            "max_steps": 15,
            "catalog": "mini",
        },
        "33253b8e2d98efe0c649a056",
    ),
    (
        {
            "reward": "shaped",
            "catalog": "/x/webshop-1k",
            "max_steps": 7,
            "env_id": "WebShop-Text-v0",
            "goals": "synthetic",
        },
        {
            "env_id": "WebShop-Text-v0",
            "goals": "synthetic",
            "reward": "shaped",
            "max_steps": 7,
            "shaping_discount": 1.0,
            "catalog": "/x/webshop-1k",
        },
        "178a5dd00c833f810ed5e3c8",
    ),
]


@pytest.mark.parametrize(("settings", "env", "digest"), PINNED)
def test_reference_cache_key_is_unchanged(settings, env, digest, tmp_path):
    config = TrainConfig(sft_epochs=1, **settings)
    key = _reference_cache_key("abc123", env_spec(config), config)
    assert key["env"] == env
    assert hashlib.sha256(json.dumps(key, sort_keys=True, default=str).encode()).hexdigest()[:24] == digest
    assert ReferenceRewardCache(tmp_path, key).path.name == f"reference-rewards-{digest}.json"
