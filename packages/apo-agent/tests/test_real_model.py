"""The apo-agent pipeline on a real pretrained model: SmolLM2-135M-Instruct from the wheel.

Stage 1 (two episodes of pi_ref) and one Stage 2 update with LoRA on a short context,
through the same trainer as every run (`apo_agent.trainer.train`): about 40 CPU-seconds.
"""

from __future__ import annotations

import math
from pathlib import Path

import peft  # noqa: F401  (the lora extra)
import torch

from apo_agent.model.policy import LMPolicy
from apo_agent.rollout.tokens import TokenSequence
from apo_agent.runtime.metrics import read_metrics
from apo_agent.trainer import train


def test_smollm2_stage_one_and_one_lora_stage_two_update(tmp_path, smollm2, tiny_config):
    torch.manual_seed(0)
    config = tiny_config(
        tmp_path,
        smollm2,
        lora_rank=4,
        lora_alpha=8,
        num_envs=1,
        train_goals=1,
        reference_samples=2,
        goal_filter="none",
        steps=1,
        goals_per_step=1,
        micro_batch_episodes=1,
        max_steps=3,
        max_new_tokens=64,
        max_prompt_tokens=384,
        constrain_actions=True,
        search_query="instruction",
        learning_rate=1e-2,
        torch_threads=1,
        seed=0,
    )
    result = train(config)
    assert result.policy.uses_lora and len(result.policy.tokenizer) == 49_152  # the real vocabulary
    (value,) = result.optimal_values.values()
    # Shaped returns (discount 0.5) of 3-step episodes differ with the product clicked, so
    # the Stage 2 episode's return differs from V*: the regression has a target to move to.
    assert len(value.rewards) == 2 and len(set(value.rewards)) == 2
    (row,) = read_metrics(result.metrics_path)
    assert math.isfinite(row["losses/loss"]) and row["losses/loss"] > 0
    assert math.isfinite(row["losses/grad_norm"]) and row["losses/grad_norm"] > 0
    adapters = {n: p for n, p in result.policy.model.named_parameters() if p.requires_grad}
    assert adapters and all("lora_" in name for name in adapters)
    # LoRA's B matrices start at 0: one update moves them, and only them.
    assert any(p.abs().sum() > 0 for n, p in adapters.items() if "lora_B" in n)
    assert (Path(result.model_dir) / "adapter_config.json").is_file()


def test_smollm2_scores_sampled_tokens_without_full_vocabulary_logits(smollm2):
    """The chunked output head gives the log-probs (and gradients) of the full-logits path."""
    torch.manual_seed(0)
    policy = LMPolicy.load(str(smollm2), device="cpu", lora_rank=4, with_reference=False)
    with torch.no_grad():
        for name, parameter in policy.model.named_parameters():
            if "lora_B" in name:
                parameter.normal_(0, 0.01)
    text = policy.tokenizer.apply_chat_template(
        [{"role": "user", "content": "i need red shoes"}], tokenize=False, add_generation_prompt=True
    )
    prompt = policy.tokenizer(text, add_special_tokens=False)["input_ids"]
    answer = policy.tokenizer("<action>search[red shoes]</action><|im_end|>", add_special_tokens=False)[
        "input_ids"
    ]
    sequences = [
        TokenSequence(prompt + answer, [False] * len(prompt) + [True] * len(answer)),
        TokenSequence(prompt[:-3] + answer[:5], [False] * (len(prompt) - 3) + [True] * 5),
    ]
    results = []
    for chunk in (3, None):  # 3 agent positions per head call, then full logits
        policy.logit_chunk = chunk
        policy.model.zero_grad()
        logprobs = policy.token_logprobs(sequences)
        torch.cat(logprobs).sum().backward()
        grads = [p.grad.clone() for p in policy.trainable_parameters()]
        results.append(([t.detach() for t in logprobs], grads))
    (chunked, chunked_grads), (full, full_grads) = results
    for a, b in zip(chunked, full, strict=True):  # a log-softmax over 49,152 float32 logits, summed apart
        torch.testing.assert_close(a, b, rtol=1e-5, atol=5e-5)
    for a, b in zip(chunked_grads, full_grads, strict=True):  # float32 sums in another order
        assert float((a - b).norm()) <= 1e-3 * float(b.norm())
    assert all(bool((t < 0).all()) for t in full) and [len(t) for t in full] == [len(answer), 5]
