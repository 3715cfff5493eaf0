"""Moved to `apo_agent.rollout.records`; this module keeps the old import path."""

from __future__ import annotations

from apo_agent.rollout.records import (
    TurnRecord,
    episode_record,
    read_token_records,
    turns_of,
    write_token_records,
)

__all__ = ["TurnRecord", "episode_record", "read_token_records", "turns_of", "write_token_records"]
