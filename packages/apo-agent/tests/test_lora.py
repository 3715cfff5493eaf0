"""LoRA: only the adapters train, and pi_ref is the same model with the adapters switched off."""

from __future__ import annotations

import peft  # noqa: F401  (the lora extra; the tests session installs it)
import torch

from apo_agent.model.policy import LMPolicy
from apo_agent.rollout.tokens import TokenSequence


def sequences(tokenizer):
    ids = tokenizer("<|user|>find red shoes<|end|><|assistant|><action>click[buy now]</action><|end|>")[
        "input_ids"
    ]
    answer_start = len(tokenizer("<|user|>find red shoes<|end|><|assistant|>")["input_ids"])
    return [TokenSequence(ids, [i >= answer_start for i in range(len(ids))])]


def test_reference_is_the_base_model_before_and_after_training(tiny_model_dir, tokenizer):
    base = LMPolicy.load(str(tiny_model_dir), device="cpu", with_reference=False)
    policy = LMPolicy.load(str(tiny_model_dir), device="cpu", lora_rank=4, lora_alpha=8)
    assert policy.uses_lora
    trainable = [name for name, p in policy.model.named_parameters() if p.requires_grad]
    assert trainable and all("lora_" in name for name in trainable)
    batch = sequences(tokenizer)
    with torch.no_grad():
        expected = base.token_logprobs(batch)[0]
        torch.testing.assert_close(policy.token_logprobs(batch)[0], expected)  # LoRA B starts at 0

    with policy.reference() as reference:
        identity = reference.fingerprint()
    optimizer = torch.optim.AdamW(policy.trainable_parameters(), lr=0.05)
    for _ in range(3):
        loss = -policy.token_logprobs(batch)[0].sum()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    with torch.no_grad():
        assert not torch.allclose(policy.token_logprobs(batch)[0], expected)
        with policy.reference() as reference:
            torch.testing.assert_close(reference.token_logprobs(batch)[0], expected)
            # pi_ref's identity (Stage 1's cache key) is the base weights': training left it alone.
            assert reference.fingerprint() == identity
        # the adapters are back on after the block
        assert not torch.allclose(policy.token_logprobs(batch)[0], expected)


def test_adapters_save_and_load(tiny_model_dir, tokenizer, tmp_path):
    policy = LMPolicy.load(str(tiny_model_dir), device="cpu", lora_rank=4)
    with torch.no_grad():
        for name, parameter in policy.model.named_parameters():
            if "lora_B" in name:
                parameter.add_(0.1)
    policy.save(tmp_path / "adapters")
    assert (tmp_path / "adapters" / "adapter_config.json").is_file()
    loaded = LMPolicy.load(str(tmp_path / "adapters"), device="cpu")
    assert loaded.uses_lora
    batch = sequences(tokenizer)
    with torch.no_grad():
        torch.testing.assert_close(loaded.token_logprobs(batch)[0], policy.token_logprobs(batch)[0])
