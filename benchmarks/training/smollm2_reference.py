"""One warm-started SmolLM2 pi_ref for a comparison's training seeds to share.

    python -m benchmarks.training.smollm2_reference --folder runs/smollm2-compare/pi-ref --preset smollm2-cpu

The warm start is the most expensive part of a SmolLM2 run on CPU (about 1,000 CPU s for the
`smollm2-cpu` preset), so `benchmarks.training.apo_compare` runs start from this folder as it is
(``--set model=FOLDER --set sft_epochs=0``) and their seeds differ in Stage 1 and Stage 2 only.
Run again with the same settings, it reuses the folder; it prints the folder's path last.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from apo_agent.config import TrainConfig
from apo_agent.presets import PRESETS
from apo_agent.warm_start.reference import build_reference
from benchmarks.training.apo_compare.cli import parse_overrides


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--folder", type=Path, required=True, help="where pi_ref goes")
    parser.add_argument("--preset", default="smollm2-cpu", choices=sorted(PRESETS))
    parser.add_argument("--seed", type=int, default=0, help="the warm start's seed (default 0)")
    parser.add_argument("--set", action="append", default=[], metavar="FIELD=VALUE", help="config override")
    arguments = parser.parse_args(argv)
    try:
        overrides = parse_overrides(arguments.set)
    except ValueError as error:
        parser.error(str(error))
    if any(":" in name for name in overrides):
        parser.error("pi_ref is shared by both methods: --set takes FIELD=VALUE, without ALGORITHM:")
    config = TrainConfig.from_preset(
        arguments.preset,
        **overrides,
        seed=arguments.seed,
        output_dir=str(arguments.folder.with_name(arguments.folder.name + "-build")),
        reference_dir=str(arguments.folder),
    )
    print(build_reference(config), flush=True)


if __name__ == "__main__":
    main()
