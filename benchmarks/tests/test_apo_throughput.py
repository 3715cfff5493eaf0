"""The throughput benchmark runs A*PO and GRPO steps with a random model and returns both rows."""

from __future__ import annotations

from benchmarks.training.apo_throughput import ARCHITECTURES, main, markdown


def test_tiny_architecture_on_cpu(tmp_path):
    out = tmp_path / "throughput.md"
    argv = ["--arch", "tiny", "--device", "cpu", "--steps", "1", "--episodes", "4", "--envs", "4"]
    results = main(
        [*argv, "--group-size", "2", "--max-steps", "2", "--max-new-tokens", "8", "--out", str(out)]
    )
    assert out.read_text() == markdown(results)
    figures = results["algorithms"]
    assert set(figures) == {"A*PO", "GRPO"} and all(f["tokens_per_s"] > 0 for f in figures.values())
    # Random returns: GRPO's update uses every episode too.
    assert {name: f["updated_episodes"] for name, f in figures.items()} == {"A*PO": 4, "GRPO": 4}
    assert all(f["peak_gpu_gib"] is None for f in figures.values())  # CPU: no GPU memory figure


def test_the_qwen_architecture_is_the_published_one():
    qwen = ARCHITECTURES["qwen2.5-1.5b"]
    assert (qwen["num_hidden_layers"], qwen["hidden_size"], qwen["vocab_size"]) == (28, 1536, 151_936)
