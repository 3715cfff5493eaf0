"""WebShop for TRL's GRPOTrainer: an ``environment_factory`` whose tools are ``search`` and ``click``.

TRL (``pip install 'webshop-gym[trl]'``; TRL 1.9 to 1.16 tested) gives each rollout of a batch
its own `WebShopToolEnv` (made once, reused), calls ``reset(**row)`` before generating, shows the
model the env's public methods ``search(query)`` and ``click(button)`` as tools (their schema
comes from the docstrings) and calls them when the model asks. After the rollout it calls
``get_reward()``: the env's return, logged as ``rewards/WebShopToolEnv/mean``. No dataset is
needed: a `GoalSampler` draws the goals of a split, one goal per GRPO group::

    from functools import partial
    from trl import GRPOConfig, GRPOTrainer
    from webshop_gym.integrations.trl import GoalSampler, WebShopToolEnv

    args = GRPOConfig(max_steps=100, num_generations=8, max_tool_calling_iterations=15)
    sampler = GoalSampler("train", num_generations=args.num_generations)
    trainer = GRPOTrainer(
        model="Qwen/Qwen3-0.6B",
        args=args,
        environment_factory=partial(WebShopToolEnv, goal_sampler=sampler),
    )
    trainer.train()

With a dataset instead, a row names its goal: ``catalog``, ``goals``, ``split`` and
``goal_index`` (goal i of that fixed split, as ``WebShopEnv.reset(options={"goal_index": i})``);
`goal_dataset` writes them, in split order, beside the ``prompt``: the goal's instruction as a
user message. A tool call is one env step with the same action string (``search("red shoes")``
is ``step("search[red shoes]")``), so step limits, invalid actions and rewards are the env's:
an invalid action comes back as text saying why (the page unchanged), never as an exception.
The reward of a rollout is the env's return: the WebShop reward of the purchase, 0 when the
model bought nothing. Page text, reward variant and step limit are constructor arguments
(``functools.partial(WebShopToolEnv, max_steps=10)`` is a factory too).

Example:
    >>> env = WebShopToolEnv()
    >>> page = env.reset(catalog="mini", goals="human", split="test", goal_index=0)
    >>> page.startswith("\\n\\nWebShop [SEP] Instruction: [SEP] i am looking for a pair of moisture wicking")
    True
    >>> env.click("buy now").split("\\n\\n")[0]  # then the page, unchanged
    "No clickable 'buy now' on this page. Valid actions: search[<query>]."
    >>> env.search("moisture wicking yoga leggings").startswith("Instruction: [SEP] i am looking for")
    True
    >>> env.get_reward(), env.done, env.env.steps
    (0.0, False, 2)
"""

from __future__ import annotations

import importlib.util
from typing import TYPE_CHECKING, Any

import numpy as np

from webshop_gym.envs import GoalSource, ObservationMode, RewardVariant, Split, WebShopEnv
from webshop_gym.integrations.tools import ShopTools

if TYPE_CHECKING:
    import datasets

__all__ = ["GoalSampler", "WebShopToolEnv", "goal_dataset"]

INSTALL = "pip install 'webshop-gym[trl]'"
if importlib.util.find_spec("trl") is None:  # the env needs no TRL itself, but is of no use without it
    raise ImportError(
        f"webshop_gym.integrations.trl is an adapter for TRL, which is not installed: {INSTALL}"
    )


class GoalSampler:
    """The goals of a fixed split in a seeded order, each one for ``num_generations`` resets in a row.

    GRPO compares the ``num_generations`` rollouts of a group, so they must play the same goal.
    TRL resets a batch's rollouts in order, a group's one after another, so the envs that share
    a sampler (``functools.partial(WebShopToolEnv, goal_sampler=sampler)``) hand reset k the goal
    of group ``k // num_generations``. The groups walk through the split in an order shuffled
    by ``seed``, every goal once before any goal comes again. One sampler serves one process:
    under several (accelerate), each draws its own goals, so keep each process's share of a
    generation batch a whole number of groups.

    Args:
        split: ``"train"``, ``"dev"``, ``"test"`` or ``"all"``.
        catalog: ``"mini"``, ``"1k"``, ``"full"`` or a folder, as `WebShopEnv`'s ``catalog``.
        goals: ``"human"`` or ``"synthetic"``.
        num_generations: GRPO's group size (``GRPOConfig.num_generations``).
        seed: Seeds the order of the goals.

    Example:
        >>> sampler = GoalSampler("test", num_generations=2, seed=0)
        >>> [sampler.next_goal(goal_count=100) for _ in range(6)]
        [82, 82, 36, 36, 20, 20]
    """

    def __init__(
        self,
        split: Split = "train",
        catalog: str = "mini",
        goals: GoalSource = "human",
        *,
        num_generations: int,
        seed: int = 0,
    ) -> None:
        if not isinstance(num_generations, int) or num_generations < 1:
            raise ValueError(
                f"num_generations must be a positive int (GRPO's group size), got {num_generations!r}"
            )
        self.split, self.catalog, self.goals = split, catalog, goals
        self.num_generations = num_generations
        self.seed = seed
        self.resets = 0  # resets served so far
        self._order: tuple[tuple[int, int], np.ndarray] | None = None  # ((goal count, pass), its order)

    def next_goal(self, goal_count: int) -> int:
        """The goal index of the next reset, in a split of ``goal_count`` goals."""
        group = self.resets // self.num_generations
        self.resets += 1
        epoch, position = divmod(group, goal_count)  # the pass through the split, the place in it
        if self._order is None or self._order[0] != (goal_count, epoch):
            self._order = (
                (goal_count, epoch),
                np.random.default_rng([self.seed, epoch]).permutation(goal_count),
            )
        return int(self._order[1][position])


class WebShopToolEnv(ShopTools):
    """One rollout's shop, driven through tool calls (TRL's ``environment_factory``).

    The tools, ``get_reward`` and the attributes ``reward``, ``done`` and ``info`` are
    `ShopTools`'; ``env`` is the `WebShopEnv` of the current episode.

    Args:
        observation_mode: ``"text"`` or ``"text_rich"``: how pages read.
        reward: The reward variant, as `WebShopEnv`'s ``reward``.
        max_steps: Tool calls per episode; the episode ends without a purchase after that many.
        goal_sampler: Draws the goal of a reset whose row names none (training without a
            dataset); share one among the envs of a trainer.
    """

    def __init__(
        self,
        observation_mode: ObservationMode = "text",
        reward: RewardVariant = "original",
        max_steps: int = 15,
        goal_sampler: GoalSampler | None = None,
    ) -> None:
        if observation_mode == "html":
            raise ValueError("observation_mode='html' gives the model HTML pages; use 'text' or 'text_rich'")
        self._settings: dict[str, Any] = dict(
            observation_mode=observation_mode, reward=reward, max_steps=max_steps
        )
        self.goal_sampler = goal_sampler
        self._envs: dict[tuple[str, str, str], WebShopEnv] = {}  # one per (catalog, goals, split) seen
        self.env: WebShopEnv | None = None
        self.reward = 0.0
        self.done = False
        self.info: dict[str, Any] = {}

    def reset(
        self,
        catalog: str = "mini",
        goals: GoalSource = "human",
        split: Split | None = None,
        goal_index: int | None = None,
        **row: Any,
    ) -> str:
        """Starts the episode of the row's goal, or of the sampler's next goal when the row names none.

        TRL passes the whole dataset row (without a dataset: only an empty ``prompt``) and appends
        what this returns to the prompt's last message: the first page after a blank line for a
        row's goal (the row's prompt holds the instruction), the instruction, a blank line and the
        first page for a drawn goal. Columns other than the goal's (``prompt``, ...) are ignored.

        Raises:
            ValueError: The row names no goal of a fixed split and the env has no sampler.
        """
        drawn = split is None and goal_index is None and self.goal_sampler is not None
        if drawn:
            assert self.goal_sampler is not None
            catalog, goals = self.goal_sampler.catalog, self.goal_sampler.goals
            split = self.goal_sampler.split
        elif split is None or goal_index is None:
            raise ValueError(
                "a row must name its goal with 'split' and 'goal_index' (and 'catalog', 'goals'); "
                "build the dataset with goal_dataset(), or train without one through a GoalSampler, "
                f"got columns {sorted(row)}"
            )
        key = (catalog, goals, split)
        if key not in self._envs:
            self._envs[key] = WebShopEnv(catalog=catalog, goals=goals, split=split, **self._settings)
        self.env = self._envs[key]
        instruction = ""  # the row's prompt holds it
        if drawn:
            assert self.goal_sampler is not None
            goal_index = self.goal_sampler.next_goal(len(self.env.goal_indices))
            instruction = self.env.goal_at(goal_index).instruction_text
        observation, self.info = self.env.reset(options={"goal_index": goal_index})
        self.reward, self.done = 0.0, False
        return f"{instruction}\n\n{observation}"

    def _started(self) -> bool:
        return self.env is not None

    def _step(self, action: str) -> tuple[str, float, bool, bool, dict[str, Any]]:
        assert self.env is not None
        return self.env.step(action)


def goal_dataset(
    split: Split = "train", catalog: str = "mini", goals: GoalSource = "human"
) -> datasets.Dataset:
    """The goals of a fixed split as dataset rows, in split order.

    Each row holds ``prompt`` (the instruction as a user message) and the columns that name
    the goal for `WebShopToolEnv.reset`: ``catalog``, ``goals``, ``split``, ``goal_index``.

    Args:
        split: ``"train"``, ``"dev"``, ``"test"`` or ``"all"``.
        catalog: ``"mini"``, ``"1k"``, ``"full"`` or a folder, as `WebShopEnv`'s ``catalog``.
        goals: ``"human"`` or ``"synthetic"``.

    Example:
        >>> rows = goal_dataset("test")
        >>> len(rows), rows.column_names
        (100, ['prompt', 'catalog', 'goals', 'split', 'goal_index'])
        >>> rows[0]["prompt"][0]["content"][:43], rows[0]["goal_index"]
        ('i am looking for a pair of moisture wicking', 0)
    """
    import datasets

    env = WebShopEnv(catalog=catalog, goals=goals, split=split)
    count = len(env.goal_indices)
    return datasets.Dataset.from_dict(
        {
            "prompt": [[{"role": "user", "content": env.goal_at(i).instruction_text}] for i in range(count)],
            "catalog": [catalog] * count,
            "goals": [goals] * count,
            "split": [split] * count,
            "goal_index": list(range(count)),
        }
    )
