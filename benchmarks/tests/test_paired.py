"""benchmarks.paired: two runs on the same goals, compared goal by goal."""

from __future__ import annotations

import gzip
import json

import pytest

from benchmarks.paired import compare, main


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
    table = compare(first, second, ["pi_ref", "A*PO"])
    assert table[0] == "| run (100 goals) | success % | score |"
    assert table[2].startswith("| pi_ref | 20.0 [") and table[3].startswith("| A*PO | 30.0 [")
    low, high = (float(x) for x in table[4].split("|")[2].split("[")[1].rstrip("] ").split(","))
    assert table[4].startswith("| A*PO - pi_ref | 10.0 [") and 4.0 <= low < 10.0 < high <= 16.0


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
        and "python -m benchmarks.paired" in capsys.readouterr().out
    )
