"""benchmarks.harness.paired: two runs on the same goals, compared goal by goal."""

from __future__ import annotations

import pytest

from benchmarks.harness.paired import compare, main, render
from webshop_gym.trajectories import TRAJECTORY_FORMAT, Episode, Step, write_trajectories


def write_run(path, successes, manifest="m"):
    """A runner's episode file: one bought product per goal, a success or a half score."""
    episodes = []
    for goal, success in enumerate(successes):
        header = {
            "type": "episode",
            "format": TRAJECTORY_FORMAT,
            "run": {"agent": "a", "split_manifest": manifest},
            "seed": goal,
            "goal_index": goal,
            "goal": {},
            "observation": "WebShop [SEP] Search",
            "info": {"instruction": "i want a thing", "page": "search"},
        }
        score = 0.5 + success / 2
        info = {"page": "done", "action_error": "", "score": score, "success": bool(success)}
        episodes.append(Episode(header, (Step(1, "click[buy now]", "Thank you", score, True, False, info),)))
    return write_trajectories(path, episodes)


def test_the_difference_pairs_goals(tmp_path):
    # B wins the same 20 goals A wins and 10 more: +10 points, and every resample agrees.
    first = write_run(tmp_path / "a.jsonl.xz", [1] * 20 + [0] * 80)
    second = write_run(tmp_path / "b.jsonl.xz", [1] * 30 + [0] * 70)
    comparison = compare(first, second, ["pi_ref", "A*PO"])
    assert comparison["goals"] == 100 and list(comparison["rows"]) == ["pi_ref", "A*PO", "A*PO - pi_ref"]
    assert comparison["rows"]["pi_ref"]["success"][0] == pytest.approx(20.0)
    assert comparison["rows"]["A*PO"]["success"][0] == pytest.approx(30.0)
    mean, low, high = comparison["rows"]["A*PO - pi_ref"]["success"]
    assert mean == pytest.approx(10.0) and 4.0 <= low < 10.0 < high <= 16.0
    assert render(comparison)[0] == "| run (100 goals) | success % | score |"


def test_runs_on_different_goals_are_refused(tmp_path, capsys):
    first = write_run(tmp_path / "a.jsonl.xz", [1, 0, 0])
    with pytest.raises(ValueError, match="played different goals"):
        compare(first, write_run(tmp_path / "b.jsonl.xz", [1, 0]), ["a", "b"])
    with pytest.raises(ValueError, match="played different goals"):
        compare(first, write_run(tmp_path / "c.jsonl.xz", [1, 0, 0], manifest="other"), ["a", "b"])
    out = tmp_path / "record.md"
    main([str(first), str(first), "--names", "x", "y", "--out", str(out)])
    assert (
        "| y - x | 0.0 [0.0, 0.0] |" in out.read_text()
        and "python -m benchmarks.harness.paired" in capsys.readouterr().out
    )
