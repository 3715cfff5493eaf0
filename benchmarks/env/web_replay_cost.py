"""What going back costs the web shop: one POST to an earlier page, and many of them at once.

    python -m benchmarks.env.web_replay_cost [--depth 99] [--requests 20] [--branchers 8]
                                         [--others 4] [--seconds 10]

Starts ``webshop-gym serve`` (bundled catalogue, default settings, a temporary log folder) in
its own process on 127.0.0.1, then:

1. **One branching request.** A session takes ``--depth`` actions (a search, then Next > and
   < Prev in turn), then sends ``--requests`` times the form ``action=click[next >]`` to page
   ``depth - 1``, the page before the last (what Back and a click do). For each request: how
   much the log folder grew, the server process's CPU time (``/proc/<pid>/stat``) and the
   latency.
2. **Others under branching clients.** ``--others`` visitors step through their own sessions
   (a step = the form post and the page after it), first alone for ``--seconds``, then while
   ``--branchers`` clients, each with a session ``--depth`` actions deep, send that request
   as fast as they can, and, as the control, while as many clients load a page of their
   session (a GET, what any visitor may do) as fast as they can. Every client connects
   from its own loopback address (127.0.0.2, 127.0.0.3, ...), as different people would.
   Prints the others' median and p90 step latency in each phase, and how the branching
   requests were answered (303: taken; 429: refused by the per-client limit; 409: the
   session's page limit).

The same script measures any version of the server: run it with ``PYTHONPATH`` pointing at
another checkout's ``packages/webshop-gym/src`` to measure that one (the server process
inherits it). Issue 40.3's figures (before and after, on one 2-core machine) came from
``python -m benchmarks.env.web_replay_cost --seconds 15``.
"""

from __future__ import annotations

import argparse
import http.client
import os
import statistics
import tempfile
import threading
import time
import urllib.parse
from collections import Counter
from pathlib import Path
from typing import Any

from benchmarks.env.web_load import launch_server, percentile
from benchmarks.machine import describe_machine
from benchmarks.markdown import table

FORWARD, BACK = "click[next >]", "click[< prev]"


class Visitor:
    """One kept-alive connection from its own loopback address, shopping in one session."""

    def __init__(self, url: str, address: str) -> None:
        parsed = urllib.parse.urlsplit(url)
        self.connection = http.client.HTTPConnection(
            parsed.hostname or "127.0.0.1", parsed.port, timeout=120, source_address=(address, 0)
        )
        self.page = ""

    def post(self, path: str, form: dict[str, str]) -> tuple[int, str]:
        body = urllib.parse.urlencode(form).encode()
        headers = {"Content-Type": "application/x-www-form-urlencoded"}
        self.connection.request("POST", path, body=body, headers=headers)
        response = self.connection.getresponse()
        response.read()
        return response.status, response.getheader("Location") or ""

    def get(self, path: str) -> int:
        self.connection.request("GET", path)
        response = self.connection.getresponse()
        response.read()
        return response.status

    def start(self, goal: int) -> None:
        status, location = self.post(f"/?goal={goal}", {"search_query": "shoes"})
        if status != 303:
            raise RuntimeError(f"starting a session answered HTTP {status}")
        self.page = location

    def step(self, action: str) -> None:
        """A plain step: the form post from the current page and the page it leads to."""
        status, location = self.post(self.page, {"action": action})
        if status != 303:
            raise RuntimeError(f"a step answered HTTP {status}")
        self.page = location
        if self.get(location) != 200:
            raise RuntimeError(f"page {location} did not open")

    def walk(self, goal: int, depth: int) -> str:
        """Starts a session and takes ``depth`` actions; returns the address of page ``depth - 1``."""
        self.start(goal)
        previous = self.page
        for t in range(2, depth + 1):
            previous = self.page
            self.step(FORWARD if t % 2 == 0 else BACK)
        return previous


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def folder_bytes(folder: Path) -> int:
    return sum(path.stat().st_size for path in folder.glob("*.jsonl"))


def one_branching_request(url: str, pid: int, log_dir: Path, depth: int, requests: int) -> dict[str, Any]:
    visitor = Visitor(url, "127.0.0.2")
    earlier = visitor.walk(goal=0, depth=depth)
    written: list[int] = []
    cpu: list[float] = []
    latency: list[float] = []
    statuses: Counter[int] = Counter()
    for _ in range(requests):
        size, used, began = folder_bytes(log_dir), cpu_seconds(pid), time.perf_counter()
        status, _ = visitor.post(earlier, {"action": FORWARD})
        latency.append(time.perf_counter() - began)
        time.sleep(0.05)  # the server's CPU clock ticks in 10 ms steps
        cpu.append(cpu_seconds(pid) - used)
        written.append(folder_bytes(log_dir) - size)
        statuses[status] += 1
    return {
        "bytes": statistics.mean(written),
        "cpu_ms": 1000 * statistics.mean(cpu),
        "latency_ms": 1000 * statistics.median(latency),
        "statuses": dict(statuses),
    }


def others_latency(url: str, others: int, seconds: float, first_address: int) -> tuple[list[float], int]:
    """Step latencies of ``others`` visitors stepping for ``seconds``; and the errors."""
    latencies: list[float] = []
    errors = [0]
    lock = threading.Lock()
    deadline = time.monotonic() + seconds

    def shop(index: int) -> None:
        visitor = Visitor(url, f"127.0.0.{first_address + index}")
        mine: list[float] = []
        try:
            while time.monotonic() < deadline:
                visitor.start(goal=10 + index)
                for t in range(80):
                    if time.monotonic() >= deadline:
                        break
                    began = time.perf_counter()
                    visitor.step(FORWARD if t % 2 == 0 else BACK)
                    mine.append(time.perf_counter() - began)
        except (OSError, RuntimeError):
            with lock:
                errors[0] += 1
        with lock:
            latencies.extend(mine)

    threads = [threading.Thread(target=shop, args=(i,)) for i in range(others)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return latencies, errors[0]


def under_branchers(
    url: str, branchers: int, depth: int, others: int, seconds: float, load_pages: bool = False
) -> tuple[list[float], int, Counter[int]]:
    """The others' step latencies while ``branchers`` clients branch (or, with ``load_pages``,
    load a page) as fast as they can; the others' errors; the flood's answers by status."""
    ready = []
    for index in range(branchers):  # the deep sessions first, outside the measured time
        visitor = Visitor(url, f"127.0.{2 if load_pages else 1}.{index + 1}")
        ready.append((visitor, visitor.walk(goal=20 + index, depth=depth)))
    statuses: Counter[int] = Counter()
    lock = threading.Lock()
    stop = threading.Event()

    def branch(visitor: Visitor, earlier: str) -> None:
        mine: Counter[int] = Counter()
        while not stop.is_set():
            try:
                if load_pages:
                    status = visitor.get(earlier)
                else:
                    status, _ = visitor.post(earlier, {"action": FORWARD})
            except OSError:
                status = 0
            mine[status] += 1
        with lock:
            statuses.update(mine)

    threads = [threading.Thread(target=branch, args=pair) for pair in ready]
    for thread in threads:
        thread.start()
    try:
        latencies, errors = others_latency(url, others, seconds, first_address=100)
    finally:
        stop.set()
        for thread in threads:
            thread.join()
    return latencies, errors, statuses


def measure(
    depth: int, requests: int, branchers: int, others: int, seconds: float, threads: int
) -> dict[str, Any]:
    """Both parts of the module docstring against a server of its own: one branching request
    (`one_branching_request`), then the others' step seconds and errors in each phase, the
    branching clients' answers by HTTP status and the log folder's bytes at the end."""
    with tempfile.TemporaryDirectory(prefix="webshop-replay-cost-") as folder:
        log_dir = Path(folder) / "logs"
        log_dir.mkdir()
        serve = ["--catalog", "mini", "--split", "test", "--threads", str(threads)]
        server, url = launch_server(
            [*serve, "--log-dir", str(log_dir), "--no-access-log"],
            Path(folder) / "server.log",
            lambda port: Visitor(f"http://127.0.0.1:{port}", "127.0.0.1").get("/healthz") == 200,
            timeout_s=120,
        )
        try:
            one = one_branching_request(url, server.pid, log_dir, depth, requests)
            alone, alone_errors = others_latency(url, others, seconds, first_address=200)
            loaded, loaded_errors, _ = under_branchers(
                url, branchers, depth, others, seconds, load_pages=True
            )
            crowded, crowded_errors, statuses = under_branchers(url, branchers, depth, others, seconds)
            log_total = folder_bytes(log_dir)
        finally:
            server.terminate()
            server.wait(timeout=30)
    return {
        "depth": depth,
        "branchers": branchers,
        "others": others,
        "seconds": seconds,
        "threads": threads,
        "one": one,
        "phases": {
            "alone": {"step_s": alone, "errors": alone_errors},
            "loading pages": {"step_s": loaded, "errors": loaded_errors},
            "branching": {"step_s": crowded, "errors": crowded_errors},
        },
        "branching_statuses": dict(statuses),
        "log_bytes": log_total,
    }


def report(figures: dict[str, Any]) -> list[str]:
    """`measure`'s figures as printed under the machine line: two tables and the flood's answers."""
    one, branchers, phases = figures["one"], figures["branchers"], figures["phases"]
    depth = figures["depth"]
    answers = ", ".join(f"{k}: {v}" for k, v in sorted(one["statuses"].items()))
    lines = ["", f"## One request to page {depth - 1} of a session {depth} actions deep", ""]
    lines += table(
        ["bytes written", "server CPU", "latency (median)", "answers"],
        [[f"{one['bytes']:,.0f}", f"{one['cpu_ms']:.1f} ms", f"{one['latency_ms']:.1f} ms", answers]],
        numeric=[True, True, True, False],
    )
    lines += [
        "",
        f"## {figures['others']} visitors' steps: alone, under {branchers} clients loading pages, "
        f"under {branchers} branching clients",
        "",
    ]
    rows = []
    for name, phase in (
        ("alone", phases["alone"]),
        (f"{branchers} clients loading pages", phases["loading pages"]),
        (f"{branchers} branching clients", phases["branching"]),
    ):
        values, errors = phase["step_s"], phase["errors"]
        if values:
            median, p90 = 1000 * statistics.median(values), 1000 * percentile(values, 90)
            rows.append([name, len(values), f"{median:.1f} ms", f"{p90:.1f} ms", errors])
        else:
            rows.append([name, 0, "-", "-", errors])
    lines += table(["phase", "steps", "median", "p90", "errors"], rows, numeric=[False] + [True] * 4)
    statuses = sorted(figures["branching_statuses"].items())
    answered = ", ".join(f"{status}: {count}" for status, count in statuses)
    return [
        *lines,
        "",
        f"branching requests in {figures['seconds']:.0f} s ({branchers} clients): {answered}",
        f"log folder at the end: {figures['log_bytes'] / 1e6:.1f} MB",
    ]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--depth", type=int, default=99, help="actions before going back (server allows 100)")
    parser.add_argument("--requests", type=int, default=20, help="branching requests measured one by one")
    parser.add_argument("--branchers", type=int, default=8)
    parser.add_argument("--others", type=int, default=4)
    parser.add_argument("--seconds", type=float, default=10.0, help="length of each latency phase")
    parser.add_argument("--threads", type=int, default=8, help="server worker threads")
    args = parser.parse_args(argv)
    figures = measure(args.depth, args.requests, args.branchers, args.others, args.seconds, args.threads)
    print(f"machine: {describe_machine()}; server: {args.threads} threads, default limits, log folder on")
    print("\n".join(report(figures)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
