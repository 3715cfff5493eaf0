"""`python -m webshop_gym.demo`: one episode on screen, then two policies scored.

Plays the privileged expert on a test goal of the bundled catalogue, printing each page,
then scores the rule baseline and the expert on the whole test split.
"""

from __future__ import annotations

import argparse

import gymnasium as gym
import numpy as np
from tqdm import tqdm

import webshop_gym  # noqa: F401  (registers the ids)
from webshop_gym.agents.scripted import ExpertPolicy, RulePolicy, run_episode


def show_episode(env: gym.Env, goal_index: int) -> None:
    observation, info = env.reset(seed=0, options={"goal_index": goal_index})
    expert = ExpertPolicy(env)
    print(f"\n--- goal {goal_index}: {info['instruction']}\n{observation}")
    done = False
    while not done:
        action = expert.act(observation, info)
        observation, reward, terminated, truncated, info = env.step(action)
        done = terminated or truncated
        print(f"\n> {action}\n{observation[:600]}")
    print(f"\nreward {reward:.3f}  breakdown {info.get('reward_breakdown')}")


def score(env: gym.Env, make_policy, name: str) -> tuple[float, float]:
    n_goals = len(env.unwrapped.goal_indices)  # type: ignore[attr-defined]
    results = [
        run_episode(env, make_policy(env), seed=0, goal_index=i)
        for i in tqdm(range(n_goals), desc=name, unit="episode")
    ]
    return 100 * float(np.mean([r["score"] for r in results])), 100 * float(
        np.mean([r["success"] for r in results])
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--env-id", default="WebShop-Mini-Text-v0")
    parser.add_argument("--catalog", default=None, help="override the id's catalogue (a folder or name)")
    parser.add_argument("--goal-index", type=int, default=0)
    args = parser.parse_args()
    kwargs = {"split": "test"} | ({"catalog": args.catalog} if args.catalog else {})
    env = gym.make(args.env_id, **kwargs)
    show_episode(env, args.goal_index)
    n_goals = len(env.unwrapped.goal_indices)  # type: ignore[attr-defined]
    print(f"\nScores on the test split of {args.env_id} ({n_goals} goals):")
    rows = [
        ("rule", score(env, lambda _: RulePolicy(), "rule")),
        ("expert", score(env, ExpertPolicy, "expert")),
    ]
    print("| policy | score | success % |\n|---|---|---|")
    for name, (mean_score, success) in rows:
        print(f"| {name} | {mean_score:.1f} | {success:.1f} |")


if __name__ == "__main__":
    main()
