"""Episodes from an LLM policy, many envs at once, through the Gymnasium step API.

`collect_episodes` keeps ``len(envs)`` episodes running side by side: every round it asks
the policy for one action per running episode in a single batched `LMPolicy.generate`
call, steps each env with its action, and starts the next requested episode in an env
as soon as its previous one ends (so long episodes do not hold the batch back).

The envs are a plain list stepped in lockstep rather than a ``gymnasium.vector`` env:
every episode here is a chosen goal (``reset(options={"goal_index": i})``), which the
vector API cannot give each sub-env separately, and a finished env must wait for its
next request instead of auto-resetting.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import gymnasium as gym
from tqdm.auto import tqdm

import webshop_gym  # noqa: F401  (registers the env ids)
from apo_agent.context import EpisodeContext, PromptEncoder, TokenSequence
from apo_agent.policy import LMPolicy
from shared_prompts import parse_model_output
from webshop_gym.data.model import Goal

MAX_ACTION_CHARS = 1000


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


@dataclass(frozen=True)
class EnvSpec:
    """How to make the envs: an id and the keyword arguments for ``gym.make``."""

    env_id: str
    kwargs: dict[str, Any]

    def make(self, split: str) -> gym.Env:
        return gym.make(self.env_id, **{**self.kwargs, "split": split})

    def describe(self) -> dict[str, Any]:
        return {"env_id": self.env_id, **self.kwargs}


def make_envs(spec: EnvSpec, split: str, count: int) -> list[gym.Env]:
    """``count`` envs of one split (they share the catalogue and search index in memory)."""
    return [spec.make(split) for _ in range(count)]


def collect_episodes(
    policy: LMPolicy | None,
    envs: Sequence[gym.Env],
    encoder: PromptEncoder,
    requests: Sequence[tuple[int, int]],
    *,
    max_new_tokens: int,
    temperature: float,
    description: str | None = None,
    progress: bool = True,
    demonstrator: Callable[[int, str, dict[str, Any]], str] | None = None,
    goals: Sequence[Goal] | None = None,
) -> list[Episode]:
    """Plays one episode per ``(goal_index, seed)`` request; returns them in request order.

    Args:
        policy: Samples the actions (pi or pi_ref); None when a demonstrator answers.
        envs: Envs of the split the goal indices refer to; their number is the batch size.
        encoder: Builds the prompts (`apo_agent.context.PromptEncoder`).
        requests: ``(goal_index, seed)`` pairs.
        max_new_tokens: Answer length limit per turn.
        temperature: Sampling temperature (0: greedy).
        description: Progress-bar label.
        progress: Show a progress bar.
        demonstrator: Instead of sampling, ``demonstrator(env_slot, observation, info)``
            writes each answer (text), which is tokenised as the model should say it:
            this records demonstrations with exactly the prompts the policy will see.
        goals: When given, goal index i plays ``goals[i]`` (the env's ``goal`` reset option)
            instead of goal i of the envs' split: tasks of one's own over the catalogue.
    """
    results: list[Episode | None] = [None] * len(requests)
    queue = list(enumerate(requests))[::-1]
    running: dict[int, dict[str, Any]] = {}  # env slot -> the episode it is playing
    bar = tqdm(total=len(requests), desc=description, disable=not progress, leave=False)

    def start(slot: int) -> None:
        number, (goal_index, seed) = queue.pop()
        options = {"goal_index": goal_index} if goals is None else {"goal": goals[goal_index]}
        observation, info = envs[slot].reset(seed=seed, options=options)
        running[slot] = dict(
            number=number,
            goal_index=goal_index,
            seed=seed,
            observation=observation,
            info=info,
            context=EpisodeContext(encoder),
            reward=0.0,
            steps=0,
            invalid=0,
        )

    for slot in range(min(len(envs), len(queue))):
        start(slot)
    while running:
        slots = sorted(running)
        prompts = [running[s]["context"].prompt(running[s]["observation"], running[s]["info"]) for s in slots]
        if demonstrator is not None:
            texts = [demonstrator(s, running[s]["observation"], running[s]["info"]) for s in slots]
            answers = [encoder.answer_ids(text) for text in texts]
        elif policy is not None:
            constraints = [running[s]["context"].constraint for s in slots]
            answers = policy.generate(
                prompts, max_new_tokens=max_new_tokens, temperature=temperature, constraints=constraints
            )
            texts = [policy.tokenizer.decode(answer, skip_special_tokens=True) for answer in answers]
        else:
            raise ValueError("collect_episodes needs a policy or a demonstrator")
        for slot, answer, text in zip(slots, answers, texts, strict=True):
            episode = running[slot]
            action = action_from_answer(text)
            episode["context"].record(answer, action)
            observation, reward, terminated, truncated, info = envs[slot].step(action)
            episode.update(observation=observation, info=info)
            episode["reward"] += float(reward)
            episode["steps"] += 1
            episode["invalid"] += bool(info.get("action_error"))
            if terminated or truncated:
                results[episode["number"]] = _finish(episode, info)
                del running[slot]
                bar.update(1)
                if queue:
                    start(slot)
    bar.close()
    return [episode for episode in results if episode is not None]


def action_from_answer(text: str) -> str:
    """The action in a model's answer; an unreadable answer goes to the env as it is (cut),
    and the env reports it as an invalid action: the step counts, as the model earned."""
    parsed = parse_model_output(text)
    return parsed.action if parsed.action is not None else text.strip()[:MAX_ACTION_CHARS]


def _finish(episode: dict[str, Any], info: dict[str, Any]) -> Episode:
    context: EpisodeContext = episode["context"]
    return Episode(
        goal_index=episode["goal_index"],
        seed=episode["seed"],
        sequences=context.sequences,
        actions=context.actions,
        reward=episode["reward"],
        score=float(info.get("score", 0.0) or 0.0),
        success=bool(info.get("success", False)),
        steps=episode["steps"],
        invalid_actions=episode["invalid"],
        truncated_prompts=context.truncated_prompts,
        info={k: info[k] for k in ("purchased_asin", "purchased_options") if k in info},
    )
