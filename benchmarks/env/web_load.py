"""Load test of the web shop: many concurrent sessions against one `webshop-gym serve` on 127.0.0.1.

    python -m benchmarks.env.web_load [--sessions 50] [--steps 20] [--threads 8] [--anonymous-gets 10000]
                                  [--server-url URL]

Starts ``webshop-gym serve`` (waitress, bundled catalogue, trajectories recorded to a
temporary folder, as in production) in its own process unless ``--server-url`` is given,
then runs every session in its own client thread, all at once: even-numbered sessions
shop through the web pages (form posts, 303 redirect, page fetch), odd-numbered ones
through the JSON API. Each session gets its own goal and a scripted action sequence
(search, open products, choose options, open tabs, page through results, buy at the
end), and each answer is compared with what a local env returns for the same goal and
actions (web pages: the env's page as the site serves it, `webshop_gym.web.pages`): any
difference (another session's page, a lost step) counts as an error, as do HTTP errors.

Before the sessions, one client sends ``--anonymous-gets`` requests for the shop's front
pages (``/`` and ``/?goal=i``, as a crawler or a flood would): they must cost the server
no session (checked through ``/healthz``), so every visitor after them is served.

Prints per-step latency percentiles (a web step = the post and the page fetch after it)
and exits 1 if there was any error.
"""

from __future__ import annotations

import argparse
import http.client
import json
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from benchmarks.machine import describe_machine
from benchmarks.markdown import table
from webshop_gym.envs import WebShopEnv
from webshop_gym.web.pages import landing_page, visit_page
from webshop_gym.web.visits import PageRecord

SPLIT = "test"


@dataclass
class Plan:
    """One session's goal, actions and the observations a correct server returns."""

    index: int
    interface: str  # "web" or "api"
    goal_index: int
    first_observation: str
    actions: list[str]
    observations: list[str]
    rewards: list[float]


@dataclass
class Outcome:
    latencies: list[float] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)


def scripted_actions(
    env: WebShopEnv, session: int, steps: int, as_served: bool = False
) -> tuple[str, list[str], list[str], list[float]]:
    """A deterministic mixed walk through the shop; the last action buys when it can.

    With ``as_served`` the "observations" are the pages the web shop serves for them.
    """
    goal_index = session % len(env.goal_indices)
    first, info = env.reset(seed=session, options={"goal_index": goal_index})
    if as_served:
        first = landing_page(env, goal_index, "generated")
    trail = [PageRecord.of(env, info, False, False)]  # the visit's pages so far, as the server keeps them
    actions, observations, rewards = [], [], []
    for t in range(steps):
        clicks = [a for a in info["available_actions"] if a.startswith("click[") and a != "click[buy now]"]
        if info["page"] == "search":
            words = info["instruction"].split()
            action = f"search[{' '.join(words[(session + t) % 5 : (session + t) % 5 + 6])}]"
        elif t == steps - 1 and "click[buy now]" in info["available_actions"]:
            action = "click[buy now]"
        elif info["page"] == "done":
            break
        else:
            action = clicks[(session * 7 + t * 3) % len(clicks)] if clicks else "click[back to search]"
        observation, reward, terminated, truncated, info = env.step(action)
        if as_served:
            record = PageRecord.of(env, info, terminated, truncated, parent=len(trail) - 1, action=action)
            trail.append(record)
            observation = visit_page(env, goal_index, record, "generated", trail=trail)
        actions.append(action)
        observations.append(observation)
        rewards.append(reward)
        if terminated or truncated:
            break
    return first, actions, observations, rewards


def make_plans(sessions: int, steps: int, max_steps: int) -> list[Plan]:
    web_env = WebShopEnv(observation_mode="html", split=SPLIT, max_steps=max_steps)
    api_env = WebShopEnv(observation_mode="text", split=SPLIT, max_steps=max_steps)
    plans = []
    for index in range(sessions):
        interface = "web" if index % 2 == 0 else "api"
        env = web_env if interface == "web" else api_env
        first, actions, observations, rewards = scripted_actions(env, index, steps, interface == "web")
        plans.append(
            Plan(index, interface, index % len(env.goal_indices), first, actions, observations, rewards)
        )
    return plans


class Client:
    """One kept-alive HTTP connection."""

    def __init__(self, url: str) -> None:
        parsed = urllib.parse.urlsplit(url)
        self.connection = http.client.HTTPConnection(parsed.hostname, parsed.port, timeout=60)

    def request(self, method: str, path: str, body: bytes | None = None, content_type: str | None = None):
        headers = {"Content-Type": content_type} if content_type else {}
        self.connection.request(method, path, body=body, headers=headers)
        response = self.connection.getresponse()
        return response.status, response.getheader("Location"), response.read()

    def json(self, method: str, path: str, payload: dict | None = None):
        body = json.dumps(payload).encode() if payload is not None else None
        status, _, raw = self.request(method, path, body, "application/json" if body else None)
        return status, json.loads(raw) if raw else None


def run_session(url: str, plan: Plan, start: threading.Barrier, outcome: Outcome) -> None:
    """Runs one session; a failure of any kind (timeout, refused connection) is an error."""
    run = run_web_session if plan.interface == "web" else run_api_session
    try:
        run(url, plan, start, outcome)
    except Exception as error:
        outcome.errors.append(f"session {plan.index}: {type(error).__name__}: {error}")


def run_web_session(url: str, plan: Plan, start: threading.Barrier, outcome: Outcome) -> None:
    client = Client(url)
    start.wait()
    location = f"/?goal={plan.goal_index}"  # the goal's page; the first action starts the session
    status, _, page = client.request("GET", location)
    if status != 200 or page.decode() != plan.first_observation:
        outcome.errors.append(f"session {plan.index}: the first page is not its goal's (HTTP {status})")
    for t, (action, expected) in enumerate(zip(plan.actions, plan.observations, strict=True), start=1):
        began = time.perf_counter()
        if action.startswith("search["):
            form = {"search_query": action[len("search[") : -1]}
        else:
            form = {"action": action}
        body = urllib.parse.urlencode(form).encode()
        status, redirect, _ = client.request("POST", location, body, "application/x-www-form-urlencoded")
        if status != 303 or not redirect:
            outcome.errors.append(f"session {plan.index} step {t}: HTTP {status}")
            return
        location = redirect  # page t has its own address, and its forms post there
        status, _, page = client.request("GET", location)
        outcome.latencies.append(time.perf_counter() - began)
        if status != 200 or page.decode() != expected:
            outcome.errors.append(
                f"session {plan.index} step {t} ({action}): the page differs from a local env's"
            )
            return


def run_api_session(url: str, plan: Plan, start: threading.Barrier, outcome: Outcome) -> None:
    client = Client(url)
    start.wait()
    status, created = client.json("POST", "/api/v1/envs", {"split": SPLIT, "max_steps": 100})
    if status != 201:
        outcome.errors.append(f"session {plan.index}: create answered {status}: {created}")
        return
    path = f"/api/v1/envs/{created['env_id']}"
    status, answer = client.json(
        "POST", f"{path}/reset", {"seed": plan.index, "options": {"goal_index": plan.goal_index}}
    )
    if status != 200 or answer["observation"] != plan.first_observation:
        outcome.errors.append(f"session {plan.index}: reset is not its own (HTTP {status})")
        return
    for t, (action, expected, reward) in enumerate(
        zip(plan.actions, plan.observations, plan.rewards, strict=True), start=1
    ):
        began = time.perf_counter()
        status, answer = client.json("POST", f"{path}/step", {"action": action})
        outcome.latencies.append(time.perf_counter() - began)
        if status != 200 or answer["observation"] != expected or answer["reward"] != reward:
            outcome.errors.append(
                f"session {plan.index} step {t} ({action}): the answer differs from a local env's"
            )
            return
    client.json("DELETE", path)


def anonymous_gets(url: str, count: int, goal_count: int) -> tuple[float, list[str]]:
    """``count`` GETs of the front pages from one client; the seconds taken and any errors."""
    client = Client(url)
    errors = []
    began = time.perf_counter()
    for number in range(count):
        path = "/" if number % 2 == 0 else f"/?goal={number % goal_count}"
        status, _, _ = client.request("GET", path)
        if status != (303 if path == "/" else 200):
            errors.append(f"anonymous GET {number} {path}: HTTP {status}")
            if len(errors) > 5:
                break
    seconds = time.perf_counter() - began
    status, health = client.json("GET", "/healthz")
    if status != 200 or health["visitor_sessions"] != 0:
        errors.append(f"after {count} anonymous GETs the server holds sessions: {health}")
    return seconds, errors


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def start_server(threads: int, log_dir: str) -> tuple[subprocess.Popen, str]:
    """``webshop-gym serve`` in its own process; its messages go to a file in ``log_dir``.

    (A pipe nobody reads would fill up with waitress's queue warnings and stall the server.)
    """
    arguments = ["--catalog", "mini", "--split", SPLIT, "--threads", str(threads), "--log-dir", log_dir]

    def listening(port: int) -> bool:
        with socket.create_connection(("127.0.0.1", port), timeout=1):
            return True

    return launch_server(arguments, Path(log_dir) / "server.log", listening, timeout_s=60)


def launch_server(
    arguments: list[str], log: Path, ready: Callable[[int], bool], timeout_s: float
) -> tuple[subprocess.Popen, str]:
    """``webshop-gym serve ARGUMENTS --port <a free port>`` in its own process, its output in
    ``log``; returns the process and its URL once ``ready(port)`` (an OSError: not yet)."""
    port = free_port()
    command = [sys.executable, "-m", "webshop_gym.cli", "serve", *arguments, "--port", str(port)]
    with log.open("w") as sink:
        server = subprocess.Popen(command, stdout=sink, stderr=subprocess.STDOUT)
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise RuntimeError(f"the server exited: {log.read_text()}")
        try:
            if ready(port):
                return server, f"http://127.0.0.1:{port}"
        except OSError:
            pass
        time.sleep(0.1)
    server.kill()
    raise RuntimeError(f"the server did not start within {timeout_s:.0f} s")


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q / 100 * (len(ordered) - 1))))]


def measure(
    sessions: int, steps: int, threads: int, anonymous: int, server_url: str | None = None
) -> dict[str, Any]:
    """The flood of ``anonymous`` front-page GETs, then ``sessions`` sessions of ``steps`` at once.

    Returns the flood's seconds and errors, the sessions' wall seconds, every step's seconds
    by interface, every error, and the trajectory files the server wrote (None for ``server_url``).
    """
    plans = make_plans(sessions, steps, max_steps=100)
    outcomes = [Outcome() for _ in plans]
    with tempfile.TemporaryDirectory(prefix="webshop-load-") as log_dir:
        server = None
        url = server_url
        if url is None:
            server, url = start_server(threads, log_dir)
        try:
            flood_seconds, flood_errors = anonymous_gets(url, anonymous, 100)
            start = threading.Barrier(len(plans))
            workers = [
                threading.Thread(target=run_session, args=(url, plan, start, outcome))
                for plan, outcome in zip(plans, outcomes, strict=True)
            ]
            began = time.perf_counter()
            for worker in workers:
                worker.start()
            for worker in workers:
                worker.join()
            wall = time.perf_counter() - began
        finally:
            if server is not None:
                server.terminate()
                server.wait(timeout=30)
        logged = len(list(Path(log_dir).glob("web-*.jsonl")))

    pairs = list(zip(plans, outcomes, strict=True))
    return {
        "url": url,
        "sessions": len(plans),
        "steps": steps,
        "threads": threads,
        "anonymous_gets": anonymous,
        "flood_s": flood_seconds,
        "flood_errors": flood_errors,
        "wall_s": wall,
        "web_s": [s for p, o in pairs if p.interface == "web" for s in o.latencies],
        "api_s": [s for p, o in pairs if p.interface == "api" for s in o.latencies],
        "errors": flood_errors + [error for outcome in outcomes for error in outcome.errors],
        "trajectory_files": logged if server_url is None else None,
    }


def report(figures: dict[str, Any]) -> list[str]:
    """`measure`'s figures as printed: the flood, the sessions, a latency table, the first errors."""
    web, api, errors = figures["web_s"], figures["api_s"], figures["errors"]
    steps = len(web) + len(api)
    lines = []
    if figures["anonymous_gets"]:
        count, seconds = figures["anonymous_gets"], figures["flood_s"]
        lines.append(
            f"{count} anonymous GETs of / and /?goal=i from one client in {seconds:.1f} s "
            f"({count / seconds:.0f}/s): {'no' if not figures['flood_errors'] else 'ERROR:'} sessions "
            "created; then the sessions below"
        )
    lines.append(
        f"{figures['sessions']} concurrent sessions x {figures['steps']} steps against {figures['url']} "
        f"({figures['threads']} server threads): {steps} steps in {figures['wall_s']:.2f} s = "
        f"{steps / figures['wall_s']:.0f} steps/s; {len(errors)} errors"
    )
    if figures["trajectory_files"] is not None:
        lines.append(
            f"visitor trajectories recorded: {figures['trajectory_files']} files (one per web session)"
        )
    rows = []
    for name, values in (("web (post + page)", web), ("api (step)", api), ("all", web + api)):
        if values:
            ms = [v * 1000 for v in values]
            cells = [statistics.median(ms), percentile(ms, 95), percentile(ms, 99), max(ms)]
            rows.append([name, len(ms), *(f"{value:.1f}" for value in cells)])
    lines += table(["interface", "steps", "p50 ms", "p95 ms", "p99 ms", "max ms"], rows)
    return lines + [f"error: {error}" for error in errors[:20]]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--sessions", type=int, default=50)
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--threads", type=int, default=8, help="server worker threads")
    parser.add_argument(
        "--anonymous-gets",
        type=int,
        default=10_000,
        help="front-page GETs from one client before the sessions (they must create nothing)",
    )
    parser.add_argument(
        "--server-url",
        default=None,
        help="use a running server (bundled catalogue, split test, no visitor sessions yet)",
    )
    args = parser.parse_args(argv)
    figures = measure(args.sessions, args.steps, args.threads, args.anonymous_gets, args.server_url)
    print(f"machine: {describe_machine()}")
    print("\n".join(report(figures)))
    return 1 if figures["errors"] else 0


if __name__ == "__main__":
    sys.exit(main())
