"""The warm start itself: supervised learning of the policy on demonstration tokens.

Maximises the log-likelihood of the agent tokens of the demonstrations
(`apo_agent.warm_start.demonstrations`), scored with the same
`apo_agent.model.policy.LMPolicy.token_logprobs` as RL uses.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import torch
from tqdm.auto import tqdm

from apo_agent.model.policy import LMPolicy
from apo_agent.model.sequences import TokenSequence


def supervised_warm_start(
    policy: LMPolicy,
    sequences: Sequence[TokenSequence],
    *,
    epochs: int,
    learning_rate: float,
    batch_size: int,
    seed: int = 0,
    progress: bool = True,
) -> list[float]:
    """Maximises the log-likelihood of the agent tokens of ``sequences`` (the mean per answer,
    averaged over answers); returns the loss per update.

    AdamW with a linear warm-up (5% of updates) and cosine decay to 10% of the rate.
    """
    model = policy.model
    model.train()
    optimizer = torch.optim.AdamW(policy.trainable_parameters(), lr=learning_rate, weight_decay=0.01)
    updates_per_epoch = math.ceil(len(sequences) / batch_size)
    total = epochs * updates_per_epoch
    warmup = max(1, total // 20)

    def rate(update: int) -> float:
        if update < warmup:
            return (update + 1) / warmup
        return 0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * (update - warmup) / max(1, total - warmup)))

    scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, rate)
    generator = torch.Generator().manual_seed(seed)
    losses: list[float] = []
    bar = tqdm(total=total, desc="warm start (supervised)", disable=not progress)
    for _ in range(epochs):
        # Similar lengths in a batch waste less padding: shuffle, then sort within chunks.
        order = torch.randperm(len(sequences), generator=generator).tolist()
        chunks = [order[i : i + batch_size * 8] for i in range(0, len(order), batch_size * 8)]
        batches: list[list[int]] = []
        for chunk in chunks:
            chunk.sort(key=lambda i: len(sequences[i].ids))
            batches.extend(chunk[i : i + batch_size] for i in range(0, len(chunk), batch_size))
        for index in torch.randperm(len(batches), generator=generator).tolist():
            batch = [sequences[i] for i in batches[index]]
            # Every answer counts the same, whatever its length: otherwise the long search
            # queries outweigh the one-token product and option choices that decide the episode.
            answers = policy.token_logprobs(batch)
            loss = -torch.stack([logprobs.mean() for logprobs in answers if len(logprobs)]).mean()
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(policy.trainable_parameters(), 1.0)
            optimizer.step()
            scheduler.step()
            losses.append(float(loss.detach()))
            bar.update(1)
            bar.set_postfix(loss=f"{losses[-1]:.3f}")
    bar.close()
    model.eval()
    return losses
