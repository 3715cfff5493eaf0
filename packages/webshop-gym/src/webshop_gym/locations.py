"""Where catalogues live: the bundled one, the real data's named settings, or a path."""

from __future__ import annotations

import os
from pathlib import Path

DATA_DIR_ENV = "WEBSHOP_GYM_DATA"
NAMED_REAL_CATALOGUES = {"1k": "webshop-1k", "full": "webshop-full"}


def data_dir() -> Path:
    """The folder that holds downloaded real data (``$WEBSHOP_GYM_DATA`` or ~/.cache/webshop-gym)."""
    configured = os.environ.get(DATA_DIR_ENV)
    return Path(configured).expanduser() if configured else Path.home() / ".cache" / "webshop-gym"


def resolve_catalog(catalog: str | os.PathLike[str]) -> str | Path:
    """``"mini"`` stays a name; ``"1k"`` / ``"full"`` and paths become an existing folder.

    Raises:
        FileNotFoundError: the real data is not there; the message says how to get it.
    """
    if isinstance(catalog, str) and catalog == "mini":
        return "mini"
    if isinstance(catalog, str) and catalog in NAMED_REAL_CATALOGUES:
        folder = data_dir() / NAMED_REAL_CATALOGUES[catalog]
        hint = f"catalog={catalog!r} reads the official WebShop files from {folder}"
    else:
        folder = Path(catalog).expanduser()
        hint = f"catalog={str(catalog)!r} is not a folder with the official WebShop files"
    if not folder.is_dir():
        raise FileNotFoundError(
            f"{hint}, which does not exist. Put items_shuffle*.json, items_ins_v2*.json and "
            f"(for human goals) items_human_ins*.json there (the official download of Yao et al. "
            f"2022; set ${DATA_DIR_ENV} to use another folder), or pass catalog='path/to/folder' "
            f"(e.g. the 1,000-product set), or use the bundled catalogue: "
            f"gymnasium.make('WebShop-Mini-Text-v0')."
        )
    return folder
