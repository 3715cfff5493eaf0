"""A*PO and GRPO learn what the maths says, on a bandit whose answer is known in closed form.

One prompt, four arms (think: four whole episodes) with partial-credit rewards, a softmax
policy over them and a fixed pi_ref. A*PO trains through the trainer's own step,
`apo_update`, on real `Episode` objects (one agent token: the arm) with a stand-in for
`LMPolicy`, V* from Stage 1's `optimal_value` at beta1, on-policy samples as in Stage 2, and
the `TrainConfig` and AdamW the trainer uses. Its fixed point is pi*(a) ∝ pi_ref(a) exp(R(a) / beta2)
whatever beta1 is: V* only shifts every residual by the same constant, and a constant has zero
expected score gradient under on-policy sampling. GRPO goes through its objective code
(`grpo_advantages`, `grpo_token_losses`) and, with no KL term, goes to the best arm.
"""

from __future__ import annotations

import copy
import dataclasses
from collections.abc import Iterator, Sequence
from contextlib import contextmanager

import pytest
import torch

from apo_agent.config import TrainConfig
from apo_agent.objectives import grpo_advantages, grpo_token_losses, optimal_value
from apo_agent.optimal_values import GoalValue
from apo_agent.rollout.episodes import Episode
from apo_agent.rollout.tokens import TokenSequence
from apo_agent.trainer import apo_update

REFERENCE = torch.tensor([0.50, 0.30, 0.15, 0.05], dtype=torch.float64)
REWARDS = torch.tensor([0.0, 0.5, 0.75, 1.0], dtype=torch.float64)  # success is rare under pi_ref
PROMPT_TOKEN = len(REWARDS)  # the arms are token ids 0..3
GOAL = 0
# Total variation allowed from pi*: on-policy sampling noise leaves the trained policy within about
# 0.015 of it (the worst of 10 sampling seeds), while the optimum of a wrong beta (beta1 where it
# differs, or 1 for a dropped beta2) and pi_ref are at least 0.29 away.
TOLERANCE = 0.03


def optimal_policy(beta: float) -> torch.Tensor:
    """pi* ∝ pi_ref exp(R / beta), in log space: exp(R / 1e-3) overflows."""
    return torch.softmax(torch.log(REFERENCE) + REWARDS / beta, 0)


def total_variation(p: torch.Tensor, q: torch.Tensor) -> float:
    return float((p.double() - q.double()).abs().sum() / 2)


def reference_returns() -> list[float]:
    """Stage 1's returns for this prompt: 20 reference samples in exactly pi_ref's proportions."""
    counts = (REFERENCE * 20).round().int().tolist()
    return [float(r) for r, n in zip(REWARDS.tolist(), counts, strict=True) for _ in range(n)]


def sampled_arm(sequence: TokenSequence) -> int:
    (arm,) = [i for i, agent in zip(sequence.ids, sequence.agent_mask, strict=True) if agent]
    return arm


class SoftmaxBandit(torch.nn.Module):
    """The model: one logit per arm, scored as `LMPolicy.token_logprobs` scores its sequences."""

    def __init__(self, probabilities: torch.Tensor) -> None:
        super().__init__()
        self.logits = torch.nn.Parameter(torch.log(probabilities).float())

    def token_logprobs(self, sequences: Sequence[TokenSequence]) -> list[torch.Tensor]:
        arms = torch.tensor([sampled_arm(s) for s in sequences])
        return list(torch.log_softmax(self.logits, 0)[arms].split(1))

    def probabilities(self) -> torch.Tensor:
        return torch.softmax(self.logits.detach(), 0)


class BanditPolicy:
    """What `apo_update` uses of `LMPolicy`, with a frozen copy as pi_ref (as `freeze_reference` keeps)."""

    device = torch.device("cpu")

    def __init__(self) -> None:
        self.model = SoftmaxBandit(REFERENCE)  # start at pi_ref, as Stage 2 does
        self._reference = copy.deepcopy(self.model).requires_grad_(False)

    def token_logprobs(self, sequences: Sequence[TokenSequence]) -> list[torch.Tensor]:
        return self.model.token_logprobs(sequences)

    @contextmanager
    def reference(self) -> Iterator[SoftmaxBandit]:
        yield self._reference

    def trainable_parameters(self) -> list[torch.nn.Parameter]:
        return [p for p in self.model.parameters() if p.requires_grad]


def arm_episode(arm: int) -> Episode:
    """A one-turn episode as `collect_episodes` records it: the prompt, then the sampled arm."""
    sequence = TokenSequence()
    sequence.extend([PROMPT_TOKEN], agent=False)
    sequence.extend([arm], agent=True)
    reward = REWARDS[arm].item()
    return Episode(
        goal_index=GOAL,
        seed=0,
        sequences=[sequence],
        actions=[f"click[arm {arm}]"],
        reward=reward,
        score=reward,
        success=reward == 1.0,
        steps=1,
        invalid_actions=0,
    )


# `apo_update` only reads episodes, so a batch may hold the same arm's episode many times.
ARM_EPISODES = [arm_episode(arm) for arm in range(len(REWARDS))]


def train_with_apo_update(
    config: TrainConfig, learning_rate: float = 0.1, steps: int = 400, batch: int = 64
) -> torch.Tensor:
    """Stage 2 on the bandit: each step one `apo_update` on a fresh on-policy batch.

    ``config``'s learning rate (the cpu-demo preset's 2e-4) moves a logit at most that much per
    AdamW step, tens of thousands of steps here; the fixed point does not depend on the step size,
    so ``learning_rate`` replaces it.
    """
    generator = torch.Generator().manual_seed(0)
    policy = BanditPolicy()
    optimizer = torch.optim.AdamW(
        policy.trainable_parameters(), lr=learning_rate, weight_decay=config.weight_decay
    )
    returns = reference_returns()
    values = {GOAL: GoalValue(GOAL, optimal_value(returns, config.beta1), tuple(returns))}
    # Unless beta1 = beta2 the residual is a nonzero constant at the fixed point, so on-policy
    # gradients stay noisy there: a decaying step size lets the iterate settle.
    schedule = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, steps)
    for _ in range(steps):
        arms = torch.multinomial(policy.model.probabilities(), batch, replacement=True, generator=generator)
        apo_update(policy, optimizer, [ARM_EPISODES[a] for a in arms.tolist()], values, config)
        schedule.step()
    return policy.model.probabilities()


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


@pytest.mark.parametrize("beta1", [0.1, 0.3, 0.5])
def test_stage_one_value_is_the_soft_maximum_under_pi_ref(beta1: float) -> None:
    expected = beta1 * torch.logsumexp(torch.log(REFERENCE) + REWARDS / beta1, 0).item()
    assert optimal_value(reference_returns(), beta1=beta1) == pytest.approx(expected)


@pytest.mark.parametrize(("beta1", "beta2"), [(0.1, 0.1), (0.3, 0.3), (0.5, 0.2), (0.1, 0.3)])
def test_apo_update_converges_to_the_kl_regularised_optimum_of_beta2(beta1: float, beta2: float) -> None:
    config = dataclasses.replace(TrainConfig.from_preset("cpu-demo"), beta1=beta1, beta2=beta2)
    learned, target = train_with_apo_update(config), optimal_policy(beta2)
    assert total_variation(learned, target) < TOLERANCE, (learned.tolist(), target.tolist())


def test_apo_update_with_the_cpu_demo_settings_converges_to_the_optimum() -> None:
    # At the preset's beta2 = 1e-3, pi* is the best arm alone (the next arm has e^-250 of its
    # weight), although V* (from beta1 = 0.5) is below the rewards of two other arms as well.
    config = TrainConfig.from_preset("cpu-demo")
    learned, target = train_with_apo_update(config), optimal_policy(config.beta2)
    assert total_variation(learned, target) < TOLERANCE, (learned.tolist(), target.tolist())


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
