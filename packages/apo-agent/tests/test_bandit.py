"""A*PO and GRPO learn what the maths says, on a bandit whose answer is known in closed form.

One prompt, four arms (think: four whole episodes) with partial-credit rewards, a softmax
policy over them and a fixed pi_ref. Training goes through the objective code the trainer
uses (`optimal_value`, `apo_loss`, `grpo_advantages`, `grpo_token_losses`), with on-policy
samples as in Stage 2. The KL-regularised optimum A*PO regresses onto is
pi*(a) ∝ pi_ref(a) exp(R(a) / beta) (with beta1 = beta2 = beta); GRPO, with no KL term,
goes to the best arm.
"""

from __future__ import annotations

import pytest
import torch

from apo_agent.objectives import apo_loss, grpo_advantages, grpo_token_losses, optimal_value

REFERENCE = torch.tensor([0.50, 0.30, 0.15, 0.05], dtype=torch.float64)
REWARDS = torch.tensor([0.0, 0.5, 0.75, 1.0], dtype=torch.float64)  # success is rare under pi_ref


def optimal_policy(beta: float) -> torch.Tensor:
    weights = REFERENCE * torch.exp(REWARDS / beta)
    return weights / weights.sum()


def reference_returns() -> list[float]:
    """Stage 1's returns for this prompt: 20 reference samples in exactly pi_ref's proportions."""
    counts = (REFERENCE * 20).round().int().tolist()
    return [float(r) for r, n in zip(REWARDS.tolist(), counts, strict=True) for _ in range(n)]


def train(step_loss, steps: int = 1500, batch: int = 256, lr: float = 0.05) -> torch.Tensor:
    """Adam on the logits, each step on a fresh on-policy batch of arms."""
    generator = torch.Generator().manual_seed(0)
    logits = torch.log(REFERENCE).clone().requires_grad_(True)  # start at pi_ref, as Stage 2 does
    optimizer = torch.optim.Adam([logits], lr=lr)
    for _ in range(steps):
        with torch.no_grad():
            arms = torch.multinomial(torch.softmax(logits, 0), batch, replacement=True, generator=generator)
        log_pi = torch.log_softmax(logits, 0)[arms]
        optimizer.zero_grad()
        step_loss(log_pi, arms).backward()
        optimizer.step()
    return torch.softmax(logits.detach(), 0)


@pytest.mark.parametrize("beta", [0.1, 0.3])
def test_apo_converges_to_the_kl_regularised_optimum(beta: float) -> None:
    value = optimal_value(reference_returns(), beta1=beta)

    def loss(log_pi: torch.Tensor, arms: torch.Tensor) -> torch.Tensor:
        log_ratio = log_pi - torch.log(REFERENCE[arms])
        return apo_loss(log_ratio, REWARDS[arms], torch.full_like(log_pi, value), beta2=beta)

    learned, target = train(loss), optimal_policy(beta)
    assert value == pytest.approx(beta * torch.log((REFERENCE * torch.exp(REWARDS / beta)).sum()).item())
    assert (learned - target).abs().sum() / 2 < 0.02, (learned.tolist(), target.tolist())


def test_a_smaller_beta2_puts_more_mass_on_success() -> None:
    # The regularisation strength decides how far A*PO may move from pi_ref: with beta 0.3
    # success (R = 1) stays below half of the mass, with beta 0.1 it is most of it.
    assert optimal_policy(0.3)[3] < 0.5 < optimal_policy(0.1)[3]


def test_grpo_converges_to_the_best_arm() -> None:
    group = 16

    def loss(log_pi: torch.Tensor, arms: torch.Tensor) -> torch.Tensor:
        advantages = grpo_advantages(REWARDS[arms].float(), group_size=group).double()
        losses, _ = grpo_token_losses(log_pi, log_pi.detach(), advantages, clip_eps=0.2)
        return losses.mean()

    learned = train(loss)
    assert learned[3] > 0.95, learned.tolist()
