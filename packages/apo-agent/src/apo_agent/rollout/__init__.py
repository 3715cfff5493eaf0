"""Episodes from a policy, token-in / token-out, many envs at once.

* `envs`: which envs a run plays in (`EnvSpec`, `env_spec`, `make_envs`, `split_goals`);
* `tokens`: prompts as token ids and the record of what the agent said (`PromptEncoder`,
  `EpisodeContext`, `prompt_encoder`);
* `goals`: goals of one's own played by number, set once on the envs (`with_goals`);
* `agents`: the one LLM agent (`LLMAgent`), prompted as token ids (`TokenPrompting`, what
  training plays) or as chat text (`ChatPrompting`), and the warm start's `DemonstratorAgent`;
* `episodes`: `collect_episodes`, one episode per ``(goal, seed)`` request, and `Episode`;
* `records`: episodes as token records in JSON lines, for trainers outside this package.

The names of the former module ``apo_agent.rollout`` stay importable from here.
"""

from __future__ import annotations

from apo_agent.rollout.envs import EnvSpec, make_envs
from apo_agent.rollout.episodes import Episode, collect_episodes
from shared_prompts import action_from_answer

__all__ = ["EnvSpec", "Episode", "action_from_answer", "collect_episodes", "make_envs"]
