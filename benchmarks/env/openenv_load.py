"""Load test of WebShop's OpenEnv server: concurrent sessions through openenv-core's own client.

    python -m benchmarks.env.openenv_load [--sessions 50] [--steps 20] [--runs 3] [--server-url URL]
                                          [--out FILE]

Starts ``webshop-gym serve --protocol openenv`` (openenv-core's app on uvicorn, bundled
catalogue, test split) in its own process on 127.0.0.1, unless ``--server-url`` names a
running one, then plays every session at once: each has its own thread and its own
`webshop_gym.integrations.openenv.WebShopClient` (openenv-core's ``EnvClient``, blocking),
resets to its own goal and seed, and after a barrier plays a scripted walk of ``--steps``
actions (`benchmarks.env.web_load.scripted_actions`: searches, products, options, tabs, paging,
a purchase at the end; the walk the web load test plays). Every page and reward is compared
with a local env's for the same goal and actions: a page of another session, a lost step, a
refused session or any error counts as an error. Prints, per run, the errors, the steps per
second and the step latency (one ``client.step`` round trip), and exits 1 on any error.
`measure` returns the figures, `report` renders them.

Needs webshop-gym with the ``openenv`` and ``web`` extras (``web``: the shared walk imports
the web shop's page module).
"""

from __future__ import annotations

import argparse
import contextlib
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from benchmarks.env.web_load import launch_server, percentile, scripted_actions
from benchmarks.markdown import markdown_record, table
from webshop_gym.envs import Split, WebShopEnv

SPLIT: Split = "test"
MAX_STEPS = 100  # the walk's last action buys; no session runs out of steps first


@dataclass
class Plan:
    """One session's goal, seed, actions and what a correct server answers."""

    index: int
    goal_index: int
    first_page: str
    actions: list[str]
    pages: list[str]
    rewards: list[float]


@dataclass
class Outcome:
    latencies: list[float] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)


def make_plans(sessions: int, steps: int) -> list[Plan]:
    env = WebShopEnv(catalog="mini", split=SPLIT, max_steps=MAX_STEPS)
    plans = []
    for index in range(sessions):
        first, actions, pages, rewards = scripted_actions(env, index, steps)
        plans.append(Plan(index, index % len(env.goal_indices), first, actions, pages, rewards))
    return plans


def run_session(url: str, plan: Plan, start: threading.Barrier, outcome: Outcome) -> None:
    """One client: reset, wait for the others, then step and check each answer."""
    # Here, not at the top: the module imports without the openenv extra (doctests, --help).
    from webshop_gym.integrations.openenv import WebShopAction, WebShopClient

    try:
        with WebShopClient(base_url=url).sync() as client:
            result = client.reset(split=SPLIT, goal_index=plan.goal_index, seed=plan.index)
            if result.observation.text != plan.first_page:
                outcome.errors.append(f"session {plan.index}: the reset is not its goal's")
            start.wait(timeout=120)
            steps = zip(plan.actions, plan.pages, plan.rewards, strict=True)
            for t, (action, page, reward) in enumerate(steps, start=1):
                began = time.perf_counter()
                result = client.step(WebShopAction(action=action))
                outcome.latencies.append(time.perf_counter() - began)
                if result.observation.text != page or result.reward != reward:
                    outcome.errors.append(
                        f"session {plan.index} step {t} ({action}): differs from a local env's"
                    )
                    return
    except Exception as error:  # a refused session, a timeout, a broken barrier: all errors
        outcome.errors.append(f"session {plan.index}: {type(error).__name__}: {error}")
        start.abort()  # the others stop waiting for this one


def start_server(sessions: int, log_dir: str) -> tuple[subprocess.Popen, str]:
    """``webshop-gym serve --protocol openenv`` in its own process; its log goes to a file."""
    arguments = ["--protocol", "openenv", "--catalog", "mini", "--split", SPLIT]
    arguments += ["--max-steps", str(MAX_STEPS), "--max-sessions", str(sessions)]

    def healthy(port: int) -> bool:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=5):
            return True

    return launch_server(arguments, Path(log_dir) / "server.log", healthy, timeout_s=120)


def run_once(url: str, plans: list[Plan]) -> tuple[float, list[float], list[str]]:
    """All sessions at once; the wall seconds of their steps, every step's latency and the errors."""
    outcomes = [Outcome() for _ in plans]
    start = threading.Barrier(len(plans) + 1)  # the sessions, and this thread to start the clock
    workers = [
        threading.Thread(target=run_session, args=(url, plan, start, outcome))
        for plan, outcome in zip(plans, outcomes, strict=True)
    ]
    for worker in workers:
        worker.start()
    with contextlib.suppress(threading.BrokenBarrierError):  # a session failed: it is in its errors
        start.wait(timeout=180)
    began = time.perf_counter()
    for worker in workers:
        worker.join()
    wall = time.perf_counter() - began
    latencies = [seconds for outcome in outcomes for seconds in outcome.latencies]
    return wall, latencies, [error for outcome in outcomes for error in outcome.errors]


def measure(sessions: int, steps: int, runs: int, server_url: str | None = None) -> dict[str, Any]:
    """``runs`` runs, one after another, of ``sessions`` sessions of ``steps`` steps at once.

    Starts a server unless ``server_url`` names one. Returns its URL, the sessions and steps
    asked for, and per run the wall seconds of its steps, every step's seconds and the errors.
    """
    plans = make_plans(sessions, steps)
    played = []
    with tempfile.TemporaryDirectory(prefix="webshop-openenv-load-") as log_dir:
        server, url = (None, server_url) if server_url else start_server(sessions, log_dir)
        try:
            for _ in range(runs):
                wall, latencies, errors = run_once(url, plans)
                played.append({"wall_s": wall, "step_s": latencies, "errors": errors})
        finally:
            if server is not None:
                server.terminate()
                server.wait(timeout=30)
    return {"url": url, "sessions": sessions, "steps": steps, "runs": played}


COLUMNS = ["run", "steps", "errors", "wall", "steps/s", "p50 ms", "p95 ms", "p99 ms", "max ms"]


def run_cells(number: int, run: dict[str, Any]) -> list[object]:
    """One run's row: its steps, errors, wall time, steps per second and latency percentiles."""
    ms = sorted(seconds * 1000 for seconds in run["step_s"])
    cells: list[object] = [number, f"{len(ms):,}", len(run["errors"])]
    if not ms:  # no step answered: nothing to time
        return cells + [""] * (len(COLUMNS) - len(cells))
    latencies = [statistics.median(ms), percentile(ms, 95), percentile(ms, 99), max(ms)]
    wall = run["wall_s"]
    return [*cells, f"{wall:.2f} s", f"{len(ms) / wall:.0f}", *(f"{value:.1f}" for value in latencies)]


def report(figures: dict[str, Any]) -> list[str]:
    """`measure`'s figures as recorded: what ran, a row per run, then the first 20 errors."""
    errors = [error for run in figures["runs"] for error in run["errors"]]
    rows = [run_cells(number, run) for number, run in enumerate(figures["runs"], start=1)]
    return [
        f"{figures['sessions']} concurrent sessions x {figures['steps']} steps, each through its own "
        "`WebShopClient` (openenv-core's `EnvClient`, WebSocket) against `webshop-gym serve --protocol "
        f"openenv` on {figures['url']} (bundled catalogue, test split); every page and reward checked "
        "against a local env.",
        "",
        *table(COLUMNS, rows, tight_empty=True),  # a run without steps: "| |", as it was always written
        *([""] if errors else []),
        *(f"error: {error}" for error in errors[:20]),
    ]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--sessions", type=int, default=50, help="concurrent sessions (clients)")
    parser.add_argument("--steps", type=int, default=20, help="steps per session")
    parser.add_argument("--runs", type=int, default=1, help="runs one after another against the same server")
    parser.add_argument("--server-url", default=None, help="a running server (bundled catalogue, test split)")
    parser.add_argument("--out", type=Path, default=None, help="write the results here as Markdown")
    args = parser.parse_args(argv)

    figures = measure(args.sessions, args.steps, args.runs, args.server_url)
    text = markdown_record("# OpenEnv server load test", report(figures), "benchmarks.env.openenv_load", argv)
    if args.out is not None:
        args.out.write_text(text)
    print(text)
    return 1 if any(run["errors"] for run in figures["runs"]) else 0


if __name__ == "__main__":
    sys.exit(main())
