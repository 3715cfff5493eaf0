"""Episodes from an LLM policy, many envs at once, through the Gymnasium vector API.

`collect_episodes` plays one episode per ``(goal_index, seed)`` request on webshop-gym's
`webshop_gym.agents.scheduler.play_episodes` (the engine the benchmark runner uses too): a
``SyncVectorEnv`` over ``len(envs)`` envs, each slot reset to its own goal. Every round
the rollout engine (`apo_agent.engines`: transformers or vLLM) answers all running episodes
in one batched call, and a slot whose episode ended starts the next request at once (so long
episodes do not hold the batch back). Each episode is played by its own
`apo_agent.rollout.agents.LLMAgent` over `TokenPrompting` (the agent the benchmarks play
too): token-in / token-out, each turn's prompt is the episode's ids so far plus the
chat-template ids of the new observation (`apo_agent.rollout.tokens.EpisodeContext`), and the
engine's sampled ids and log-probs are appended as they are; the text is decoded only to find
the action.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import gymnasium as gym
from tqdm.auto import tqdm

import webshop_gym  # noqa: F401  (registers the env ids)
from apo_agent.engines import RolloutEngine, as_engine
from apo_agent.model.policy import LMPolicy
from apo_agent.model.sequences import TokenSequence
from apo_agent.rollout.agents import DemonstratorAgent, LLMAgent, TokenPrompting
from apo_agent.rollout.tokens import PromptEncoder
from webshop_gym.agents.protocol import act_all
from webshop_gym.agents.scheduler import EpisodeStart, Step, Turn, play_episodes


@dataclass
class Episode:
    """One finished episode: its tokens (with the agent mask), actions and outcome."""

    goal_index: int
    seed: int
    sequences: list[TokenSequence]
    actions: list[str]
    reward: float
    """The return R: the sum of the env's rewards."""
    score: float
    """WebShop's R of the purchase (0 without one)."""
    success: bool
    """R == 1 at the purchase."""
    steps: int
    invalid_actions: int
    truncated_prompts: int = 0
    info: dict[str, Any] = field(default_factory=dict)

    @property
    def agent_tokens(self) -> int:
        return sum(s.agent_tokens for s in self.sequences)


def collect_episodes(
    policy: LMPolicy | RolloutEngine | None,
    envs: Sequence[gym.Env],
    encoder: PromptEncoder,
    requests: Sequence[tuple[int, int]],
    *,
    max_new_tokens: int,
    temperature: float,
    description: str | None = None,
    progress: bool = True,
    demonstrator: Callable[[int, str, dict[str, Any]], str] | None = None,
) -> list[Episode]:
    """Plays one episode per ``(goal_index, seed)`` request; returns them in request order.

    Args:
        policy: Samples the actions (pi or pi_ref): a rollout engine (`apo_agent.engines`),
            or an `LMPolicy` (sampled with transformers); None when a demonstrator answers.
        envs: Envs of the split the goal indices refer to; their number is the batch size.
        encoder: Builds the prompts (`apo_agent.rollout.tokens.PromptEncoder`).
        requests: ``(goal_index, seed)`` pairs.
        max_new_tokens: Answer length limit per turn (a constrained whole action gets the
            tokens it needs: `apo_agent.model.constrained.answer_budget`).
        temperature: Sampling temperature (0: greedy).
        description: Progress-bar label.
        progress: Show a progress bar.
        demonstrator: Instead of sampling, ``demonstrator(env_slot, observation, info)``
            writes each answer (text), which is tokenised as the model should say it:
            this records demonstrations with exactly the prompts the policy will see.

    Goal i is goal i of the envs' split, or what the envs make of it: tasks of one's own
    over the catalogue are played through envs wrapped once in
    `apo_agent.rollout.goals.with_goals`.
    """
    if policy is None and demonstrator is None:
        raise ValueError("collect_episodes needs a policy or a demonstrator")
    prompting = None
    if policy is not None:
        prompting = TokenPrompting(as_engine(policy), encoder, temperature, max_new_tokens)
    results: list[Episode | None] = [None] * len(requests)
    running: dict[int, _Running] = {}  # by request number
    bar = tqdm(total=len(requests), desc=description, disable=not progress, leave=False)

    def on_start(turn: Turn) -> None:
        goal_index, seed = requests[turn.episode]
        agent: LLMAgent | DemonstratorAgent
        if demonstrator is not None:
            agent = DemonstratorAgent(demonstrator, turn.slot, encoder)
        else:
            assert prompting is not None
            agent = LLMAgent(prompting)
        running[turn.episode] = _Running(goal_index, seed, agent)

    def act(turns: list[Turn]) -> list[str]:
        return act_all(
            [running[turn.episode].agent for turn in turns],
            [turn.observation for turn in turns],
            [turn.info for turn in turns],
        )

    def on_step(step: Step) -> None:
        episode = running[step.episode]
        episode.reward += step.reward
        episode.steps += 1
        episode.invalid += bool(step.info.get("action_error"))
        if step.done:
            results[step.episode] = episode.finish(step.info)
            del running[step.episode]
            bar.update(1)

    starts = [EpisodeStart(seed, {"goal_index": goal_index}) for goal_index, seed in requests]
    play_episodes(envs, starts, act, on_start=on_start, on_step=on_step)
    bar.close()
    return [episode for episode in results if episode is not None]


@dataclass
class _Running:
    """An episode being played: its request, its agent (holding the token record) and running totals."""

    goal_index: int
    seed: int
    agent: LLMAgent | DemonstratorAgent
    reward: float = 0.0
    steps: int = 0
    invalid: int = 0

    def finish(self, info: dict[str, Any]) -> Episode:
        context = self.agent.context
        return Episode(
            goal_index=self.goal_index,
            seed=self.seed,
            sequences=context.sequences,
            actions=context.actions,
            reward=self.reward,
            score=float(info.get("score", 0.0) or 0.0),
            success=bool(info.get("success", False)),
            steps=self.steps,
            invalid_actions=self.invalid,
            truncated_prompts=context.truncated_prompts,
            info={k: info[k] for k in ("purchased_asin", "purchased_options") if k in info},
        )
