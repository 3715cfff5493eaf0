"""Installs every built wheel into its own fresh virtual environment and uses it there.

    python scripts/check_wheels.py [--dist dist]

Each package goes into a new venv (its sibling packages come from the same dist folder, so
the wheels are what is tested, never the source tree), is imported from a folder outside
the repo, ships its ``py.typed`` marker (PEP 561: type checkers read its annotations), and
webshop-gym plays a short episode of WebShop-Mini-Text-v0.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CONSTRAINTS = ROOT / "constraints.txt"

# What each installed package must be able to do, run from outside the repo.
SMOKE_TESTS = {
    "webshop-gym": """
import gymnasium as gym, webshop_gym
assert "site-packages" in webshop_gym.__file__, webshop_gym.__file__
import importlib.resources
assert (importlib.resources.files("webshop_gym") / "py.typed").is_file(), "no py.typed"
from webshop_gym.agents.scripted import RulePolicy, run_episode
env = gym.make("WebShop-Mini-Text-v0", split="test")
result = run_episode(env, RulePolicy(), seed=0, goal_index=0)  # search, open the first hit, buy
assert result["page"] == "done" and 0.0 <= result["score"] <= 1.0, result
reward = result["score"]
print("webshop-gym", webshop_gym.__version__, "episode reward", round(reward, 3))
""",
    "shared-prompts": """
import shared_prompts
assert "site-packages" in shared_prompts.__file__
import importlib.resources
assert (importlib.resources.files("shared_prompts") / "py.typed").is_file(), "no py.typed"
action = shared_prompts.parse_model_output("click[buy now]").action
print("shared-prompts", shared_prompts.__version__, action)
""",
    "apo-agent": """
import gymnasium as gym
import torch
import apo_agent
from apo_agent.config import TrainConfig
from apo_agent.model.policy import LMPolicy
from apo_agent.model.tiny import build_tiny_model, product_ids, shop_texts, train_tokenizer
from apo_agent.rollout.episodes import collect_episodes
from apo_agent.rollout.tokens import prompt_encoder
assert "site-packages" in apo_agent.__file__
import importlib.resources
assert (importlib.resources.files("apo_agent") / "py.typed").is_file(), "no py.typed"
env = gym.make("WebShop-Mini-Text-v0", split="train", max_steps=2)
tokenizer = train_tokenizer(shop_texts(env)[:200], vocab_size=400, whole_tokens=product_ids(env))
policy = LMPolicy(build_tiny_model(tokenizer, 32, 1, 2), tokenizer, torch.device("cpu"))
encoder = prompt_encoder(tokenizer, TrainConfig.from_preset("cpu-demo"))
(episode,) = collect_episodes(
    policy, [env], encoder, [(0, 0)], max_new_tokens=8, temperature=1.0, progress=False
)
assert episode.steps == 2 and episode.agent_tokens > 0
print("apo-agent", apo_agent.__version__, "played", episode.steps, "steps with a tiny model")
""",
}


def make_venv(folder: Path) -> Path:
    venv.EnvBuilder(with_pip=True, clear=True).create(folder)
    return folder / "bin" / "python"


def check(package: str, dist: Path, work: Path) -> None:
    python = make_venv(work / package)
    pip = [str(python), "-m", "pip", "install", "-q", "-c", str(CONSTRAINTS), "--find-links", str(dist)]
    subprocess.run([*pip, package], check=True)
    subprocess.run([str(python), "-c", SMOKE_TESTS[package]], check=True, cwd=work)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--dist", type=Path, default=ROOT / "dist")
    parser.add_argument("packages", nargs="*", help="default: every package with a wheel in --dist")
    args = parser.parse_args()
    dist = args.dist.resolve()
    if not any(dist.glob("*.whl")):
        sys.exit(f"no wheels in {dist}: run `python scripts/build_packages.py --out {dist}` first")
    built = {w.name.split("-")[0].replace("_", "-") for w in dist.glob("*.whl")}
    unknown = built - set(SMOKE_TESTS)
    if unknown:
        sys.exit(f"no smoke test for {sorted(unknown)}: add one to SMOKE_TESTS")
    with tempfile.TemporaryDirectory(prefix="wheel-check-") as tmp:
        for package in args.packages or sorted(built):
            check(package, dist, Path(tmp))


if __name__ == "__main__":
    main()
