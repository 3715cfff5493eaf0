"""Moved to `apo_agent.model.pretrained`; this module keeps the old import path."""

from __future__ import annotations

from apo_agent.model.pretrained import (
    GGUF_FILE,
    INSTALL_COMMAND,
    MARKER,
    SMOLLM2,
    WHEEL,
    ModelNotInstalledError,
    default_folder,
    main,
    materialise_smollm2,
    resolve_model,
    smollm2_gguf,
)

__all__ = [
    "GGUF_FILE",
    "INSTALL_COMMAND",
    "MARKER",
    "SMOLLM2",
    "WHEEL",
    "ModelNotInstalledError",
    "default_folder",
    "main",
    "materialise_smollm2",
    "resolve_model",
    "smollm2_gguf",
]


if __name__ == "__main__":
    main()
