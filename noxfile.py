"""One session per job. `python3 -m pip install nox && python3 -m nox -s <session>`.

Every install goes through constraints.txt so that torch stays at the CPU wheel 2.13.0.
Sessions forward their positional arguments (`nox -s tests -- -k reward`).
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import nox

ROOT = Path(__file__).parent
CONSTRAINTS = ("-c", str(ROOT / "constraints.txt"))
WEBSHOP_GYM = "packages/webshop-gym"
SHARED_PROMPTS = "packages/shared-prompts"

nox.options.default_venv_backend = "venv"
nox.options.reuse_existing_virtualenvs = True
nox.options.sessions = ["lint", "tests"]


def install(session: nox.Session, *args: str) -> None:
    session.install(*CONSTRAINTS, *args)


def ensure_debian_packages(session: nox.Session, *packages: str) -> None:
    """Installs Debian packages that are missing (CI machines are fresh; we are root there)."""
    missing = [
        name for name in packages if subprocess.run(["dpkg", "-s", name], capture_output=True).returncode != 0
    ]
    if not missing:
        return
    if shutil.which("apt-get") is None:
        session.error(f"install {' '.join(missing)} with your system's package manager, then re-run")
    session.log(f"installing Debian packages: {' '.join(missing)}")
    env = {"DEBIAN_FRONTEND": "noninteractive"}
    session.run("apt-get", "update", "-qq", external=True, env=env)
    session.run(
        "apt-get", "install", "-y", "-qq", "--no-install-recommends", *missing, external=True, env=env
    )


@nox.session(python="3.11")
def tests(session: nox.Session) -> None:
    """Runs every package's test suite."""
    install(session, "-e", f"{WEBSHOP_GYM}[rank-bm25]", "pytest>=8", "hypothesis>=6", "thefuzz>=0.22")
    install(session, "-e", SHARED_PROMPTS)
    test_paths = [
        f"{package}/{part}" for package in (WEBSHOP_GYM, SHARED_PROMPTS) for part in ("src", "tests")
    ]
    session.run("pytest", "--doctest-modules", *test_paths, *session.posargs)


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
