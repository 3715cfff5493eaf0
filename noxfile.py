"""One session per job. `python3 -m pip install nox && python3 -m nox -s <session>`.

Every install goes through constraints.txt so that torch stays at the CPU wheel 2.13.0.
Sessions forward their positional arguments (`nox -s tests -- -k reward`).
"""

from __future__ import annotations

from pathlib import Path

import nox

ROOT = Path(__file__).parent
CONSTRAINTS = ("-c", str(ROOT / "constraints.txt"))
WEBSHOP_GYM = "packages/webshop-gym"

nox.options.default_venv_backend = "venv"
nox.options.reuse_existing_virtualenvs = True
nox.options.sessions = ["lint", "tests"]


def install(session: nox.Session, *args: str) -> None:
    session.install(*CONSTRAINTS, *args)


@nox.session(python="3.11")
def tests(session: nox.Session) -> None:
    """Runs every package's test suite."""
    install(session, "-e", f"{WEBSHOP_GYM}[rank-bm25]", "pytest>=8", "hypothesis>=6", "thefuzz>=0.22")
    session.run("pytest", "--doctest-modules", f"{WEBSHOP_GYM}/src", f"{WEBSHOP_GYM}/tests", *session.posargs)


@nox.session(python="3.11")
def lint(session: nox.Session) -> None:
    """Ruff: lint and formatting check."""
    install(session, "ruff>=0.6")
    session.run("ruff", "check", ".")
    session.run("ruff", "format", "--check", ".")


@nox.session(python="3.11")
def demo(session: nox.Session) -> None:
    """Plays one episode on the bundled catalogue, then scores the rule and expert policies."""
    install(session, "-e", WEBSHOP_GYM)
    session.run("python", "-m", "webshop_gym.demo", *session.posargs)


@nox.session(python="3.11")
def bench(session: nox.Session) -> None:
    """Env performance: creation time and step latency on the mini and the real 1k catalogue."""
    install(session, "-e", WEBSHOP_GYM)
    session.run("python", "benchmarks/env_speed.py", *session.posargs)
