"""The numbers both algorithms optimise, as small pure functions.

A*PO (Brantley et al. 2025, arXiv 2505.20686), for a goal x and an episode y (all the
agent's tokens over all turns) with return R:

* Stage 1: ``V*(x) = beta1 * log( (1/N) * sum_i exp(r_i / beta1) )`` over N reference
  episodes: a soft maximum of the reference returns (-> mean as beta1 -> inf, -> max as
  beta1 -> 0), the value of the KL-regularised optimal policy pi* ∝ pi_ref exp(r / beta1).
* Stage 2: ``loss(x, y) = (beta2 * sum_t [log pi(y_t | .) - log pi_ref(y_t | .)] - (R - V*(x)))^2``.

GRPO (Shao et al. 2024): G episodes per goal, advantage ``A_i = (R_i - mean(R)) / (std(R) + eps)``
for every agent token of episode i, clipped-ratio surrogate
``-min(rho * A, clip(rho, 1 - eps, 1 + eps) * A)`` with ``rho = pi / pi_old`` per token.

Example:
    >>> round(optimal_value([0.0, 1.0], beta1=0.5), 4)  # 0.5 * log((1 + e^2) / 2)
    0.7169
    >>> [round(a, 4) for a in grpo_advantages(torch.tensor([1.0, 0.0, 0.0, 0.0]), group_size=4).tolist()]
    [1.5, -0.5, -0.5, -0.5]
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import torch


def optimal_value(rewards: Sequence[float], beta1: float) -> float:
    """V* = beta1 * log mean exp(r / beta1), through log-sum-exp so that small beta1 cannot overflow."""
    if len(rewards) == 0:
        raise ValueError("optimal_value needs at least one reference reward")
    if beta1 <= 0:
        raise ValueError(f"beta1 must be positive, got {beta1}")
    scaled = torch.tensor([float(r) / beta1 for r in rewards], dtype=torch.float64)
    return float(beta1 * (torch.logsumexp(scaled, dim=0) - math.log(len(rewards))))


def apo_loss(
    log_ratio_sums: torch.Tensor, rewards: torch.Tensor, optimal_values: torch.Tensor, beta2: float
) -> torch.Tensor:
    """Mean over episodes of ``(beta2 * sum_t log(pi / pi_ref) - (R - V*))^2``.

    Args:
        log_ratio_sums: Per episode, the sum over its agent tokens of log pi - log pi_ref.
        rewards: Per episode, the return R.
        optimal_values: Per episode, V* of its goal.
        beta2: The KL weight.
    """
    advantages = rewards - optimal_values
    return ((beta2 * log_ratio_sums - advantages) ** 2).mean()


def grpo_advantages(rewards: torch.Tensor, group_size: int, eps: float = 1e-6) -> torch.Tensor:
    """Group-normalised advantages; ``rewards`` holds consecutive groups of ``group_size``.

    A group whose rewards are all equal gets advantage 0 (nothing to prefer). The standard
    deviation is the unbiased one, as in DeepSeekMath's GRPO.
    """
    if group_size < 2 or rewards.numel() % group_size:
        raise ValueError(f"{rewards.numel()} rewards do not split into groups of {group_size} (>= 2)")
    groups = rewards.reshape(-1, group_size)
    mean = groups.mean(dim=1, keepdim=True)
    std = groups.std(dim=1, keepdim=True)
    return ((groups - mean) / (std + eps)).reshape(-1)


def grpo_token_losses(
    logprobs: torch.Tensor,
    old_logprobs: torch.Tensor,
    advantages: torch.Tensor,
    clip_eps: float,
    ref_logprobs: torch.Tensor | None = None,
    kl_coef: float = 0.0,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Per-token GRPO loss (clipped surrogate, plus the k3 KL estimate to pi_ref) and clip flags.

    All arguments are per agent token (advantages repeated over an episode's tokens).
    """
    ratio = torch.exp(logprobs - old_logprobs)
    unclipped = ratio * advantages
    clipped = torch.clamp(ratio, 1.0 - clip_eps, 1.0 + clip_eps) * advantages
    losses = -torch.minimum(unclipped, clipped)
    if ref_logprobs is not None and kl_coef:
        log_ref_ratio = ref_logprobs - logprobs
        losses = losses + kl_coef * (torch.exp(log_ref_ratio) - log_ref_ratio - 1.0)
    return losses, (clipped < unclipped).float()  # where the clip decides the loss
