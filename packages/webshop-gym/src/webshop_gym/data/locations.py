"""Where catalogues live: the bundled one, the real data's named settings, or a path.

The data folder (`data_dir`: ``$WEBSHOP_GYM_DATA``, else the user cache folder that
`platformdirs` names: ``~/.cache/webshop-gym`` on Linux, ``~/Library/Caches/webshop-gym`` on
macOS, ``%LOCALAPPDATA%\\webshop-gym\\Cache`` on Windows) holds::

    raw/             the official files as downloaded (`webshop-gym data download`)
    webshop-1k/      the prepared 1,000-product store (`webshop-gym data prepare`)
    webshop-full/    the prepared 1,181,436-product store
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import platformdirs

DATA_DIR_ENV = "WEBSHOP_GYM_DATA"
RAW_DIR_NAME = "raw"


@dataclass(frozen=True)
class OfficialSet:
    """One official setting: which raw files make it and where its prepared store goes."""

    store: str  # folder name of the prepared store under data_dir()
    products: str
    attributes: str
    human: str  # the official set-up uses the full human-instruction file for every setting
    # The entries of `human` for this setting's products only, as some copies ship them
    # (e.g. items_human_ins_1000.json): the same goals for this setting, so it stands in.
    human_subset: str | None = None

    def human_file(self, folder: Path) -> Path | None:
        """The human-instruction file in ``folder``: the full one, else the subset, else None."""
        for name in (self.human, self.human_subset):
            if name is not None and (folder / name).is_file():
                return folder / name
        return None


OFFICIAL_SETS: dict[str, OfficialSet] = {
    "1k": OfficialSet(
        "webshop-1k",
        "items_shuffle_1000.json",
        "items_ins_v2_1000.json",
        "items_human_ins.json",
        human_subset="items_human_ins_1000.json",
    ),
    "full": OfficialSet("webshop-full", "items_shuffle.json", "items_ins_v2.json", "items_human_ins.json"),
}


def data_dir() -> Path:
    """The folder that holds downloaded real data (``$WEBSHOP_GYM_DATA``, else the user cache folder)."""
    configured = os.environ.get(DATA_DIR_ENV)
    if configured:
        return Path(configured).expanduser()
    return Path(platformdirs.user_cache_dir("webshop-gym", appauthor=False))


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
        what = "is a file, not a folder" if folder.exists() else "does not exist"
        raise FileNotFoundError(
            f"catalog={str(catalog)!r}: {folder} {what}. Pass a folder that holds the official WebShop "
            f"files (items_shuffle*.json, items_ins_v2*.json and, for human goals, items_human_ins*.json), "
            f"or a store made from such a folder by `webshop-gym data prepare --from FOLDER --out {folder}`. "
            f"For the official sets run `webshop-gym data download --set 1k` (or full) and `webshop-gym "
            f"data prepare --set 1k`, then pass catalog='1k' (or 'full'); the bundled catalogue needs "
            f"nothing: catalog='mini'."
        )
    return folder
