"""Where catalogues live: the bundled one, the real data's named settings, or a path.

The data folder (`data_dir`, ``$WEBSHOP_GYM_DATA`` or ``~/.cache/webshop-gym``) holds::

    raw/             the official files as downloaded (`webshop-gym data download`)
    webshop-1k/      the prepared 1,000-product store (`webshop-gym data prepare`)
    webshop-full/    the prepared 1,181,436-product store
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

DATA_DIR_ENV = "WEBSHOP_GYM_DATA"
RAW_DIR_NAME = "raw"


@dataclass(frozen=True)
class OfficialSet:
    """One official setting: which raw files make it and where its prepared store goes."""

    store: str  # folder name of the prepared store under data_dir()
    products: str
    attributes: str
    human: str  # the official set-up uses the full human-instruction file for every setting


OFFICIAL_SETS: dict[str, OfficialSet] = {
    "1k": OfficialSet(
        "webshop-1k", "items_shuffle_1000.json", "items_ins_v2_1000.json", "items_human_ins.json"
    ),
    "full": OfficialSet("webshop-full", "items_shuffle.json", "items_ins_v2.json", "items_human_ins.json"),
}


def data_dir() -> Path:
    """The folder that holds downloaded real data (``$WEBSHOP_GYM_DATA`` or ~/.cache/webshop-gym)."""
    configured = os.environ.get(DATA_DIR_ENV)
    return Path(configured).expanduser() if configured else Path.home() / ".cache" / "webshop-gym"


def raw_dir() -> Path:
    """Where `webshop-gym data download` puts the official files."""
    return data_dir() / RAW_DIR_NAME


def store_dir(name: str) -> Path:
    """Where the prepared store of an official setting (``"1k"`` or ``"full"``) goes."""
    return data_dir() / OFFICIAL_SETS[name].store


def resolve_catalog(catalog: str | os.PathLike[str]) -> str | Path:
    """``"mini"`` stays a name; ``"1k"`` / ``"full"`` and paths become an existing folder.

    ``"1k"`` and ``"full"`` name the prepared stores in `data_dir` (a folder there with the
    official raw files works too); a path may be a prepared store or a folder with the
    official files.

    Raises:
        FileNotFoundError: the real data is not there; the message says how to get it.
    """
    if isinstance(catalog, str) and catalog == "mini":
        return "mini"
    if isinstance(catalog, str) and catalog in OFFICIAL_SETS:
        folder = store_dir(catalog)
        if folder.is_dir():
            return folder
        official = OFFICIAL_SETS[catalog]
        raw = raw_dir()
        if (raw / official.products).is_file() and (raw / official.attributes).is_file():
            raise FileNotFoundError(
                f"catalog={catalog!r} reads the prepared store {folder}, which does not exist yet; the "
                f"official files (items_shuffle*.json, ...) are in {raw}: run `webshop-gym data prepare "
                f"--set {catalog}` (once) to build it."
            )
        raise FileNotFoundError(
            f"catalog={catalog!r} reads the prepared store {folder}, which does not exist. Get the official "
            f"WebShop files (items_shuffle*.json, items_ins_v2*.json, items_human_ins.json; Yao et al. 2022) "
            f"with `webshop-gym data download --set {catalog}` and build the store with `webshop-gym data "
            f"prepare --set {catalog}` (set ${DATA_DIR_ENV} to use another folder than {data_dir()}), or "
            f"pass catalog='path/to/folder' with the official files (e.g. the 1,000-product set), or use the "
            f"bundled catalogue: gymnasium.make('WebShop-Mini-Text-v0')."
        )
    folder = Path(catalog).expanduser()
    if not folder.is_dir():
        raise FileNotFoundError(
            f"catalog={str(catalog)!r} is not a folder with the official WebShop files or a prepared store, "
            f"which does not exist. Put items_shuffle*.json, items_ins_v2*.json and (for human goals) "
            f"items_human_ins*.json there, or pass catalog='1k' / 'full' after `webshop-gym data download` "
            f"and `webshop-gym data prepare`, or use the bundled catalogue: "
            f"gymnasium.make('WebShop-Mini-Text-v0')."
        )
    return folder
