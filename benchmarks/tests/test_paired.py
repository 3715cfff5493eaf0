"""benchmarks.harness.paired: two runs on the same goals, compared goal by goal."""

from __future__ import annotations

import gzip
import json

import pytest

from benchmarks.harness.paired import compare, main, render


def write_run(path, successes, manifest="m"):
    with gzip.open(path, "wt", encoding="utf-8") as handle:
        for goal, success in enumerate(successes):
            record = {
                "split_manifest": manifest,
                "goal_index": goal,
                "success": success,
                "score": 0.5 + success / 2,
            }
            handle.write(json.dumps(record) + "\n")
    return path


def test_the_difference_pairs_goals(tmp_path):
    # B wins the same 20 goals A wins and 10 more: +10 points, and every resample agrees.
    first = write_run(tmp_path / "a.jsonl.gz", [1] * 20 + [0] * 80)
    second = write_run(tmp_path / "b.jsonl.gz", [1] * 30 + [0] * 70)
    comparison = compare(first, second, ["pi_ref", "A*PO"])
    assert comparison["goals"] == 100 and list(comparison["rows"]) == ["pi_ref", "A*PO", "A*PO - pi_ref"]
    assert comparison["rows"]["pi_ref"]["success"][0] == pytest.approx(20.0)
    assert comparison["rows"]["A*PO"]["success"][0] == pytest.approx(30.0)
    mean, low, high = comparison["rows"]["A*PO - pi_ref"]["success"]
    assert mean == pytest.approx(10.0) and 4.0 <= low < 10.0 < high <= 16.0
    assert render(comparison)[0] == "| run (100 goals) | success % | score |"


def test_runs_on_different_goals_are_refused(tmp_path, capsys):
    first = write_run(tmp_path / "a.jsonl.gz", [1, 0, 0])
    with pytest.raises(ValueError, match="played different goals"):
        compare(first, write_run(tmp_path / "b.jsonl.gz", [1, 0]), ["a", "b"])
    with pytest.raises(ValueError, match="played different goals"):
        compare(first, write_run(tmp_path / "c.jsonl.gz", [1, 0, 0], manifest="other"), ["a", "b"])
    out = tmp_path / "record.md"
    main([str(first), str(first), "--names", "x", "y", "--out", str(out)])
    assert (
        "| y - x | 0.0 [0.0, 0.0] |" in out.read_text()
        and "python -m benchmarks.harness.paired" in capsys.readouterr().out
    )
