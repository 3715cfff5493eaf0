"""10,000 hostile actions across env instances: none raises, none changes the page."""

from __future__ import annotations

import random

from webshop_gym.envs import WebShopEnv

BRACKETS = "[]()<>{}"


def hostile_actions(rng: random.Random, count: int):
    """Random unicode, bracket soup, empty strings, 100 KB strings and near-miss syntax."""
    makers = [
        lambda: "",
        lambda: "".join(chr(rng.randrange(0x20, 0x2FFFF)) for _ in range(rng.randrange(1, 60))),
        lambda: "".join(rng.choice(BRACKETS + "clicksearch ") for _ in range(rng.randrange(1, 80))),
        lambda: "x" * 100_000,
        lambda: "click[" + "a" * 100_000 + "]",
        lambda: "click[" + "".join(chr(rng.randrange(0x80, 0x10FFFF)) for _ in range(8)) + "]",
        lambda: (
            rng.choice(["search", "click", "buy", "CLICK", "search[]", "click[]"])
            + rng.choice(["", "[", "[[", "]["])
        ),
        lambda: "click[\x00\n\t]",
        lambda: "click[b0" + "".join(rng.choice("0123456789") for _ in range(9)) + "]",
    ]
    for _ in range(count):
        action = rng.choice(makers)()
        # Surrogates cannot even be encoded; keep them: an agent may still send one.
        yield action


def test_ten_thousand_hostile_actions_are_reported_invalid():
    rng = random.Random(1234)
    envs = [
        WebShopEnv(split="test", max_steps=10_000),
        WebShopEnv(observation_mode="text_rich", max_steps=10_000),
    ]
    observations = [env.reset(seed=i)[0] for i, env in enumerate(envs)]
    # Put the second env on a results page so that the hostile clicks meet real buttons.
    observations[1], *_ = envs[1].step(f"search[{envs[1].goal.instruction_text}]")
    states = [env.state for env in envs]
    for n, action in enumerate(hostile_actions(rng, 10_000)):
        i = n % len(envs)
        observation, reward, terminated, truncated, info = envs[i].step(action)
        assert info["action_error"], f"accepted {action[:80]!r}"
        assert observation == observations[i]
        assert envs[i].state == states[i]
        assert reward == 0.0 and not terminated and not truncated
