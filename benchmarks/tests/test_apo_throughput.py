"""The throughput benchmark runs A*PO and GRPO steps with a random model and prints both rows."""

from __future__ import annotations

import re

from benchmarks.apo_throughput import ARCHITECTURES, main


def test_tiny_architecture_on_cpu(tmp_path):
    out = tmp_path / "throughput.md"
    argv = ["--arch", "tiny", "--device", "cpu", "--steps", "1", "--episodes", "4", "--envs", "4"]
    table = main([*argv, "--group-size", "2", "--max-steps", "2", "--max-new-tokens", "8", "--out", str(out)])
    assert out.read_text() == table
    rows = {m.group(1): float(m.group(2)) for m in re.finditer(r"\| (A\*PO|GRPO) \| (\d+) \|", table)}
    assert set(rows) == {"A*PO", "GRPO"} and all(tokens_per_s > 0 for tokens_per_s in rows.values())
    sixth_column = r"\| (A\*PO|GRPO) \|(?: [^|]+ \|){4} (\d+) \|"  # episodes in the update
    used = {m.group(1): m.group(2) for m in re.finditer(sixth_column, table)}
    assert used == {"A*PO": "4", "GRPO": "4"}  # random returns: GRPO's update uses every episode too


def test_the_qwen_architecture_is_the_published_one():
    qwen = ARCHITECTURES["qwen2.5-1.5b"]
    assert (qwen["num_hidden_layers"], qwen["hidden_size"], qwen["vocab_size"]) == (28, 1536, 151_936)
