"""Token-in / token-out episode records, for trainers outside this package.

Trainers such as verl, OpenRLHF or TRL want what the policy saw and said as token ids, not
text: re-tokenising a decoded answer can give other ids than the ones sampled, and then the
log-probs and the loss mask no longer line up. Every `Episode` of `apo_agent.rollout` keeps
its ids exactly as sampled, so the records are cut straight from them. One JSON line per
episode (`write_token_records`)::

    {"goal_index": 12, "seed": 7, "reward": 0.75, "score": 0.75, "success": false,
     "steps": 4, "actions": ["search[...]", "click[...]", ...], "step": 3,
     "turns": [{"prompt_ids": [...], "response_ids": [...], "response_logprobs": [...],
                "loss_mask": [1, 1, ...]}, ...]}

Per turn, ``prompt_ids`` is everything the policy was conditioned on (the chat-template ids of
the instruction, pages and earlier answers, as it saw them), ``response_ids`` the ids it
sampled, ``response_logprobs`` their log-probs under the sampling policy (the restricted
softmax under constrained decoding; null for demonstrations, which were not sampled) and
``loss_mask`` 1 for each of them. ``prompt_ids + response_ids`` is the sequence to score.
``step`` is the Stage 2 step that sampled the episode (absent outside training).

Example:
    >>> from apo_agent.rollout.tokens import TokenSequence
    >>> sequence = TokenSequence()
    >>> sequence.extend([5, 6, 7], agent=False)
    >>> sequence.extend([8, 9], agent=True, logprobs=[-0.5, -0.25])
    >>> [turn.response_ids for turn in turns_of([sequence])]
    [[8, 9]]
    >>> turns_of([sequence])[0].prompt_ids
    [5, 6, 7]
"""

from __future__ import annotations

import dataclasses
import json
import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from apo_agent.rollout.episodes import Episode
from apo_agent.rollout.tokens import TokenSequence


@dataclass(frozen=True)
class TurnRecord:
    """One answer of the policy and the context it answered."""

    prompt_ids: list[int]
    response_ids: list[int]
    response_logprobs: list[float | None]
    loss_mask: list[int]


def turns_of(sequences: Sequence[TokenSequence]) -> list[TurnRecord]:
    """Every run of agent tokens is one turn; the ids before it in its sequence are its prompt
    (one sequence per turn with ``context="last_observation"``, one per episode with ``"full"``)."""
    turns = []
    for sequence in sequences:
        start = None
        for index, agent in enumerate([*sequence.agent_mask, False]):
            if agent and start is None:
                start = index
            elif not agent and start is not None:
                turns.append(
                    TurnRecord(
                        prompt_ids=sequence.ids[:start],
                        response_ids=sequence.ids[start:index],
                        response_logprobs=sequence.logprobs[start:index],
                        loss_mask=[1] * (index - start),
                    )
                )
                start = None
    return turns


def episode_record(episode: Episode, step: int | None = None) -> dict[str, Any]:
    """An episode as one JSON-ready record (see the module docstring)."""
    record: dict[str, Any] = {
        "goal_index": episode.goal_index,
        "seed": episode.seed,
        "reward": episode.reward,
        "score": episode.score,
        "success": episode.success,
        "steps": episode.steps,
        "actions": episode.actions,
    }
    if step is not None:
        record["step"] = step
    record["turns"] = [dataclasses.asdict(turn) for turn in turns_of(episode.sequences)]
    return record


def write_token_records(
    episodes: Iterable[Episode], path: str | os.PathLike[str], step: int | None = None
) -> Path:
    """Appends one line per episode to a JSONL file (made with its folder when missing)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a", encoding="utf-8") as file:
        for episode in episodes:
            file.write(json.dumps(episode_record(episode, step)) + "\n")
    return path


def read_token_records(path: str | os.PathLike[str]) -> list[dict[str, Any]]:
    """The records of a JSONL file written by `write_token_records`."""
    with Path(path).open(encoding="utf-8") as file:
        return [json.loads(line) for line in file if line.strip()]
