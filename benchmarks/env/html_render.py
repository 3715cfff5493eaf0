"""HTML observation cost: median time to render each kind of page, and one HTML-mode step.

    python -m benchmarks.env.html_render [--repeats 200]

Renders the pages of expert episodes on the bundled catalogue's test goals with
`webshop_gym.render.html.render_html` (templates already compiled, as after the first
step of a process) and times `env.step` of ``WebShop-Mini-HTML-v0`` against
``WebShop-Mini-Text-v0`` over the same actions. (The original renders a template in
6-9 ms and parses the HTML twice more per step.)
"""

from __future__ import annotations

import argparse
import dataclasses
import statistics
import time
from collections import defaultdict
from typing import Any

import gymnasium as gym

import webshop_gym  # noqa: F401
from benchmarks.markdown import table
from webshop_gym.agents.scripted import ExpertPolicy
from webshop_gym.render.html import render_html
from webshop_gym.shop import Page


def expert_actions(goals: int) -> list[tuple[int, list[str]]]:
    env = gym.make("WebShop-Mini-Text-v0", split="test")
    episodes = []
    for goal in range(goals):
        observation, info = env.reset(seed=goal, options={"goal_index": goal})
        expert, actions, done = ExpertPolicy(env), [], False
        while not done:
            action = expert.act(observation, info)
            actions.append(action)
            observation, _, terminated, truncated, info = env.step(action)
            done = terminated or truncated
        episodes.append((goal, actions))
    return episodes


def step_seconds(env_id: str, episodes: list[tuple[int, list[str]]]) -> list[float]:
    env = gym.make(env_id, split="test", max_steps=100)
    times = []
    for goal, actions in episodes:
        env.reset(seed=goal, options={"goal_index": goal})
        for action in actions:
            began = time.perf_counter()
            env.step(action)
            times.append(time.perf_counter() - began)
    return times


def measure(goals: int, repeats: int) -> dict[str, Any]:
    """Median render seconds per page kind (and renders timed), and env.step seconds of the
    HTML and the text env over the same expert actions."""
    episodes = expert_actions(goals)
    env = gym.make("WebShop-Mini-HTML-v0", split="test", max_steps=100).unwrapped
    render_times: dict[str, list[float]] = defaultdict(list)
    for goal, actions in episodes:
        env.reset(seed=goal, options={"goal_index": goal})
        for action in [None, *actions]:
            if action is not None:
                env.step(action)
            state = env.state
            render_html(state, env.catalog)  # compiled and cached by now
            began = time.perf_counter()
            for _ in range(repeats):
                render_html(state, env.catalog)
            render_times[state.page.value].append((time.perf_counter() - began) / repeats)
            if state.page is Page.ITEM:  # and its sub-pages
                for tab in ("Description", "Features", "Reviews"):
                    sub_page = dataclasses.replace(state, page=Page.SUB_PAGE, sub_page=tab)
                    began = time.perf_counter()
                    for _ in range(repeats):
                        render_html(sub_page, env.catalog)
                    render_times["sub_page"].append((time.perf_counter() - began) / repeats)
    return {
        "renders": {
            page: {"timed": len(times), "median_s": statistics.median(times)}
            for page, times in sorted(render_times.items())
        },
        "step_median_s": {
            mode: statistics.median(step_seconds(env_id, episodes))
            for mode, env_id in (("html", "WebShop-Mini-HTML-v0"), ("text", "WebShop-Mini-Text-v0"))
        },
    }


def markdown(figures: dict[str, Any]) -> str:
    rows = [[page, r["timed"], f"{1000 * r['median_s']:.3f}"] for page, r in figures["renders"].items()]
    step = figures["step_median_s"]
    lines = table(["page", "renders timed", "median render ms"], rows)
    lines += ["", f"median env.step over the same actions: html {1000 * step['html']:.3f} ms, "]
    lines[-1] += f"text {1000 * step['text']:.3f} ms"
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--goals", type=int, default=20)
    parser.add_argument("--repeats", type=int, default=50)
    args = parser.parse_args(argv)
    figures = measure(args.goals, args.repeats)
    print(markdown(figures))
    return figures


if __name__ == "__main__":
    main()
