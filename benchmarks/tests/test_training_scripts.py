"""Small real runs of the training-cost scripts: gpu_costs, apo_memory, rollout_throughput."""

from __future__ import annotations

import json

import pytest

from benchmarks.training import apo_memory, gpu_costs, rollout_throughput


def test_gpu_costs_reads_finished_runs_and_skips_unfinished_ones(tmp_path):
    work = tmp_path / "runs"
    finished, unfinished = work / "apo-seed0", work / "grpo-seed0"
    finished.mkdir(parents=True)
    unfinished.mkdir()
    (finished / "metrics.csv").write_text("step,time/rollout_s,time/update_s\n1,2.0,1.0\n2,4.0,3.0\n")
    results = {
        "stage2_episodes": 32,
        "stage1_episodes": 64,
        "wall_time_s": {"stage1": 30.0, "stage2": 12.0},
        "peak_gpu_memory_gib": 3.5,
        "test": {"reference": {"success": 40.0}, "trained": {"success": 46.0}},
    }
    (finished / "results.json").write_text(json.dumps(results))
    out = tmp_path / "gpu.md"
    gpu_costs.main(["--work", str(work), "--out", str(out)])
    row = gpu_costs.run_costs(finished)
    assert gpu_costs.run_costs(unfinished) is None
    assert row is not None
    assert (row["steps"], row["episodes"], row["stage1_episodes"]) == (2, 32, 64)
    assert (row["rollout_s"], row["update_s"], row["peak_gib"]) == (3.0, 2.0, 3.5)
    assert (row["reference_success"], row["success"]) == (40.0, 46.0)
    assert out.read_text() == gpu_costs.markdown([row])
    assert gpu_costs.markdown([row]).splitlines()[1:] == [
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---|",
        "| apo-seed0 | 64 | 30 | 2 | 32 | 12 | 3.00 | 2.00 | 3.50 | 40 -> 46 |",
    ]


def test_apo_memory_measures_one_update_of_a_tiny_model(tiny_chat_model):
    lora_rank, logit_chunk, checkpointing, episodes, context = apo_memory.SETTINGS[
        "chunked head + checkpointing, LoRA, 4 episodes"
    ]
    shape = {"turns": 2, "prompt": 16, "answer": 4}
    figures = apo_memory.measure(
        str(tiny_chat_model), lora_rank, logit_chunk, checkpointing, episodes, context, shape
    )
    assert figures["agent_tokens"] == episodes * 2 * 4  # the agent's tokens: answers only
    assert figures["tokens"] >= figures["agent_tokens"]
    assert figures["peak_rss_gib"] >= figures["rss_after_load_gib"] > 0
    assert figures["update_s"] > 0 and figures["loss"] == pytest.approx(figures["loss"])  # finite


def test_rollout_throughput_of_the_transformers_engine(tmp_path):
    out = tmp_path / "engines.md"
    argv = ["--arch", "tiny", "--device", "cpu", "--engines", "transformers", "--episodes", "2"]
    argv += ["--batches", "2", "--max-steps", "2", "--max-new-tokens", "4", "--out", str(out)]
    rollout_throughput.main(argv)
    results = json.loads(out.with_suffix(".json").read_text())
    figures = results["transformers"]["2"]
    # 2 episodes of up to 2 actions of up to 4 tokens
    assert 2 <= figures["turns"] <= 4 and 0 < figures["agent_tokens"] <= 4 * figures["turns"]
    assert figures["tokens_per_s"] > 0 and figures["s_per_episode"] > 0


def test_rollout_throughput_is_rendered_with_each_engines_speed_over_transformers():
    figures = {"seconds": 2.0, "cpu_s_per_episode": 0.5, "agent_tokens": 40, "turns": 8, "s_per_episode": 1.0}
    results = {
        "transformers": {"start_s": 0.0, "sync_s": 0.0, 2: {**figures, "tokens_per_s": 20.0}},
        "vllm": {"start_s": 3.0, "sync_s": 0.5, 2: {**figures, "tokens_per_s": 50.0}},
    }
    throughput = rollout_throughput.Throughput(
        "tiny",
        2_000_000,
        "CPU",
        "--episodes 2",
        2,
        2,
        4,
        "full",
        None,
        ["transformers", "vllm"],
        [2],
        results,
    )
    assert throughput.speedup("vllm", 2) == 2.5 and throughput.speedup("transformers", 2) == 1.0
    without = rollout_throughput.Throughput(**{**vars(throughput), "results": {"vllm": results["vllm"]}})
    assert without.speedup("vllm", 2) is None
    assert rollout_throughput.markdown(throughput).splitlines()[8:12] == [
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|",
        "| transformers | 2 | 40 | 8 | 2.0 | 20 | 1.00 | 0.500 | 1.00x |",
        "| vllm | 2 | 40 | 8 | 2.0 | 50 | 1.00 | 0.500 | 2.50x |",
        "",
    ]
