"""Where catalogues live: the bundled one, the real data's named settings, or a path.

The data folder (`data_dir`: ``$WEBSHOP_GYM_DATA``, else the user cache folder that
`platformdirs` names: ``~/.cache/webshop-gym`` on Linux, ``~/Library/Caches/webshop-gym`` on
macOS, ``%LOCALAPPDATA%\\webshop-gym\\Cache`` on Windows) holds::

    raw/             the official files as downloaded (`webshop-gym data download`)
    webshop-1k/      the prepared 1,000-product store (`webshop-gym data prepare`)
    webshop-full/    the prepared 1,181,436-product store

`find_webshop_1k` is the one place that finds the official 1,000-product files (and, with
``references=True``, the files made by running the original WebShop code over them) for the
tests and benchmarks: ``$WEBSHOP_1K_DIR``, else ``raw/`` above, else ``../shared/webshop-1k``
beside a source checkout.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import platformdirs

DATA_DIR_ENV = "WEBSHOP_GYM_DATA"
RAW_DIR_NAME = "raw"
WEBSHOP_1K_DIR_ENV = "WEBSHOP_1K_DIR"
# What the original WebShop code made of the 1k set (its loader's products, its Lucene documents
# and BM25 hits, its ordered human goals): fidelity oracles that no download command fetches.
WEBSHOP_1K_REFERENCE_FILES = (
    "human_goals.json",
    "reference_bm25_hits_1000.jsonl",
    "reference_loaded_products_1000.json",
    "reference_lucene_documents_1000.jsonl",
)


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


def webshop_1k_places(checkout: str | os.PathLike[str] | None = None) -> list[Path]:
    """Where `find_webshop_1k` looks, in order.

    Args:
        checkout: A source checkout (the repository root): ``../shared/webshop-1k`` beside it
            is the last place. None: not looked at.

    Returns:
        Only ``$WEBSHOP_1K_DIR`` when it is set (a folder named on purpose is the one meant);
        else `raw_dir` (where ``webshop-gym data download --set 1k`` puts the files) and the
        folder beside ``checkout``.
    """
    configured = os.environ.get(WEBSHOP_1K_DIR_ENV)
    if configured:
        return [Path(configured).expanduser()]
    places = [raw_dir()]
    if checkout is not None:
        places.append(Path(checkout).resolve().parent / "shared" / "webshop-1k")
    return places


def holds_webshop_1k(folder: Path, *, references: bool = False) -> bool:
    """Whether ``folder`` is the 1k set as one catalogue folder (its products, attributes and one
    human-instruction file, and no other set's files), with the reference files if asked."""
    official = OFFICIAL_SETS["1k"]
    one_of_each = all(
        len(list(folder.glob(pattern))) == 1
        for pattern in ("items_shuffle*.json", "items_ins_v2*.json", "items_human_ins*.json")
    )
    return (
        one_of_each
        and (folder / official.products).is_file()
        and (folder / official.attributes).is_file()
        and official.human_file(folder) is not None
        and (not references or all((folder / name).is_file() for name in WEBSHOP_1K_REFERENCE_FILES))
    )


def find_webshop_1k(checkout: str | os.PathLike[str] | None = None, *, references: bool = False) -> Path:
    """The folder with the official 1,000-product files, as `webshop_1k_places` orders them.

    Args:
        checkout: A source checkout, whose neighbour ``../shared/webshop-1k`` is looked at last.
        references: Also require `WEBSHOP_1K_REFERENCE_FILES` in the folder.

    Raises:
        FileNotFoundError: No such folder; the message says where it looked and how to get the
            files.
    """
    places = webshop_1k_places(checkout)
    for folder in places:
        if holds_webshop_1k(folder, references=references):
            return folder
    looked = ", ".join(str(place) for place in places)
    if references and any(holds_webshop_1k(place) for place in places):
        raise FileNotFoundError(
            f"the WebShop 1k reference files ({', '.join(WEBSHOP_1K_REFERENCE_FILES)}) are not in {looked}. "
            "They are what the original WebShop code (github.com/princeton-nlp/WebShop) makes of the 1k "
            "set, and no command downloads them: put them beside the 1k files, in the folder "
            f"${WEBSHOP_1K_DIR_ENV} names."
        )
    official = OFFICIAL_SETS["1k"]
    wanted = (
        f"{official.products}, {official.attributes} and {official.human} or its 1k part "
        f"{official.human_subset}, with no other set's files"
    )
    if os.environ.get(WEBSHOP_1K_DIR_ENV):
        how = (
            f"Get it there with `webshop-gym data download --set 1k --dest {looked}` (--source DIR copies "
            f"it from a folder), or unset {WEBSHOP_1K_DIR_ENV} to look in the data cache"
        )
    else:
        mixed = len(list(raw_dir().glob("items_shuffle*.json"))) > 1
        how = (
            (
                f"{raw_dir()} holds another set's files too: download the 1k set alone with `webshop-gym "
                f"data download --set 1k --dest DIR` and set {WEBSHOP_1K_DIR_ENV}=DIR"
            )
            if mixed
            else (
                f"Get it with `webshop-gym data download --set 1k` (into {raw_dir()}; --source DIR copies "
                f"it from a folder), or set {WEBSHOP_1K_DIR_ENV} to a folder that holds it"
            )
        )
    also = " (and the reference files)" if references else ""
    raise FileNotFoundError(f"the WebShop 1k data ({wanted}){also} is not in {looked}. {how}.")
