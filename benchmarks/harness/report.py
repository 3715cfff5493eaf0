"""Tables, plots and failure analysis from the episode files of `benchmarks.harness.run`.

The episode files are `webshop_gym.trajectories` files (``episodes/*.jsonl.xz``, what
``webshop-gym replay`` plays); `episode_record` reads each episode into the flat record
the tables, plots and failure analysis use.

    python -m benchmarks.harness.report benchmarks/results/mini-test          # rewrite one folder's report
    python -m benchmarks.harness.report benchmarks/results/mini-test benchmarks/results/1k-test \\
        --out benchmarks/results                                      # one report over several

Writes into the output folder:

* ``results.md``: per agent, env and split: the catalogue, goal source and split manifest
  (the first 12 hex digits of its SHA-256, `webshop_gym.data.splits`) that name the goals
  played, episodes, score (100 x mean reward), success % (reward 1), bought % (episodes
  that ended with a purchase), average steps, invalid actions per episode, and the
  paper's per-component averages: attribute (share of goal attributes matched), option
  (share of goal options matched), type (r_type) and price (within the limit).
  Components average over all episodes, an episode without a purchase counting 0; goals
  without options (or without a price limit) are left out of the option (price) average.
  Then the commands and the machine.
* ``summary.json``: the same rows as data.
* ``plots/scores.png`` (score and success per agent), ``plots/categories.png`` (success
  per product category).
* ``failures.md``: failed episodes grouped by kind (`failure_kind`), counts and examples.
"""

from __future__ import annotations

import argparse
import json
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from webshop_gym.render import page_without_instruction
from webshop_gym.trajectories import Episode, read_trajectories

FAILURE_KINDS = (
    "search loop",
    "ran out of steps",
    "invalid actions",
    "wrong product",
    "wrong option",
    "over budget",
)
FAILURE_HELP = {
    "search loop": "no purchase; searched 3 or more times",
    "ran out of steps": "no purchase within the step limit (browsing without deciding)",
    "invalid actions": "no purchase; most actions were rejected by the env",
    "wrong product": "bought a product of the wrong type or without the asked attributes",
    "wrong option": "right product, but not all asked options selected",
    "over budget": "right product and options, but over the price limit",
}
SEARCH_LOOP_SEARCHES = 3
EXAMPLES_PER_KIND = 2
MANIFEST_DIGITS = 12  # of the split manifest's SHA-256 in the tables (summary.json has all 64)
NOT_RECORDED = "not recorded"  # episodes run before runs named their goals
DEFAULT_OBSERVATION_CHARS = 200  # page text kept per step in a record

Record = Mapping[str, Any]


# -- loading -----------------------------------------------------------------------------


def page_text(observation: str, instruction: str, limit: int) -> str:
    """The page without the instruction header every page repeats, cut to ``limit`` characters."""
    return page_without_instruction(observation, instruction)[:limit]


def episode_record(episode: Episode, observation_chars: int = DEFAULT_OBSERVATION_CHARS) -> dict[str, Any]:
    """One recorded episode of the runner as a flat record: who played which goal (the
    episode line's ``run``), the trajectory (page text without the instruction header, cut to
    ``observation_chars``), the reward breakdown and the purchase."""
    header = episode.header
    instruction = header["info"]["instruction"]
    trajectory: list[dict[str, Any]] = [
        {
            "observation": page_text(header["observation"], instruction, observation_chars),
            "page": header["info"]["page"],
        }
    ]
    for step in episode.steps:
        entry = {
            "action": step.action,
            "reward": step.reward,
            "page": step.info["page"],
            "action_error": step.info["action_error"],
            "observation": page_text(step.observation, instruction, observation_chars),
        }
        if step.agent_output is not None:
            entry["model_output"] = step.agent_output
        trajectory.append(entry)
    last = episode.steps[-1]
    info = last.info
    return {
        **header["run"],
        "seed": header["seed"],
        "goal_index": header["goal_index"],
        "instruction": instruction,
        "goal": header["goal"],
        "trajectory": trajectory,
        "steps": len(episode.steps),
        "seconds": last.seconds,
        "purchased": last.terminated and "purchased_asin" in info,
        "score": float(info.get("score", 0.0)),
        "success": bool(info.get("success", False)),
        "reward_breakdown": info.get("reward_breakdown"),
        "purchased_asin": info.get("purchased_asin"),
        "purchased_options": info.get("purchased_options"),
        "invalid_actions": sum(bool(step.info["action_error"]) for step in episode.steps),
    }


def read_episode_file(path: Path) -> list[dict[str, Any]]:
    """The episode records of one run's trajectory file (``.jsonl``, ``.jsonl.gz`` or ``.jsonl.xz``)."""
    return [episode_record(episode) for episode in read_trajectories(path).episodes]


def load_folder(folder: Path) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The commands (``runs.json``) and the episode records of one results folder."""
    run_file = folder / "runs.json"
    if not run_file.is_file():
        raise FileNotFoundError(
            f"{run_file} not found: is {folder} a folder written by `python -m benchmarks.harness.run`?"
        )
    commands = json.loads(run_file.read_text())
    records = []
    for command in commands:
        for run in command["runs"]:
            records += read_episode_file(folder / run["file"])
    return commands, records


# -- the table ---------------------------------------------------------------------------


def _mean(values: Iterable[float]) -> float | None:
    values = list(values)
    return sum(values) / len(values) if values else None


def _component(record: Record, key: str) -> float | None:
    """A reward component of an episode: 0 without a purchase, None where the goal has no such part."""
    breakdown = record.get("reward_breakdown")
    if key == "r_option" and not record["goal"]["options"]:
        return None
    if key == "r_price" and record["goal"]["price_upper"] >= 1e6:
        return None
    if not breakdown:
        return 0.0
    value = breakdown.get(key)
    return None if value is None else float(value)


Group = tuple[str, str, str, str | None]


def group(records: Iterable[Record]) -> dict[Group, list[Record]]:
    """Episodes by agent, env, split and split manifest: runs on other goals never mix."""
    groups: dict[Group, list[Record]] = defaultdict(list)
    for record in records:
        groups[(record["agent"], record["env"], record["split"], record.get("split_manifest"))].append(record)
    return groups


def summarize(records: Iterable[Record]) -> list[dict[str, Any]]:
    """One row per (agent, env, split, split manifest), in the order first seen."""
    rows = []
    for (agent, env, split, manifest), episodes in group(records).items():
        n = len(episodes)
        row: dict[str, Any] = {
            "agent": agent,
            "env": env,
            "catalogue": episodes[0].get("catalogue"),
            "goal_source": episodes[0].get("goal_source"),
            "split": split,
            "split_manifest": manifest,
            "episodes": n,
            "score": 100 * sum(e["score"] for e in episodes) / n,
            "success": 100 * sum(e["success"] for e in episodes) / n,
            "bought": 100 * sum(e["purchased"] for e in episodes) / n,
            "steps": sum(e["steps"] for e in episodes) / n,
            "invalid": sum(e["invalid_actions"] for e in episodes) / n,
        }
        for name, key in (
            ("attribute", "r_att"),
            ("option", "r_option"),
            ("type", "r_type"),
            ("price", "r_price"),
        ):
            row[name] = _mean(v for e in episodes if (v := _component(e, key)) is not None)
        rows.append(row)
    return rows


def markdown_table(rows: Sequence[Mapping[str, Any]]) -> str:
    header = (
        "| agent | env | catalogue | goals | split | manifest | episodes | score | success % | bought % "
        "| avg steps | invalid / ep | attribute | option | type | price |\n"
        "|---|---|---|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
    )

    def number(value: float | None, digits: int = 2) -> str:
        return "n/a" if value is None else f"{value:.{digits}f}"

    lines = [header]
    for r in rows:
        lines.append(
            f"| {r['agent']} | {r['env']} | {r['catalogue'] or NOT_RECORDED} "
            f"| {r['goal_source'] or NOT_RECORDED} | {r['split']} | {short_manifest(r['split_manifest'])} "
            f"| {r['episodes']} "
            f"| {r['score']:.1f} | {r['success']:.1f} "
            f"| {r['bought']:.0f} | {r['steps']:.1f} | {r['invalid']:.1f} | {number(r['attribute'])} "
            f"| {number(r['option'])} | {number(r['type'])} | {number(r['price'])} |"
        )
    return "\n".join(lines)


def short_manifest(sha256: str | None) -> str:
    """The split manifest as the tables show it.

    >>> short_manifest("166b72465ffb63639b143b1d39dd4ca105a0448b63a5b47415817acdfab5f37a")
    '166b72465ffb'
    >>> short_manifest(None)
    'not recorded'
    """
    return sha256[:MANIFEST_DIGITS] if sha256 else NOT_RECORDED


# -- failures ----------------------------------------------------------------------------


def failure_kind(record: Record) -> str | None:
    """Why an episode failed (one of `FAILURE_KINDS`), or None for a success.

    >>> failure_kind({"success": False, "purchased": False, "steps": 15, "invalid_actions": 2,
    ...               "trajectory": [{}] + [{"action": "search[x]"}] * 3 + [{"action": "click[y]"}] * 12})
    'search loop'
    """
    if record["success"]:
        return None
    actions = [step.get("action", "") for step in record["trajectory"][1:]]
    if not record["purchased"]:
        if record["invalid_actions"] * 2 > max(1, record["steps"]):
            return "invalid actions"
        if sum(a.startswith("search[") for a in actions) >= SEARCH_LOOP_SEARCHES:
            return "search loop"
        return "ran out of steps"
    breakdown = record["reward_breakdown"] or {}
    if breakdown.get("r_type", 0) < 1 or breakdown.get("r_att", 0) < 1:
        return "wrong product"
    if breakdown.get("r_option") is not None and breakdown["r_option"] < 1:
        return "wrong option"
    if breakdown.get("r_price") is False:
        return "over budget"
    return "wrong product"


def _example(record: Record) -> str:
    goal = record["goal"]
    lines = [
        f"- goal {record['goal_index']} (seed {record['seed']}): *{record['instruction']}*",
        f"  - wanted: asin {goal['asin']}, attributes {goal['attributes']}, options {goal['options']}, "
        f"price <= {goal['price_upper']}",
    ]
    for number, step in enumerate(record["trajectory"][1:], 1):
        error = f" **invalid**: {step['action_error'][:100]}" if step["action_error"] else ""
        lines.append(f"  - {number}. `{step['action'][:120]}` -> {step['page']}{error}")
    if record["purchased"]:
        b = record["reward_breakdown"]
        lines.append(
            f"  - bought {record['purchased_asin']} with {record['purchased_options']}: "
            f"reward {record['score']:.2f} "
            f"(type {b['r_type']}, attribute {b['r_att']:.2f}, option {b['r_option']}, price {b['r_price']})"
        )
    return "\n".join(lines)


def failure_report(records: Iterable[Record], examples_per_kind: int = EXAMPLES_PER_KIND) -> str:
    """Markdown: per agent, env and split, the failures by kind with example trajectories."""
    parts = ["# Failure analysis", "", "Kinds (the first that applies):", ""]
    parts += [f"- **{kind}**: {FAILURE_HELP[kind]}" for kind in FAILURE_KINDS]
    for (agent, env, split, manifest), episodes in group(records).items():
        kinds: dict[str, list[Record]] = defaultdict(list)
        for record in episodes:
            kind = failure_kind(record)
            if kind is not None:
                kinds[kind].append(record)
        failed = sum(len(v) for v in kinds.values())
        title = f"{agent} on {env}, {split} split (manifest {short_manifest(manifest)})"
        parts += ["", f"## {title}: {failed} of {len(episodes)} episodes failed", ""]
        if not failed:
            continue
        parts += ["| kind | episodes | share of failures |", "|---|---:|---:|"]
        parts += [
            f"| {kind} | {len(kinds[kind])} | {100 * len(kinds[kind]) / failed:.0f}% |"
            for kind in FAILURE_KINDS
            if kinds[kind]
        ]
        for kind in FAILURE_KINDS:
            for record in kinds[kind][:examples_per_kind]:
                parts += ["", f"**{kind}**", "", _example(record)]
    return "\n".join(parts) + "\n"


# -- plots -------------------------------------------------------------------------------


def _pyplot() -> Any:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def plot_scores(rows: Sequence[Mapping[str, Any]], path: Path) -> Path:
    """Score and success % per agent, one panel per env and split."""
    plt = _pyplot()
    panels = list(dict.fromkeys((r["env"], r["split"]) for r in rows))
    figure, axes = plt.subplots(1, len(panels), figsize=(5.5 * len(panels), 4), squeeze=False)
    for axis, (env, split) in zip(axes[0], panels, strict=True):
        panel = [r for r in rows if (r["env"], r["split"]) == (env, split)]
        x = range(len(panel))
        axis.bar([i - 0.2 for i in x], [r["score"] for r in panel], 0.4, label="score")
        axis.bar([i + 0.2 for i in x], [r["success"] for r in panel], 0.4, label="success %")
        axis.set_xticks(list(x), [r["agent"] for r in panel], rotation=20, ha="right", fontsize=8)
        axis.set_ylim(0, 100)
        axis.set_title(f"{env}\n{split} split", fontsize=9)
        axis.legend(fontsize=8)
    figure.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(path, dpi=110)
    plt.close(figure)
    return path


def plot_categories(records: Sequence[Record], path: Path) -> Path:
    """Success % per product category and agent, one panel per env and split."""
    plt = _pyplot()
    panels = list(dict.fromkeys((r["env"], r["split"]) for r in records))
    figure, axes = plt.subplots(len(panels), 1, figsize=(9, 3.6 * len(panels)), squeeze=False)
    for axis, (env, split) in zip(axes[:, 0], panels, strict=True):
        panel = [r for r in records if (r["env"], r["split"]) == (env, split)]
        agents = list(dict.fromkeys(r["agent"] for r in panel))
        counts = Counter(r["goal"]["category"] for r in panel if r["agent"] == agents[0])
        categories = sorted(counts)
        width = 0.8 / len(agents)
        for k, agent in enumerate(agents):
            rates = []
            for category in categories:
                chosen = [r for r in panel if r["agent"] == agent and r["goal"]["category"] == category]
                rates.append(100 * sum(r["success"] for r in chosen) / max(1, len(chosen)))
            axis.bar(
                [i + (k - (len(agents) - 1) / 2) * width for i in range(len(categories))],
                rates,
                width,
                label=agent,
            )
        axis.set_xticks(range(len(categories)), [f"{c}\n(n={counts[c]})" for c in categories], fontsize=8)
        axis.set_ylim(0, 100)
        axis.set_ylabel("success %")
        axis.set_title(f"{env}, {split} split", fontsize=9)
        axis.legend(fontsize=7, ncol=min(len(agents), 5))
    figure.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(path, dpi=110)
    plt.close(figure)
    return path


# -- the report --------------------------------------------------------------------------


def write_report(*folders: Path, out: Path | None = None, title: str = "Agent benchmark results") -> Path:
    """Writes results.md, summary.json, failures.md and plots/ for the runs of ``folders``."""
    if not folders:
        raise ValueError("give at least one results folder")
    out = Path(out or folders[0])
    commands: list[dict[str, Any]] = []
    records: list[dict[str, Any]] = []
    for folder in folders:
        folder_commands, folder_records = load_folder(Path(folder))
        commands += folder_commands
        records += folder_records
    rows = summarize(records)
    out.mkdir(parents=True, exist_ok=True)
    plot_scores(rows, out / "plots" / "scores.png")
    plot_categories(records, out / "plots" / "categories.png")
    (out / "failures.md").write_text(failure_report(records))
    (out / "summary.json").write_text(json.dumps(rows, indent=2) + "\n")
    lines = [f"# {title}", "", markdown_table(rows), ""]
    lines += [
        "Score: 100 x mean reward. Success: reward 1. Components: mean over episodes (no purchase = 0); "
        "option / price leave out goals without options / price limit.",
        "",
        f"Catalogue, goals, split and manifest name the goals played; manifest: the first {MANIFEST_DIGITS} "
        "hex digits of the split manifest's SHA-256 (`webshop_gym.data.splits`; summary.json has all of it). "
        "Rows compare only where the manifests agree.",
        "",
        "![scores](plots/scores.png)",
        "",
        "![success per category](plots/categories.png)",
        "",
        "Failures by kind, with example trajectories: [failures.md](failures.md).",
        "",
        "## Commands",
    ]
    for command in commands:
        runs = ", ".join(sorted({f"{r['agent']} ({r['seconds']:.0f} s)" for r in command["runs"]}))
        lines += ["", "```bash", command["command"], "```", f"machine: {command['machine']}; runs: {runs}"]
    report = out / "results.md"
    report.write_text("\n".join(lines) + "\n")
    return report


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "folders", nargs="+", type=Path, help="results folders written by benchmarks.harness.run"
    )
    parser.add_argument("--out", type=Path, default=None, help="where to write (default: the first folder)")
    parser.add_argument("--title", default="Agent benchmark results")
    args = parser.parse_args(argv)
    print(write_report(*args.folders, out=args.out, title=args.title))


if __name__ == "__main__":
    main()
