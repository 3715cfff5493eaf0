"""verl-agent's own WebShop code on webshop-gym, with only its import changed.

    python packages/webshop-gym/examples/verl_agent_make_envs.py --verl-agent PATH \\
        [--goal-protocol webshop-gym|verl-agent] [--batch 4] [--group 2] [--val 4]

``PATH`` is a checkout of verl-agent (github.com/langfengQ/verl-agent). verl-agent's
``make_envs`` imports its WebShop package with ``from
agent_system.environments.env_package.webshop import build_webshop_envs,
webshop_projection``; a user changes that line to import the two from
`webshop_gym.integrations.verl` (``build_webshop_envs_with_verl_agent_goals as
build_webshop_envs`` for verl-agent's goals). This script makes the same change without
editing the checkout: it registers webshop-gym's functions under that module name.
Everything else is verl-agent's code, run as its trainer runs it:

* its ``make_envs(config)``, with its ``verl/trainer/config/ppo_trainer.yaml`` and the env
  settings of its ``examples/gigpo_trainer/run_webshop.sh`` (``env.env_name=Webshop``,
  ``env.seed=0``, ``env.max_steps=15``; smaller batches), so ``build_webshop_envs`` gets
  verl-agent's own arguments and ``env_kwargs`` (``file_path``, ``attr_path``,
  ``num_products``, ``human_goals``, ``observation_mode``);
* its ``WebshopEnvironmentManager``: ``reset`` (``extract_task``, ``format_obs``, its prompt
  templates, ``format_avail_actions``), ``step`` (``webshop_projection``, history) and
  ``success_evaluator``, in the loop of its ``TrajectoryCollector.multi_turn_loop``.

In place of a model, a scripted answerer reads each prompt and answers in verl-agent's
format (``<think>...</think><action>...</action>``): search the task, open the first
result, click the options the task names, buy. It prints the first prompt and, per batch,
verl-agent's success rate and task score.

Needs: ``pip install 'webshop-gym[ray]' omegaconf torch`` (verl-agent's env manager
imports torch and omegaconf; nothing of verl itself), and the 1,000-product store:
``webshop-gym data download --set 1k && webshop-gym data prepare --set 1k``, or, with
verl-agent's own data in its ``.../webshop/webshop/data``, ``webshop-gym data prepare
--from THAT_FOLDER --out STORE`` where STORE is the folder ``catalog="1k"`` names (the error
says which).
"""

from __future__ import annotations

import argparse
import re
import sys
import types
from pathlib import Path

import numpy as np

from webshop_gym.integrations import verl

WEBSHOP_PACKAGE = "agent_system.environments.env_package.webshop"  # what make_envs imports
ASIN = re.compile(r"^b[0-9a-z]{9}$")  # a product link on a results page, lower-cased


def use_webshop_gym(goal_protocol: str) -> None:
    """Has verl-agent's import of its WebShop package give webshop-gym's functions."""
    package = types.ModuleType(WEBSHOP_PACKAGE)
    if goal_protocol == "verl-agent":
        package.build_webshop_envs = verl.build_webshop_envs_with_verl_agent_goals  # type: ignore[attr-defined]
    else:
        package.build_webshop_envs = verl.build_webshop_envs  # type: ignore[attr-defined]
    package.webshop_projection = verl.webshop_projection  # type: ignore[attr-defined]
    sys.modules[WEBSHOP_PACKAGE] = package


def verl_agent_config(checkout: Path, batch: int, group: int, val: int):  # type: ignore[no-untyped-def]
    """verl-agent's trainer config with run_webshop.sh's env settings (smaller batches)."""
    from omegaconf import OmegaConf

    config = OmegaConf.load(checkout / "verl/trainer/config/ppo_trainer.yaml")
    overrides = [
        "env.env_name=Webshop",
        "env.seed=0",
        "env.max_steps=15",
        f"env.rollout.n={group}",
        "env.resources_per_worker.num_cpus=0.1",
        f"data.train_batch_size={batch}",
        f"data.val_batch_size={val}",
    ]
    return OmegaConf.merge(config, OmegaConf.from_dotlist(overrides))


class ScriptedAnswerer:
    """Answers each prompt of a batch in verl-agent's format, from what the prompt shows."""

    TASK = re.compile(r"Your task is to: (.*)\.\n")
    ADMISSIBLE = re.compile(r"^'(.*)',$", re.MULTILINE)

    def __init__(self, n: int) -> None:
        self.clicked: list[set[str]] = [set() for _ in range(n)]

    def __call__(self, prompts: list[str]) -> list[str]:
        return [self.answer(i, prompt) for i, prompt in enumerate(prompts)]

    def answer(self, i: int, prompt: str) -> str:
        task = self.TASK.search(prompt)
        admissible = self.ADMISSIBLE.findall(prompt)
        wanted = task.group(1).partition(" with ")[2] if task else ""
        clicks = [a[len("click[") : -1] for a in admissible if a.startswith("click[")]
        if "search[<your query>]" in admissible and task:
            action = f"search[{task.group(1)}]"
        elif options := [c for c in clicks if c not in self.clicked[i] and f": {c}" in wanted]:
            action = f"click[{options[0]}]"
            self.clicked[i].add(options[0])
        elif "buy now" in clicks:
            action = "click[buy now]"
        elif products := [c for c in clicks if ASIN.match(c)]:
            action = f"click[{products[0]}]"
        else:
            action = "click[back to search]"
        return f"<think>the task asks for this; next: {action}</think><action>{action}</action>"


def run_batch(envs, max_steps: int, show_prompt: bool) -> dict[str, float]:  # type: ignore[no-untyped-def]
    """One batch of episodes as verl-agent's multi_turn_loop runs it (a script for the model)."""
    observations, infos = envs.reset(kwargs=None)
    if show_prompt:
        print(observations["text"][0])
    n = len(infos)
    answerer = ScriptedAnswerer(n)
    is_done = np.zeros(n, dtype=bool)
    total_batch_list: list[list[dict]] = [[] for _ in range(n)]
    total_infos: list[list[dict]] = [[] for _ in range(n)]
    episode_rewards = np.zeros(n, dtype=np.float32)
    episode_lengths = np.zeros(n, dtype=np.float32)
    for _ in range(max_steps):
        active_masks = np.logical_not(is_done)
        observations, rewards, dones, infos = envs.step(answerer(observations["text"]))
        episode_rewards[active_masks] += rewards[active_masks]
        episode_lengths[active_masks] += 1
        for i in range(n):
            total_batch_list[i].append({"active_masks": bool(active_masks[i])})
            total_infos[i].append(infos[i])
        is_done = np.logical_or(is_done, dones)
        if is_done.all():
            break
    success = envs.success_evaluator(
        total_infos=total_infos,
        total_batch_list=total_batch_list,
        episode_rewards=episode_rewards,
        episode_lengths=episode_lengths,
    )
    return {key: float(np.mean(values)) for key, values in success.items()}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--verl-agent", type=Path, required=True, help="a checkout of verl-agent")
    parser.add_argument("--goal-protocol", choices=verl.GOAL_PROTOCOLS, default="webshop-gym")
    parser.add_argument("--batch", type=int, default=4, help="data.train_batch_size (goals per batch)")
    parser.add_argument("--group", type=int, default=2, help="env.rollout.n (envs per goal)")
    parser.add_argument("--val", type=int, default=4, help="data.val_batch_size")
    args = parser.parse_args(argv)

    import ray

    ray.init(num_cpus=2, include_dashboard=False)
    sys.path.insert(0, str(args.verl_agent.resolve()))
    use_webshop_gym(args.goal_protocol)
    from agent_system.environments.env_manager import make_envs

    config = verl_agent_config(args.verl_agent, args.batch, args.group, args.val)
    envs, val_envs = make_envs(config)
    for name, manager in (("train", envs), ("val", val_envs)):
        result = run_batch(manager, config.env.max_steps, show_prompt=name == "train")
        print(f"{name}: {len(manager.envs)} envs, goal_protocol={args.goal_protocol}: {result}")
    envs.close()
    val_envs.close()


if __name__ == "__main__":
    main()
