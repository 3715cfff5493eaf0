"""The ``webshop-gym data`` subcommands: download, prepare, status, verify, generate.

Each is a pair, ``add_<name>_command`` (its parser) and ``run_<name>`` (what it does), listed
in `webshop_gym.cli.COMMANDS` under the ``data`` group; each imports its part of
`webshop_gym.data` when it runs.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

__all__ = [
    "add_download_command",
    "add_generate_command",
    "add_prepare_command",
    "add_status_command",
    "add_verify_command",
    "run_download",
    "run_generate",
    "run_prepare",
    "run_status",
    "run_verify",
]

_SETS = ("1k", "full", "all")


def _sets(choice: str) -> list[str]:
    return ["1k", "full"] if choice == "all" else [choice]


# --- data download -------------------------------------------------------------------------


def add_download_command(subparsers: argparse._SubParsersAction) -> argparse.ArgumentParser:
    from webshop_gym.data.locations import raw_dir

    parser = subparsers.add_parser(
        "download",
        help="fetch the official WebShop files (resumable, verified)",
        description=(
            "Fetch the official WebShop data files (Yao et al. 2022) from Google Drive, or from --source: a "
            "folder, a mirror URL, or a dataset on the Hugging Face Hub (hf:ORG/DATASET, through "
            "huggingface_hub; HF_ENDPOINT and HF_TOKEN apply). Interrupted transfers resume; files are "
            "checked against their known sizes and checksums (and, from the Hub, against the checksums the "
            "Hub states)."
        ),
    )
    parser.add_argument("--set", choices=_SETS, default="all", help="which setting's files (default: all)")
    parser.add_argument("--dest", type=Path, default=None, help=f"where the files go (default: {raw_dir()})")
    parser.add_argument(
        "--source",
        default=None,
        help="a folder that holds the files, a mirror URL (fetches URL/<file>), or "
        "hf:ORG/DATASET[@REVISION], a Hugging Face Hub dataset with the files at its top level "
        '(pip install "webshop-gym[hf]")',
    )
    parser.add_argument("--retries", type=int, default=5, help="resumptions of a broken transfer (default 5)")
    parser.add_argument(
        "--no-verify",
        action="store_true",
        help="accept files whose size or checksum differ from the official ones (e.g. a rebuilt copy)",
    )
    parser.add_argument("--quiet", action="store_true", help="no progress bars")
    return parser


def run_download(args: argparse.Namespace) -> int:
    from webshop_gym.data.download import OFFICIAL_FILES, STAND_INS, download_file, files_of
    from webshop_gym.data.locations import raw_dir

    dest = args.dest or raw_dir()
    sets = _sets(args.set)
    remote = args.source is None or "://" in args.source or args.source.startswith("hf:")
    folder = None if remote else Path(args.source).expanduser()
    for name in files_of(sets):
        spec = OFFICIAL_FILES[name]
        stand_in = STAND_INS.get(name)
        if (
            folder is not None
            and sets == ["1k"]  # the full set needs the full file
            and stand_in is not None
            and not (folder / name).is_file()
            and (folder / stand_in.name).is_file()
        ):
            print(f"note: {folder} has no {name}; {stand_in.name} ({stand_in.description}) stands in")
            spec = stand_in
        path = download_file(
            spec,
            dest,
            source=args.source,
            retries=args.retries,
            verify=not args.no_verify,
            progress=not args.quiet,
            log=print,
        )
        print(f"ok: {path}")
    print("next: `webshop-gym data prepare` builds the stores the envs open")
    return 0


# --- data prepare ---------------------------------------------------------------------------


def add_prepare_command(subparsers: argparse._SubParsersAction) -> argparse.ArgumentParser:
    from webshop_gym.data.locations import data_dir, raw_dir

    parser = subparsers.add_parser(
        "prepare",
        help="turn the official files into stores that envs open in milliseconds",
        description=(
            "Stream the official JSON files into compact on-disk stores (products, prices, goals, BM25 "
            "index). Idempotent (unchanged inputs: nothing to do) and atomic (an interrupted run leaves "
            "no half-written store)."
        ),
    )
    parser.add_argument(
        "--set",
        choices=_SETS,
        default=None,
        help="which official setting (default: those whose files are there)",
    )
    parser.add_argument("--raw", type=Path, default=None, help=f"the downloaded files (default: {raw_dir()})")
    parser.add_argument(
        "--from",
        dest="source",
        type=Path,
        default=None,
        help="instead: a folder with one catalogue's files (items_shuffle*.json, items_ins_v2*.json, ...)",
    )
    parser.add_argument(
        "--out", type=Path, default=None, help=f"the store for --from (default: {data_dir()}/<folder name>)"
    )
    parser.add_argument(
        "--name", default=None, help="the catalogue's name (default: the store folder's name)"
    )
    parser.add_argument("--force", action="store_true", help="rebuild even if the store is up to date")
    parser.add_argument("--quiet", action="store_true", help="no progress bars")
    return parser


def run_prepare(args: argparse.Namespace) -> int:
    from webshop_gym.data.locations import OFFICIAL_SETS, data_dir, raw_dir, store_dir
    from webshop_gym.data.prepare import PrepareInputs, find_inputs, prepare_catalog

    jobs: list[tuple[PrepareInputs, Path]] = []
    if args.source is not None:
        if args.set is not None or args.raw is not None:
            raise ValueError("--from prepares one folder; leave out --set and --raw")
        inputs = find_inputs(args.source)
        jobs.append((inputs, args.out or data_dir() / Path(args.source).resolve().name))
    else:
        raw = args.raw or raw_dir()
        wanted = (
            _sets(args.set)
            if args.set
            else [s for s in OFFICIAL_SETS if (raw / OFFICIAL_SETS[s].products).is_file()]
        )
        if not wanted:
            raise FileNotFoundError(
                f"no official product file (items_shuffle*.json) in {raw}; run `webshop-gym data download` "
                "first, or pass --from FOLDER"
            )
        for name in wanted:
            official = OFFICIAL_SETS[name]
            human = official.human_file(raw)
            if human is None:
                print(f"note: {raw / official.human} is missing; the {name} store gets no human goals")
            inputs = PrepareInputs(raw / official.products, raw / official.attributes, human)
            jobs.append((inputs, args.out if args.out and len(wanted) == 1 else store_dir(name)))
    for inputs, _ in jobs:
        for _role, path in inputs.files():
            if path.is_file() and path.stat().st_size == 0:
                raise ValueError(
                    f"{path} is empty (0 bytes): an interrupted download or copy? Fetch it again "
                    "(`webshop-gym data download`, or copy it anew)"
                )
    for inputs, out in jobs:
        try:
            result = prepare_catalog(
                inputs, out, name=args.name, force=args.force, progress=not args.quiet, log=print
            )
        except OSError as error:  # e.g. a full disk: one line, not a traceback
            if isinstance(error, FileNotFoundError):
                raise
            message = error.strerror if error.filename is None and error.strerror else error
            print(f"webshop-gym: error: {message}", file=sys.stderr)
            return 1
        print(
            f"ok: {result.directory} ({result.products:,} products{', unchanged' if result.skipped else ''})"
        )
    return 0


# --- data status ----------------------------------------------------------------------------


def add_status_command(subparsers: argparse._SubParsersAction) -> argparse.ArgumentParser:
    return subparsers.add_parser("status", help="show the data folder: downloaded files and prepared stores")


def run_status(args: argparse.Namespace) -> int:
    from webshop_gym.data.download import OFFICIAL_FILES, STAND_INS
    from webshop_gym.data.locations import OFFICIAL_SETS, data_dir, raw_dir, store_dir
    from webshop_gym.data.prepare import leftovers
    from webshop_gym.data.store import StoreError, read_manifest

    print(f"data folder: {data_dir()} (set $WEBSHOP_GYM_DATA to move it)")
    for name, spec in OFFICIAL_FILES.items():
        path = raw_dir() / name
        if path.is_file():
            size = path.stat().st_size
            note = "" if spec.size is None or spec.size == size else f"  (expected {spec.size:,} bytes)"
            print(f"  raw/{name}: {size:,} bytes{note}")
        elif (raw_dir() / f"{name}.part").is_file():
            print(f"  raw/{name}: partial download (the next `webshop-gym data download` resumes it)")
        elif name in STAND_INS and (raw_dir() / STAND_INS[name].name).is_file():
            print(f"  raw/{name}: missing; raw/{STAND_INS[name].name} stands in for the 1k set")
        else:
            print(f"  raw/{name}: missing")
    for name in OFFICIAL_SETS:
        folder = store_dir(name)
        for stale in leftovers(folder):
            print(
                f"  {stale.name}: left by an interrupted prepare; "
                "the next `webshop-gym data prepare` clears it"
            )
        try:
            manifest = read_manifest(folder)
        except StoreError as error:
            print(f"  {folder.name}/: {'missing' if not folder.exists() else error}")
            continue
        checksums = (
            "" if "sha256" in manifest else f"; no checksums: `webshop-gym data prepare --set {name} --force`"
        )
        print(
            f"  {folder.name}/: {manifest['products']:,} products, {manifest['human_goals']:,} human and "
            f"{manifest['synthetic_goals']:,} synthetic goals (prepared {manifest['created']}{checksums})"
        )
    return 0


# --- data verify ----------------------------------------------------------------------------


def add_verify_command(subparsers: argparse._SubParsersAction) -> argparse.ArgumentParser:
    parser = subparsers.add_parser(
        "verify",
        help="check prepared stores file by file against the checksums in their manifests",
        description=(
            "Check every file of prepared stores (sizes, counts, SHA-256) against their manifests. "
            "Exits 1 and names the damaged files if any differ."
        ),
    )
    parser.add_argument(
        "stores",
        nargs="*",
        type=Path,
        metavar="DIR",
        help="stores to check (default: those in the data folder)",
    )
    return parser


def run_verify(args: argparse.Namespace) -> int:
    from webshop_gym.data.locations import OFFICIAL_SETS, data_dir, store_dir
    from webshop_gym.data.store import StoreError, verify_store

    stores = args.stores or [store_dir(name) for name in OFFICIAL_SETS if store_dir(name).exists()]
    if not stores:
        raise FileNotFoundError(
            f"no prepared store in {data_dir()}; pass the store's folder (`webshop-gym data verify DIR`)"
        )
    failed = 0
    for folder in stores:
        try:
            verified = verify_store(folder)
        except StoreError as error:
            print(f"webshop-gym: error: {error}", file=sys.stderr)
            failed += 1
            continue
        print(
            f"ok: {verified.directory} ({verified.files} files, {verified.bytes / 1e6:,.1f} MB, "
            f"checked in {verified.seconds:.1f} s)"
        )
    return 1 if failed else 0


# --- data generate --------------------------------------------------------------------------


def add_generate_command(subparsers: argparse._SubParsersAction) -> argparse.ArgumentParser:
    from webshop_gym.data.synthetic import FULL_CATALOGUE_PRODUCTS

    parser = subparsers.add_parser(
        "generate",
        help="write a synthetic catalogue in the official format (for scale tests)",
        description="Write a synthetic catalogue shaped like the real data (webshop_gym.data.synthetic).",
    )
    parser.add_argument(
        "--products", type=int, default=FULL_CATALOGUE_PRODUCTS, help="how many (default: the real 1,181,436)"
    )
    parser.add_argument("--out", type=Path, required=True, help="output folder")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--force",
        action="store_true",
        help="overwrite catalogue files already in --out (e.g. an earlier run's)",
    )
    parser.add_argument("--quiet", action="store_true", help="no progress bar")
    return parser


_GENERATED = ("items_shuffle.json", "items_ins_v2.json", "items_human_ins.json")


def run_generate(args: argparse.Namespace) -> int:
    from webshop_gym.data.synthetic import write_catalog

    # The names are the official full set's: a raw folder would lose the real data to them.
    found = [name for name in _GENERATED if (args.out / name).exists()]
    if found and not args.force:
        raise ValueError(
            f"{args.out} already holds {', '.join(found)}; generating would overwrite them. Pass a new "
            "--out, or --force if they are an earlier generate's"
        )
    write_catalog(args.out, args.products, seed=args.seed, progress=not args.quiet)
    print(
        f"ok: {args.products:,} products in {args.out}; "
        f"`webshop-gym data prepare --from {args.out}` prepares them"
    )
    return 0
