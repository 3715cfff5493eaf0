"""The A*PO and GRPO numbers against hand computations."""

from __future__ import annotations

import math

import pytest
import torch

from apo_agent.objectives import apo_loss, grpo_advantages, grpo_token_losses, optimal_value


def test_apo_loss_equals_a_hand_computation_on_a_toy_batch():
    # Two episodes: per-token log-probs under pi and pi_ref, returns and V*.
    pi = [torch.tensor([-0.5, -1.0, -0.25]), torch.tensor([-2.0, -0.1])]
    ref = [torch.tensor([-0.7, -1.2, -0.25]), torch.tensor([-1.5, -0.6])]
    rewards, v_star, beta2 = torch.tensor([1.0, 0.2]), torch.tensor([0.6, 0.5]), 0.5
    log_ratio = torch.stack([(p - r).sum() for p, r in zip(pi, ref, strict=True)])
    # episode 1: log ratio = 0.2 + 0.2 + 0 = 0.4; (0.5 * 0.4 - (1.0 - 0.6))^2 = (0.2 - 0.4)^2 = 0.04
    # episode 2: log ratio = -0.5 + 0.5 = 0.0;   (0 - (0.2 - 0.5))^2 = 0.09
    expected = (0.04 + 0.09) / 2
    assert apo_loss(log_ratio, rewards, v_star, beta2).item() == pytest.approx(expected, abs=1e-7)


def test_apo_loss_gradient_pushes_the_log_ratio_towards_the_advantage():
    log_ratio = torch.tensor([0.0], requires_grad=True)
    apo_loss(log_ratio, torch.tensor([1.0]), torch.tensor([0.25]), beta2=0.5).backward()
    # d/dx (0.5 x - 0.75)^2 at 0 = 2 * (-0.75) * 0.5
    assert log_ratio.grad.item() == pytest.approx(-0.75)


def test_optimal_value_when_all_returns_are_equal_is_that_return():
    for beta1 in (0.01, 0.5, 10.0):
        assert optimal_value([0.7, 0.7, 0.7, 0.7], beta1) == pytest.approx(0.7)


def test_optimal_value_with_one_success_among_n():
    beta1, n = 0.5, 4
    expected = beta1 * math.log((n - 1 + math.exp(1.0 / beta1)) / n)
    assert optimal_value([0.0, 0.0, 1.0, 0.0], beta1) == pytest.approx(expected)
    # between the mean (beta1 -> inf) and the max (beta1 -> 0)
    assert 0.25 < optimal_value([0.0, 0.0, 1.0, 0.0], beta1) < 1.0


def test_optimal_value_with_small_beta1_is_the_max_without_overflow():
    # exp(1 / 1e-4) overflows a float; the log-sum-exp form does not.
    value = optimal_value([0.0, 0.3, 1.0, 0.5], beta1=1e-4)
    assert math.isfinite(value)
    assert value == pytest.approx(1.0 + 1e-4 * math.log(1 / 4), abs=1e-9)
    assert optimal_value([0.2, 0.4], beta1=1e3) == pytest.approx(0.3, abs=1e-4)  # large beta1: the mean


def test_optimal_value_rejects_bad_input():
    with pytest.raises(ValueError, match="at least one"):
        optimal_value([], 0.5)
    with pytest.raises(ValueError, match="positive"):
        optimal_value([1.0], 0.0)


def test_grpo_advantages_on_a_toy_group():
    rewards = torch.tensor([1.0, 0.0, 0.5, 0.5, 0.3, 0.3, 0.3, 0.3])
    advantages = grpo_advantages(rewards, group_size=4, eps=0.0)
    std = torch.tensor([1.0, 0.0, 0.5, 0.5]).std().item()  # unbiased: sqrt(0.5 / 3)
    expected_first = [0.5 / std, -0.5 / std, 0.0, 0.0]
    assert advantages[:4].tolist() == pytest.approx(expected_first)
    assert grpo_advantages(rewards, group_size=4)[4:].tolist() == [0.0, 0.0, 0.0, 0.0]  # no preference
    with pytest.raises(ValueError, match="groups of 3"):
        grpo_advantages(rewards, group_size=3)


def test_grpo_token_losses_clip_the_ratio():
    logprobs = torch.log(torch.tensor([1.5, 0.5, 1.0]))
    old = torch.zeros(3)
    losses, clipped = grpo_token_losses(logprobs, old, torch.tensor([1.0, 1.0, -1.0]), clip_eps=0.2)
    # ratio 1.5 with A > 0: clipped to 1.2; ratio 0.5 with A > 0: min picks 0.5; ratio 1 with A < 0: 1
    assert losses.tolist() == pytest.approx([-1.2, -0.5, 1.0])
    assert clipped.tolist() == [1.0, 0.0, 0.0]  # only where the clipped term is the one taken
