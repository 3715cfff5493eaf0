"""Small real runs of env_speed, full_scale and prompt_tokens: their measuring functions return
figures, and the Markdown of known figures is what the scripts print."""

from __future__ import annotations

from benchmarks.env import env_speed, full_scale
from benchmarks.harness import prompt_tokens
from benchmarks.machine import STATUS_FIELDS


def test_env_speed_times_creation_and_every_step_of_expert_episodes():
    figures = env_speed.measure({"split": "all"}, episodes=3)
    assert figures["products"] > 0
    assert figures["cold_s"] > figures["warm_s"] > 0  # a fresh interpreter imports everything first
    # Every expert episode searches once at least, then clicks its way to the purchase.
    assert len(figures["search_step_s"]) >= 3 and len(figures["other_step_s"]) >= 3 * 2
    assert all(s > 0 for s in figures["search_step_s"] + figures["other_step_s"])


def test_env_speed_renders_one_row_per_catalogue():
    figures = {"products": 1000, "cold_s": 2.345, "warm_s": 0.0123, "search_step_s": [0.004, 0.001, 0.002]}
    figures["other_step_s"] = [0.0002, 0.0001]
    assert env_speed.markdown({"webshop-1k (synthetic goals)": figures}).splitlines() == [
        "| catalogue | products | create (cold) | create (warm) | search step median (n) "
        "| other step median (n) |",
        "|---|---|---|---|---|---|",
        "| webshop-1k (synthetic goals) | 1000 | 2.35 s | 12.3 ms | 2.00 ms (3) | 0.150 ms (2) |",
    ]


def test_full_scale_measures_a_small_generated_catalogue(tmp_path):
    from webshop_gym.data.store import read_manifest
    from webshop_gym.data.synthetic import write_catalog

    raw, store = tmp_path / "raw", tmp_path / "store"
    write_catalog(raw, 300, seed=0)
    prepared = full_scale.prepare(raw, store)
    assert prepared["seconds"] > 0 and prepared["peak_rss_mb"] > 0
    assert read_manifest(store)["products"] == 300

    envs = full_scale.env_figures(store, episodes=2)
    assert envs["products"] == 300 and envs["goals"] > 0
    assert envs["cold_s"] > envs["imports_s"] > 0 and envs["warm_s"] > 0
    for memory in (envs["one"], envs["eight"]):  # benchmarks.machine's figures, read in the child
        assert set(memory) == {*STATUS_FIELDS, "Pss"}
        assert memory["VmHWM"] >= memory["VmRSS"] > memory["RssAnon"] > 0
    assert envs["eight"]["VmHWM"] >= envs["one"]["VmHWM"]  # the peak never goes down

    vector = full_scale.vector_figures(store, rounds=1)
    assert len(vector["workers"]) == 8 and vector["created_s"] > 0
    assert all(0 < w["Pss"] <= w["VmRSS"] for w in vector["workers"])

    search = full_scale.search_figures(store, queries=10)
    bm25 = search["bm25"]
    assert "lucene" not in search and bm25["queries"] > 0
    assert 0 < bm25["p50_ms"] <= bm25["p95_ms"] and 0 < bm25["cpu_p50_ms"] <= bm25["cpu_p95_ms"]
    assert full_scale.search_lines(search)[-1].startswith("search, Lucene: not measured")


def test_full_scale_renders_the_targets_table():
    envs = {"cold_s": 12.5, "warm_s": 0.25, "one": {"VmRSS": 1600.0}, "eight": {"VmRSS": 1760.0}}
    figures = {"envs": envs, "search": {"bm25": {"p50_ms": 6.94, "p95_ms": 20.5}}}
    figures["prepare"] = {"seconds": 688.0, "peak_rss_mb": 3158.4}
    assert full_scale.targets(figures) == [
        "| target | figure | met |",
        "|---|---|---|",
        "| creation cold <= 10 s | 12.50 s | NO |",
        "| creation warm <= 2 s | 0.250 s | yes |",
        "| one env <= 1.5 GB RSS | 1600 MB | NO |",
        "| 8 envs in one process <= 1.2x one | 1.10x | yes |",
        "| embedded search p50 <= 10 ms | 6.9 ms | yes |",
        "| embedded search p95 <= 20 ms | 20.5 ms | NO |",
        "| prepare peak memory <= 4 GB | 3,158 MB | yes |",
    ]


def test_prompt_tokens_counts_what_prefix_reuse_saves(tiny_chat_model):
    noted = []
    played, system_tokens = prompt_tokens.measure(
        str(tiny_chat_model), episodes=2, modes=["free"], history_turns=1, max_new_tokens=4, note=noted.append
    )
    assert noted == played and [(r.goals, r.reuse) for r in played] == [
        ("0", False),
        ("0", True),
        ("1", False),
        ("1", True),
    ]
    assert system_tokens["free"] > 0
    for off, on in zip(played[::2], played[1::2], strict=True):
        assert 1 <= off.turns <= 15 and off.cpu_s > 0 and off.wall_s > 0
        # Greedy: the same answers either way, from the same prompts; reuse computes fewer positions.
        assert on.outputs == off.outputs and on.sent == off.sent == off.processed
        assert system_tokens["free"] <= on.processed < off.processed
    lines, mismatches = prompt_tokens.report(played, system_tokens)
    assert mismatches == [] and "| free | one at a time |" in lines[len(played) + 5]


def test_prompt_tokens_renders_the_runs_and_the_saving():
    def run(goals: str, reuse: bool, processed: int, cpu_s: float, answer: str) -> prompt_tokens.Played:
        return prompt_tokens.Played(
            "free", goals, reuse, [[answer] * 10], 6000, processed, 300, cpu_s, cpu_s + 1
        )

    played = [run("0", False, 6000, 40.0, "a"), run("0", True, 3000, 30.04, "b")]
    lines, mismatches = prompt_tokens.report(played, {"free": 157})
    assert mismatches == ["free goals 0"]
    assert lines == [
        "| mode | goals | reuse | turns | sent | computed | generated | CPU s | wall s |",
        "|---|---|---|---:|---:|---:|---:|---:|---:|",
        "| free | 0 | off | 10 | 6000 | 6000 | 300 | 40.0 | 41.0 |",
        "| free | 0 | on | 10 | 6000 | 3000 | 300 | 30.0 | 31.0 |",
        "",
        "| mode | goals | system prompt | sent per turn | computed per turn, off | on | "
        "CPU s per turn, off | on | CPU saved | same answers |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|---|",
        "| free | one at a time | 157 | 600 | 600 | 300 | 4.00 | 3.00 | 25% | 0/1 runs |",
        "",
        "System prompt: tokens of the chat-templated system message. Mean turns per episode: 10.0.",
        "Answers differed with reuse in: free goals 0.",
    ]
