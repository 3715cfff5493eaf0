"""WebShop as a skyrl-gym text env, registered as ``"webshop"``.

SkyRL (``pip install 'webshop-gym[skyrl]'``) makes one env per trajectory with
``skyrl_gym.make(row["env_class"], env_config=..., extras=row)``, where ``row`` holds the dataset
row's fields other than ``prompt`` and ``env_class``, plus the trainer's
``generator.max_turns`` as ``max_turns``. `register_env` registers the id (importing this module
does too); skyrl-train makes the envs in the Ray task of its entry point, so call it there.

`goal_rows` writes the goals of a fixed split, in split order, as SkyRL's data: ``data_source``
(``"webshop/<catalog>/<goals>/<split>"``: SkyRL's evaluation reports per data source),
``prompt`` (the instruction and the action format), ``env_class``, the fields that name the goal
(``catalog``, ``goals``, ``split``, ``goal_index``) and the env's settings
(``observation_mode``, ``reward``, ``search_engine``, ``show_attributes``). The settings ride in
the rows because skyrl-train's typed config takes no fields it does not define
(``environment.skyrl_gym.webshop`` is refused); an ``env_config`` mapping still works where a
trainer passes one, and a row's setting wins over it.

``init(prompt)`` starts the row's goal and adds its first page to the prompt's last user
message. Each ``step(reply)`` reads one action from the model's reply and plays it:

* the action is the text of the reply's last ``<action>...</action>``, or the whole reply when
  it has none, stripped: ``search[keywords]`` or ``click[button text]`` (`webshop_gym.actions`);
* an invalid action costs a step and changes nothing; the next user message says why, then
  shows the page again;
* the reward is the env's (the WebShop reward at the purchase, else 0);
* ``done`` when the model buys or after ``max_turns`` actions (the step limit; 15 when the row
  has none), and then no further message. skyrl-train's ``generator.max_turns`` defaults to 1:
  set it to the step limit (15), or every episode ends after one action.

Example:
    >>> import skyrl_gym
    >>> rows = goal_rows("test")
    >>> extras = {key: value for key, value in rows[0].items() if key not in ("prompt", "env_class")}
    >>> env = skyrl_gym.make(rows[0]["env_class"], env_config={}, extras={**extras, "max_turns": 15})
    >>> prompt, metadata = env.init(rows[0]["prompt"])
    >>> prompt[-1]["content"].endswith("[SEP] Search"), metadata["page"]
    (True, 'search')
    >>> output = env.step("<action>click[buy now]</action>")
    >>> output["observations"][0]["content"].split("\\n\\n")[0], output["reward"], output["done"]
    ("No clickable 'buy now' on this page. Valid actions: search[<query>].", 0.0, False)
"""

from __future__ import annotations

import copy
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from webshop_gym.actions import GRAMMAR
from webshop_gym.envs import GoalSource, ObservationMode, RewardVariant, Split, WebShopEnv

INSTALL = "pip install 'webshop-gym[skyrl]'"
try:
    import skyrl_gym
    from skyrl_gym.envs.base_text_env import BaseTextEnv, BaseTextEnvStepOutput, ConversationType
except ImportError as error:
    raise ImportError(
        f"webshop_gym.integrations.skyrl needs skyrl-gym, which is not installed: {INSTALL}"
    ) from error

__all__ = ["ENV_ID", "WebShopTextEnv", "goal_rows", "parse_reply", "register_env"]

ENV_ID = "webshop"
DEFAULT_MAX_TURNS = 15  # WebShop's step limit
# The env's settings, from a row or env_config, passed to WebShopEnv as they are.
SETTINGS = ("observation_mode", "reward", "search_engine", "show_attributes")
_ACTION_TAG = re.compile(r"<action>(.*?)</action>", re.DOTALL)


def parse_reply(reply: str) -> str:
    """The action in a model's reply: its last ``<action>...</action>``, else the whole reply; stripped.

    The env checks the action itself (an invalid one is reported, never raised).

    Example:
        >>> parse_reply("<think>the first result fits</think><action>click[B078GWRC1J]</action>")
        'click[B078GWRC1J]'
        >>> parse_reply("  search[red shoes]\\n")
        'search[red shoes]'
    """
    tagged = _ACTION_TAG.findall(reply)
    return str(tagged[-1] if tagged else reply).strip()


class WebShopTextEnv(BaseTextEnv):
    """One trajectory on one WebShop goal, for SkyRL's generators (see the module docstring).

    Args:
        env_config: WebShop settings for every trajectory (``observation_mode``, ``reward``,
            ``search_engine``, ``show_attributes``), where a trainer passes them.
        extras: The dataset row's other fields: ``catalog``, ``goals``, ``split``,
            ``goal_index``, settings as in ``env_config`` (these win), SkyRL's ``max_turns``.

    Raises:
        ValueError: The row names no goal of a fixed split, or a setting is invalid.
    """

    def __init__(self, env_config: Mapping[str, Any] | None = None, extras: Mapping[str, Any] | None = None):
        super().__init__()
        config, row = dict(env_config or {}), dict(extras or {})
        unknown = sorted(set(config) - set(SETTINGS) - {"env_class"})
        if unknown:
            raise ValueError(f"unknown WebShop env_config keys {unknown}; the keys are {list(SETTINGS)}")
        settings = {
            key: row[key] if key in row else config[key] for key in SETTINGS if key in row or key in config
        }
        if settings.get("observation_mode") == "html":
            raise ValueError("observation_mode='html' gives the model HTML pages; use 'text' or 'text_rich'")
        if row.get("split") is None or row.get("goal_index") is None:
            raise ValueError(
                "a WebShop row must name its goal with 'split' and 'goal_index' (and 'catalog', 'goals'); "
                f"build the rows with goal_rows(), got fields {sorted(row)}"
            )
        self.max_turns = int(row.get("max_turns") or DEFAULT_MAX_TURNS)
        self.goal_index = row["goal_index"]
        self.env = WebShopEnv(
            catalog=row.get("catalog", "mini"),
            goals=row.get("goals", "human"),
            split=row["split"],
            max_steps=self.max_turns,
            **settings,
        )
        self.info: dict[str, Any] = {}

    def init(self, prompt: ConversationType) -> tuple[ConversationType, dict[str, Any]]:
        """Starts the row's goal; returns the prompt with the first page added, and the env's ``info``."""
        observation, self.info = self.env.reset(options={"goal_index": self.goal_index})
        self.turns = 0
        return _with_page(prompt, observation), dict(self.info)

    def step(self, action: str) -> BaseTextEnvStepOutput:
        """Plays the action in the model's reply; the next message is the page (and why an action failed)."""
        self.turns += 1
        played = parse_reply(action)
        observation, reward, terminated, truncated, self.info = self.env.step(played)
        done = terminated or truncated
        page = f"{self.info['action_error']}\n\n{observation}" if self.info["action_error"] else observation
        return BaseTextEnvStepOutput(
            observations=[] if done else [{"role": "user", "content": page}],
            reward=reward,
            done=done,
            metadata={"action": played, **self.info},
            postprocessed_action=None,
        )

    def get_metrics(self) -> dict[str, Any]:
        """The episode's steps, score (the WebShop reward of the purchase, 0 without one) and success."""
        return {
            "steps": self.env.steps,
            "score": float(self.info.get("score", 0.0)),
            "success": bool(self.info.get("success", False)),
        }

    def close(self) -> None:
        self.env.close()


def _with_page(prompt: ConversationType, page: str) -> ConversationType:
    """The prompt with the page after its last user message (or as a new one when it does not end in one)."""
    messages = copy.deepcopy(list(prompt))
    if messages and messages[-1].get("role") == "user":
        messages[-1]["content"] += "\n\n" + page
    else:
        messages.append({"role": "user", "content": page})
    return messages


def goal_rows(
    split: Split = "train",
    catalog: str = "mini",
    goals: GoalSource = "human",
    *,
    observation_mode: ObservationMode = "text",
    reward: RewardVariant = "original",
    search_engine: str = "bm25",
    show_attributes: bool = False,
) -> list[dict[str, Any]]:
    """The goals of a fixed split as SkyRL dataset rows, in split order, with the env's settings.

    Each row: ``data_source`` (``"webshop/<catalog>/<goals>/<split>"``, a folder catalogue by its
    name), ``prompt`` (a user message with the instruction and the action format), ``env_class``
    (``"webshop"``), the fields that name the goal (``catalog``, ``goals``, ``split``,
    ``goal_index``) and the settings, as `WebShopEnv` takes them. Write them with
    ``pyarrow.parquet.write_table(pyarrow.Table.from_pylist(rows), path)``.

    Example:
        >>> rows = goal_rows("test")
        >>> len(rows), rows[0]["data_source"], rows[0]["goal_index"], rows[0]["reward"]
        (100, 'webshop/mini/human/test', 0, 'original')
        >>> print(rows[0]["prompt"][0]["content"].split("\\n\\n")[1])
        Act with one action per reply: search[keywords] or click[button text], in <action></action>.
    """
    if observation_mode == "html":
        raise ValueError("observation_mode='html' gives the model HTML pages; use 'text' or 'text_rich'")
    env = WebShopEnv(
        catalog=catalog,
        goals=goals,
        split=split,
        observation_mode=observation_mode,
        reward=reward,
        search_engine=search_engine,
        show_attributes=show_attributes,
    )  # checks the settings before any row is written
    how = f"Act with one action per reply: {GRAMMAR}, in <action></action>."
    settings = dict(
        observation_mode=observation_mode,
        reward=reward,
        search_engine=search_engine,
        show_attributes=show_attributes,
    )
    return [
        {
            "data_source": f"{ENV_ID}/{Path(catalog).name}/{goals}/{split}",
            "prompt": [{"role": "user", "content": f"{env.goal_at(i).instruction_text}\n\n{how}"}],
            "env_class": ENV_ID,
            "catalog": catalog,
            "goals": goals,
            "split": split,
            "goal_index": i,
            **settings,
        }
        for i in range(len(env.goal_indices))
    ]


def register_env() -> None:
    """Registers `WebShopTextEnv` with skyrl_gym as ``"webshop"`` (idempotent: safe to call again).

    skyrl-train makes the envs in the Ray task of its entry point (``@ray.remote
    skyrl_entrypoint``), a process of its own: call this there, before training.
    """
    if ENV_ID not in skyrl_gym.registry:
        skyrl_gym.register(id=ENV_ID, entry_point="webshop_gym.integrations.skyrl:WebShopTextEnv")


register_env()
