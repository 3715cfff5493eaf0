"""What each training run of a comparison cost on its device, from the runs' own records.

    python -m benchmarks.training.gpu_costs --work runs/smollm2-gpu/runs --out runs/smollm2-gpu/out/gpu.md

One row per finished run (``<work>/<algorithm>-seed<k>/results.json`` and ``metrics.csv``):
Stage 2 steps and episodes, Stage 1's seconds, the mean rollout and update seconds of a step,
the peak GPU memory of its process, and test success before and after. Runs that share a GPU
side by side slow each other down: read the seconds as that machine's, under that load.
"""

from __future__ import annotations

import argparse
import json
import statistics
from pathlib import Path
from typing import Any

from apo_agent.runtime.metrics import read_metrics
from benchmarks.markdown import table


def run_costs(folder: Path) -> dict[str, Any] | None:
    """One run's figures, or None while it has no results.json (unfinished)."""
    path = folder / "results.json"
    if not path.is_file():
        return None
    results = json.loads(path.read_text())
    steps = [
        row for row in read_metrics(folder / "metrics.csv") if row.get("time/rollout_s") not in (None, "")
    ]
    peak = results.get("peak_gpu_memory_gib")
    return {
        "run": folder.name,
        "steps": len(steps),
        "episodes": int(results["stage2_episodes"]),
        "stage1_s": float(results["wall_time_s"].get("stage1", 0.0)),
        "stage1_episodes": int(results["stage1_episodes"]),
        "rollout_s": statistics.fmean(float(r["time/rollout_s"]) for r in steps) if steps else float("nan"),
        "update_s": statistics.fmean(float(r["time/update_s"]) for r in steps) if steps else float("nan"),
        "stage2_s": float(results["wall_time_s"]["stage2"]),
        "peak_gib": float("nan") if peak is None else float(peak),
        "reference_success": float(results["test"]["reference"]["success"]),
        "success": float(results["test"]["trained"]["success"]),
    }


# Rendering: the rows as a Markdown table.

COLUMNS = {  # header: right-aligned (a number)
    "run": False,
    "Stage 1 episodes": True,
    "Stage 1 s": True,
    "Stage 2 steps": True,
    "Stage 2 episodes": True,
    "Stage 2 s": True,
    "rollout s / step": True,
    "update s / step": True,
    "peak GPU GiB": True,
    "test success: pi_ref -> trained %": False,
}


def markdown(rows: list[dict[str, Any]]) -> str:
    """`run_costs` rows as one table, a line per run."""
    cells = [
        [
            r["run"],
            r["stage1_episodes"],
            f"{r['stage1_s']:.0f}",
            r["steps"],
            r["episodes"],
            f"{r['stage2_s']:.0f}",
            f"{r['rollout_s']:.2f}",
            f"{r['update_s']:.2f}",
            f"{r['peak_gib']:.2f}",
            f"{r['reference_success']:.0f} -> {r['success']:.0f}",
        ]
        for r in rows
    ]
    return "\n".join(table(list(COLUMNS), cells, numeric=list(COLUMNS.values()))) + "\n"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--work", type=Path, required=True, help="the folder holding the run folders")
    parser.add_argument("--out", type=Path, required=True, help="the Markdown file to write")
    arguments = parser.parse_args(argv)
    folders = sorted(p for p in arguments.work.iterdir() if p.is_dir()) if arguments.work.is_dir() else []
    rows = [row for row in map(run_costs, folders) if row is not None]
    if not rows:
        parser.exit(1, f"no finished run (results.json) under {arguments.work}\n")
    arguments.out.parent.mkdir(parents=True, exist_ok=True)
    text = markdown(rows)
    arguments.out.write_text(text)
    print(text)


if __name__ == "__main__":
    main()
