"""`TokenSequence`: the unit the policy scores, an episode's token ids with the agent's marked.

Rollouts build these (`apo_agent.rollout.tokens.EpisodeContext`) and the policy scores them
(`apo_agent.model.policy.LMPolicy.token_logprobs`): the agent mask is True exactly on the ids
the agent sampled, so log-probabilities and losses see only the agent's own tokens.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from apo_agent.model.constrained import Allowed


@dataclass
class TokenSequence:
    """Token ids and, for each, whether the agent sampled it (and, under constrained
    decoding, from which ids: see `apo_agent.model.constrained`)."""

    ids: list[int] = field(default_factory=list)
    agent_mask: list[bool] = field(default_factory=list)
    allowed: list[Allowed] = field(default_factory=list)
    """Per id: the token ids it was sampled from, or None (the whole vocabulary)."""
    logprobs: list[float | None] = field(default_factory=list)
    """Per id: the log-prob the rollout engine reported when it sampled it (None for prompt
    ids and for answers not sampled, e.g. demonstrations)."""

    def __post_init__(self) -> None:
        if not self.allowed:
            self.allowed = [None] * len(self.ids)
        if not self.logprobs:
            self.logprobs = [None] * len(self.ids)

    def extend(
        self,
        ids: list[int],
        agent: bool,
        allowed: Sequence[Allowed] | None = None,
        logprobs: Sequence[float] | None = None,
    ) -> None:
        if allowed is not None and len(allowed) != len(ids):
            raise ValueError(f"{len(ids)} ids but {len(allowed)} allowed-token entries")
        if logprobs is not None and len(logprobs) != len(ids):
            raise ValueError(f"{len(ids)} ids but {len(logprobs)} log-probs")
        self.ids.extend(ids)
        self.agent_mask.extend([agent] * len(ids))
        self.allowed.extend(allowed if allowed is not None else [None] * len(ids))
        self.logprobs.extend(logprobs if logprobs is not None else [None] * len(ids))

    def agent_allowed(self) -> list[Allowed]:
        """The allowed ids of each agent token, in order."""
        return [a for a, agent in zip(self.allowed, self.agent_mask, strict=True) if agent]

    @property
    def agent_tokens(self) -> int:
        return sum(self.agent_mask)
