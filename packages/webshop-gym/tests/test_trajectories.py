"""Recorded trajectories: durable lines, a reader that survives a torn end, exact replay."""

from __future__ import annotations

import errno
import json
import os
import warnings
from collections.abc import Sequence
from pathlib import Path

import pytest

from webshop_gym.agents.scripted import ExpertPolicy
from webshop_gym.envs import WebShopEnv
from webshop_gym.trajectories import (
    TRAJECTORY_FORMAT,
    TrajectoryRecorder,
    read_trajectories,
    replay,
    write_trajectories,
)
from webshop_gym.web.snapshots import episode_snapshot, restore_episode


def record_expert_episodes(path: Path, goals: Sequence[int], **env_arguments) -> list[float]:
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


COMPRESSIONS = [(".gz", b"\x1f\x8b", "gzip"), (".xz", b"\xfd7zXZ\x00", "xz")]


@pytest.mark.parametrize(("suffix", "magic", "kind"), COMPRESSIONS)
def test_a_compressed_name_writes_the_same_episodes_compressed(
    tmp_path: Path, suffix: str, magic: bytes, kind: str
) -> None:
    plain = tmp_path / "log.jsonl"
    returns = record_expert_episodes(plain, range(3))
    episodes = read_trajectories(plain).episodes
    packed = write_trajectories(tmp_path / f"packed.jsonl{suffix}", episodes)
    assert packed.read_bytes().startswith(magic) and packed.stat().st_size < plain.stat().st_size / 3
    again = read_trajectories(packed).episodes
    assert again == episodes and [e.total_reward for e in again] == returns
    assert replay(again[0]).matches
    # The same episodes give the same bytes (no timestamp in the header).
    assert write_trajectories(tmp_path / f"again.jsonl{suffix}", episodes).read_bytes() == packed.read_bytes()


def test_xz_keeps_pages_that_recur_across_episodes_smaller_than_gzip(tmp_path: Path) -> None:
    plain = tmp_path / "log.jsonl"
    record_expert_episodes(plain, [*range(20)] * 2)  # each page again, 20 episodes (> 32 KB) later
    episodes = read_trajectories(plain).episodes
    gz = write_trajectories(tmp_path / "run.jsonl.gz", episodes).stat().st_size
    xz = write_trajectories(tmp_path / "run.jsonl.xz", episodes).stat().st_size
    assert xz < gz / 2


@pytest.mark.parametrize(("suffix", "magic", "kind"), COMPRESSIONS)
def test_a_cut_compressed_file_is_a_clear_error_and_a_recorder_refuses_it(
    tmp_path: Path, suffix: str, magic: bytes, kind: str
) -> None:
    record_expert_episodes(tmp_path / "log.jsonl", range(2))
    episodes = read_trajectories(tmp_path / "log.jsonl").episodes
    packed = write_trajectories(tmp_path / f"packed.jsonl{suffix}", episodes)
    packed.write_bytes(packed.read_bytes()[:-20])
    with pytest.raises(ValueError, match=rf"not a whole {kind} file.*record it again"):
        read_trajectories(packed)
    with pytest.raises(ValueError, match=r"name it \*\.jsonl"):
        TrajectoryRecorder(tmp_path / f"live.jsonl{suffix}")


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
    with warnings.catch_warnings(record=True) as warned:
        warnings.simplefilter("always")
        torn = read_trajectories(path)
    assert len(warned) == (cut > 1)
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
    with pytest.warns(RuntimeWarning, match="torn last line"):
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


# -- issue 40.4: a full disk leaves whole lines only; readers survive a torn tail -------------


def full_disk(monkeypatch, room: int) -> None:
    """Makes writes fail with ENOSPC once ``room`` more bytes have been written (a partial write first)."""
    real_write = os.write
    left = [room]

    def write(fd: int, data) -> int:
        if left[0] <= 0:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        written = real_write(fd, bytes(data)[: left[0]])
        left[0] -= written
        return written

    monkeypatch.setattr(os, "write", write)


def test_a_full_disk_leaves_no_partial_line_and_recording_goes_on_after(tmp_path: Path, monkeypatch) -> None:
    path = tmp_path / "log.jsonl"
    env = WebShopEnv(split="test")
    recorder = TrajectoryRecorder(path)
    recorder.reset(env, seed=0, goal_index=0)
    recorder.step(env, "search[shoes]")
    whole = path.read_bytes()
    with monkeypatch.context() as patched:
        full_disk(patched, room=40)  # 40 bytes of the next line fit, then the disk is full
        observation, reward, terminated, truncated, info = env.step("click[back to search]")
        with pytest.raises(OSError) as failed:
            recorder.record_step("click[back to search]", observation, reward, terminated, truncated, info)
        assert failed.value.errno == errno.ENOSPC
    assert path.read_bytes() == whole  # cut back to the last whole line
    recorder.step(env, "search[red shoes]")  # space is back: recording goes on
    recorder.close()
    recorded = read_trajectories(path)
    assert not recorded.dropped_torn_line
    assert recorded.episodes[0].actions == ["search[shoes]", "search[red shoes]"]


def test_a_failed_fsync_takes_the_line_back_too(tmp_path: Path, monkeypatch) -> None:
    path = tmp_path / "log.jsonl"
    env = WebShopEnv(split="test")
    recorder = TrajectoryRecorder(path)
    recorder.reset(env, seed=0, goal_index=0)
    whole = path.read_bytes()

    def no_space(fd: int) -> None:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    with monkeypatch.context() as patched:
        patched.setattr(os, "fsync", no_space)
        with pytest.raises(OSError):
            recorder.step(env, "search[shoes]")
    assert path.read_bytes() == whole


def test_no_file_until_the_first_record_and_none_when_it_fails(tmp_path: Path, monkeypatch) -> None:
    path = tmp_path / "logs" / "log.jsonl"
    env = WebShopEnv(split="test")
    recorder = TrajectoryRecorder(path)
    assert not path.exists()  # a recorder that never records leaves nothing
    with monkeypatch.context() as patched:
        full_disk(patched, room=100)
        with pytest.raises(OSError):
            recorder.reset(env, seed=0, goal_index=0)
    assert not path.exists()  # not an empty (or partial) file either
    recorder.reset(env, seed=0, goal_index=0)
    assert len(read_trajectories(path).episodes) == 1


def test_a_torn_tail_is_skipped_with_a_warning(tmp_path: Path) -> None:
    path = tmp_path / "log.jsonl"
    record_expert_episodes(path, range(1))
    path.write_bytes(path.read_bytes()[:-20])
    with pytest.warns(RuntimeWarning, match=r"log\.jsonl:\d+: skipped a torn last line"):
        recorded = read_trajectories(path)
    assert recorded.dropped_torn_line and recorded.episodes[0].steps


def test_damage_in_the_middle_says_how_to_keep_the_lines_before_it(tmp_path: Path) -> None:
    path = tmp_path / "log.jsonl"
    record_expert_episodes(path, range(1))
    lines = path.read_bytes().splitlines(keepends=True)
    # What old recorders left on a full disk: a partial line, then the next line appended to it.
    path.write_bytes(b"".join([*lines[:2], lines[2][:30] + lines[3], *lines[4:]]))
    with pytest.raises(ValueError, match=r"log\.jsonl:3: not a JSON line") as damaged:
        read_trajectories(path)
    assert "head -n 2" in str(damaged.value)


# -- issue 40.3: a branch records its own steps only ---------------------------------------


def test_a_branch_records_only_its_own_steps_and_reads_back_whole(tmp_path: Path) -> None:
    path = tmp_path / "log.jsonl"
    env = WebShopEnv(split="test", observation_mode="html")
    recorder = TrajectoryRecorder(path, source="web")
    recorder.reset(env, seed=3, goal_index=3)
    actions = ["search[shoes]", "click[next >]", "click[< prev]", "click[next >]"]
    snapshots = []
    for action in actions:
        recorder.step(env, action)
        snapshots.append(episode_snapshot(env))
    before = path.stat().st_size
    restore_episode(env, snapshots[0])  # go on from step 1 of episode 0
    observation, reward, terminated, truncated, info = env.step("click[back to search]")
    recorder.record_step(
        "click[back to search]", observation, reward, terminated, truncated, info, branch_of=(0, 1)
    )
    recorder.close()
    lines = path.read_bytes()[before:].splitlines()
    assert len(lines) == 2  # the branch's start and its one step, not the shared first step again
    assert len(lines[0]) < 1000
    first, branch = read_trajectories(path).episodes
    assert first.actions == actions and first.header["episode"] == 0
    assert branch.actions == ["search[shoes]", "click[back to search]"]
    assert branch.branch_of == (0, 1) and branch.header["seed"] == 3 and branch.header["goal_index"] == 3
    assert branch.steps[0] is first.steps[0]
    assert [step.t for step in branch.steps] == [1, 2]
    assert replay(first).matches and replay(branch).matches


def test_a_branch_of_nothing_is_damage(tmp_path: Path) -> None:
    path = tmp_path / "log.jsonl"
    record_expert_episodes(path, range(1))
    lines = path.read_text(encoding="utf-8").splitlines()
    for branch_of, complaint in (({"episode": 5, "t": 1}, "no episode 5"), ({"episode": 0, "t": 99}, "99")):
        header = {"type": "episode", "format": TRAJECTORY_FORMAT, "episode": 1, "branch_of": branch_of}
        path.write_text("\n".join([*lines, json.dumps(header)]) + "\n", encoding="utf-8")
        with pytest.raises(ValueError, match=complaint):
            read_trajectories(path)
