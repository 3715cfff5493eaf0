"""Recorded trajectories: durable lines, a reader that survives a torn end, exact replay."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from webshop_gym.envs import WebShopEnv
from webshop_gym.scripted import ExpertPolicy
from webshop_gym.trajectories import TRAJECTORY_FORMAT, TrajectoryRecorder, read_trajectories, replay


def record_expert_episodes(path: Path, goals: range, **env_arguments) -> list[float]:
    env = WebShopEnv(split="test", **env_arguments)
    returns = []
    with TrajectoryRecorder(path, source="test") as recorder:
        for goal in goals:
            observation, info = recorder.reset(env, seed=goal, goal_index=goal)
            expert = ExpertPolicy(env)
            total, done = 0.0, False
            while not done:
                observation, reward, terminated, truncated, info = recorder.step(
                    env, expert.act(observation, info)
                )
                total += reward
                done = terminated or truncated
            returns.append(total)
    return returns


def test_round_trip_of_episodes(tmp_path: Path) -> None:
    path = tmp_path / "log.jsonl"
    returns = record_expert_episodes(path, range(3), observation_mode="text_rich")
    recorded = read_trajectories(path)
    assert not recorded.dropped_torn_line
    assert [e.total_reward for e in recorded.episodes] == returns
    first = recorded.episodes[0]
    assert first.header["format"] == TRAJECTORY_FORMAT and first.header["source"] == "test"
    assert first.header["env"]["observation_mode"] == "text_rich"
    assert first.header["goal"]["instruction"] == first.header["info"]["instruction"]
    assert first.actions[0].startswith("search[") and first.actions[-1] == "click[buy now]"
    assert first.finished and first.steps[-1].info["reward_breakdown"]["total"] == returns[0]
    assert [s.t for s in first.steps] == list(range(1, len(first.steps) + 1))


@pytest.mark.parametrize("mode", ["text", "html"])
def test_replay_reproduces_rewards_and_observations(tmp_path: Path, mode: str) -> None:
    path = tmp_path / "log.jsonl"
    returns = record_expert_episodes(path, range(2), observation_mode=mode, reward="shaped")
    for episode, expected in zip(read_trajectories(path).episodes, returns, strict=True):
        result = replay(episode)
        assert result.matches, result.mismatches
        assert result.replayed_return == result.recorded_return == pytest.approx(expected)


def test_replay_reports_a_tampered_reward(tmp_path: Path) -> None:
    path = tmp_path / "log.jsonl"
    record_expert_episodes(path, range(1))
    lines = path.read_text(encoding="utf-8").splitlines()
    last = json.loads(lines[-1])
    last["reward"] = 0.123
    lines[-1] = json.dumps(last)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    result = replay(read_trajectories(path).episodes[0])
    assert not result.matches and "recorded 0.123" in result.mismatches[0]


def test_each_line_is_on_disk_when_the_call_returns(tmp_path: Path) -> None:
    path = tmp_path / "log.jsonl"
    env = WebShopEnv(split="test")
    recorder = TrajectoryRecorder(path)
    recorder.reset(env, seed=0, goal_index=0)
    recorder.step(env, "search[shoes]")
    # Read through a separate handle while the recorder is still open (as after a crash).
    assert [e.actions for e in read_trajectories(path).episodes] == [["search[shoes]"]]
    recorder.close()


@pytest.mark.parametrize("cut", [1, 2, 7, 40])
def test_a_torn_last_line_is_dropped(tmp_path: Path, cut: int) -> None:
    path = tmp_path / "log.jsonl"
    record_expert_episodes(path, range(1))
    data = path.read_bytes()
    whole = read_trajectories(path).episodes[0]
    path.write_bytes(data[:-cut])  # a crash in the middle of writing the last line
    torn = read_trajectories(path)
    if cut == 1:  # only the newline is missing: the line is whole JSON and is kept
        assert not torn.dropped_torn_line and torn.episodes[0].steps == whole.steps
    else:
        assert torn.dropped_torn_line and torn.episodes[0].steps == whole.steps[:-1]


def test_a_torn_multibyte_character_is_dropped_too(tmp_path: Path) -> None:
    path = tmp_path / "log.jsonl"
    env = WebShopEnv(split="test")
    with TrajectoryRecorder(path) as recorder:
        recorder.reset(env, seed=0, goal_index=0)
    path.write_bytes(path.read_bytes() + '{"type": "step", "action": "search[caf\u00e9'.encode()[:-1])
    assert read_trajectories(path).dropped_torn_line


def test_damage_before_the_end_is_an_error(tmp_path: Path) -> None:
    path = tmp_path / "log.jsonl"
    record_expert_episodes(path, range(1))
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    lines[1] = lines[1][:10] + "\n"
    path.write_text("".join(lines), encoding="utf-8")
    with pytest.raises(ValueError, match=r"log\.jsonl:2: not a JSON line"):
        read_trajectories(path)


def test_steps_need_an_episode_line(tmp_path: Path) -> None:
    path = tmp_path / "log.jsonl"
    path.write_text('{"type": "step", "t": 1}\n', encoding="utf-8")
    with pytest.raises(ValueError, match="before any episode"):
        read_trajectories(path)
