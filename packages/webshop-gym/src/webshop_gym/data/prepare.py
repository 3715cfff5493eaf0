"""``webshop-gym data prepare``: the official JSON files -> a store an env opens in milliseconds.

One streaming pass over each file (`webshop_gym.data.jsonstream`; nothing holds the whole
product file), cleaning every product exactly as `webshop_gym.data.catalog.load_products` does,
writes the store of `webshop_gym.data.store`: product records, asin lookup, seeded prices, the
goals in the original's order, and the BM25 index that ranks as the original's Lucene
(`webshop_gym.search.bm25_index`).

- **Idempotent.** The store's manifest records each input's size, modification time and
  SHA-256 (hashed while it is read). Preparing again with the same inputs does nothing
  once every file of the store matches the checksum in its manifest (a damaged store, or
  one without checksums, is rebuilt); an input that was only touched (same size, new
  time) is hashed and still counts as the same.
- **Atomic.** Everything is written into a hidden sibling folder, flushed to disk
  (``fsync``), and swapped in with a rename once complete; the manifest, written last, is
  what makes a store loadable. An interrupted prepare leaves no store (or the previous
  one), never a half-written one. A lock file keeps two prepares of one store apart.
- **Nothing lost.** The store's folder is replaced whole, so prepare only replaces a folder
  that is missing, empty, or a store it made holding nothing but its own files; it refuses
  an ``out_dir`` that is, holds or lies inside the input folder. Folders left by an
  interrupted prepare are cleared by the next one (a previous store found waiting in its
  ``.old`` folder is put back). A full disk stops it with the previous store in place.
- **Clear failures.** A truncated or corrupt input gets an error naming the file, the
  record and what is wrong (`webshop_gym.data.jsonstream.StreamError`, `ValueError`).
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import json
import marshal
import os
import pickle
import random
import shutil
import time
from array import array
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from filelock import FileLock, Timeout

from webshop_gym import __version__
from webshop_gym.data.catalog import _PRODUCT_KEYS, _clean_product, _human_instructions, _require
from webshop_gym.data.goals import (
    SHUFFLE_SEED,
    paper_positions,
    product_price,
    synthetic_plan,
    synthetic_weight,
)
from webshop_gym.data.jsonstream import iter_array, iter_object
from webshop_gym.data.model import HumanInstruction, SyntheticInstruction
from webshop_gym.data.store import (
    INDEX_DIR,
    MANIFEST_NAME,
    RECORD_PROTOCOL,
    STORE_FORMAT,
    StoreError,
    encode_product,
    file_sha256,
    read_manifest,
    verify_store,
)
from webshop_gym.search.analysis import analyze
from webshop_gym.search.bm25_index import BM25_B, BM25_K1, IndexBuilder, is_current_index
from webshop_gym.search.documents import search_document

__all__ = ["PrepareError", "PrepareInputs", "PrepareResult", "find_inputs", "leftovers", "prepare_catalog"]


@dataclass(frozen=True)
class PrepareInputs:
    """The official files one store is made from."""

    products: Path  # items_shuffle*.json
    attributes: Path  # items_ins_v2*.json
    human: Path | None  # items_human_ins*.json (optional: no human goals without it)

    def files(self) -> list[tuple[str, Path]]:
        roles = [("products", self.products), ("attributes", self.attributes)]
        return roles + ([("human", self.human)] if self.human is not None else [])


@dataclass(frozen=True)
class PrepareResult:
    """What `prepare_catalog` did."""

    directory: Path
    skipped: bool  # the store was already up to date
    products: int
    seconds: float


def find_inputs(directory: str | os.PathLike[str]) -> PrepareInputs:
    """The official files in a folder (one ``items_shuffle*.json``, one ``items_ins_v2*.json``,
    at most one ``items_human_ins*.json``).

    Raises:
        FileNotFoundError: A required file is missing.
        ValueError: Several files match one pattern.
    """
    from webshop_gym.data.catalog import _find_file, _require_file

    folder = Path(directory).expanduser().resolve()
    if not folder.is_dir():
        raise FileNotFoundError(f"{folder} is not a folder with the official WebShop files")
    return PrepareInputs(
        products=_require_file(folder, "items_shuffle*.json"),
        attributes=_require_file(folder, "items_ins_v2*.json"),
        human=_find_file(folder, "items_human_ins*.json"),
    )


# --- idempotency ------------------------------------------------------------------------


def _is_up_to_date(out_dir: Path, inputs: PrepareInputs, name: str, say: Callable[[str], None]) -> bool:
    if not _inputs_unchanged(out_dir, inputs, name):
        return False
    # Same inputs: the store is only as good as its files; check every one before saying so.
    try:
        verify_store(out_dir)
    except StoreError as error:
        if "sha256" not in read_manifest(out_dir):
            say(f"{out_dir} has no checksums (prepared by an older webshop-gym); rebuilding it with them")
        else:
            say(f"rebuilding {out_dir}, which fails its check: {error}")
        return False
    return True


def _inputs_unchanged(out_dir: Path, inputs: PrepareInputs, name: str) -> bool:
    try:
        manifest = read_manifest(out_dir)
    except StoreError:
        return False
    recorded = {entry["role"]: entry for entry in manifest.get("inputs", [])}
    if manifest.get("name") != name or set(recorded) != {role for role, _ in inputs.files()}:
        return False
    if not is_current_index(out_dir / INDEX_DIR):  # an index of an older format: rebuild
        return False
    for role, path in inputs.files():
        entry, stat = recorded[role], path.stat()
        if entry["size"] != stat.st_size:
            return False
        # Same size and time: unchanged. Same size, new time (copied, touched): compare contents.
        if entry["mtime_ns"] != stat.st_mtime_ns and entry["sha256"] != file_sha256(path):
            return False
    return True


# --- reading the inputs -----------------------------------------------------------------


class _Reader:
    """Streams one input with a byte progress bar, hashing it on the way."""

    def __init__(self, path: Path, progress: bool) -> None:
        from tqdm.auto import tqdm

        self.path = path
        self.stat = path.stat()
        self.digest = hashlib.sha256()
        self.bar = tqdm(
            total=self.stat.st_size,
            desc=f"reading {path.name}",
            unit="B",
            unit_scale=True,
            unit_divisor=1024,
            disable=not progress,
        )

    def __call__(self, chunk: bytes) -> None:
        self.digest.update(chunk)
        self.bar.update(len(chunk))

    def record(self, role: str) -> dict[str, Any]:
        self.bar.close()
        return {
            "role": role,
            "file": self.path.name,
            "size": self.stat.st_size,
            "mtime_ns": self.stat.st_mtime_ns,
            "sha256": self.digest.hexdigest(),
        }


def _read_attributes(path: Path, reader: _Reader) -> dict[str, bytes]:
    """asin -> marshal of (product attributes or None, templated instruction or None)."""
    entries: dict[str, bytes] = {}
    for asin, entry in iter_object(path, reader):
        if not isinstance(entry, dict):
            raise ValueError(
                f"{path}: entry {asin!r} must be an object with 'attributes', got {type(entry).__name__}"
            )
        try:
            attributes = tuple(entry["attributes"]) if "attributes" in entry else None
            instruction = entry.get("instruction")
            synthetic = (
                (instruction, tuple(entry.get("instruction_attributes") or ()))
                if isinstance(instruction, str)
                else None
            )
        except TypeError:
            raise ValueError(f"{path}: entry {asin!r} has attributes that are not a list") from None
        # Kept as bytes: 1.18M small tuples of strings would take several times the memory.
        entries[asin] = marshal.dumps((attributes, synthetic))
    return entries


def _read_human(path: Path, reader: _Reader) -> dict[str, tuple[HumanInstruction, ...]]:
    human: dict[str, tuple[HumanInstruction, ...]] = {}
    for asin, entries in iter_object(path, reader):
        human[asin] = _human_instructions({asin: entries}, path)[asin]
    return human


# --- writing ------------------------------------------------------------------------------


def _fsync_tree(directory: Path) -> None:
    for root, _, files in os.walk(directory):
        for name in files:
            fd = os.open(os.path.join(root, name), os.O_RDONLY)
            try:
                os.fsync(fd)
            finally:
                os.close(fd)
        _fsync_dir(Path(root))


def _fsync_dir(directory: Path) -> None:
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


@contextlib.contextmanager
def _locked(out_dir: Path) -> Iterator[None]:
    # The OS's own lock (flock on POSIX, msvcrt on Windows): it goes with its process, so a
    # lock file left behind never blocks anyone. A held lock means a prepare is running now:
    # say so at once rather than wait for it without a word.
    lock = out_dir.parent / f".{out_dir.name}.lock"
    try:
        with FileLock(lock, timeout=0):
            yield
    except Timeout:
        raise PrepareError(
            f"another `webshop-gym data prepare` is writing {out_dir} (it holds {lock}); wait for it "
            "to finish, then run this one again"
        ) from None


def leftovers(out_dir: Path) -> list[Path]:
    """What interrupted prepares of ``out_dir`` left beside it (the next prepare clears them)."""
    return sorted(out_dir.parent.glob(f".{out_dir.name}.partial-*")) + sorted(
        out_dir.parent.glob(f".{out_dir.name}.old-*")
    )


def _clear_leftovers(out_dir: Path, say: Callable[[str], None]) -> None:
    """Removes the folders of interrupted prepares (the caller holds the lock, so none is running).

    A prepare stopped between the two renames of `_swap_in` left the previous store in its
    ``.old`` folder and none at ``out_dir``: that store is put back, not deleted.
    """
    for stale in leftovers(out_dir):
        if not stale.is_dir() or stale.is_symlink():
            continue
        if ".old-" in stale.name and not out_dir.exists() and _store_manifest(stale) is not None:
            os.rename(stale, out_dir)
            say(f"restored {out_dir} from {stale.name}, left by an interrupted prepare")
        else:
            shutil.rmtree(stale, ignore_errors=True)


# --- what --out may be ----------------------------------------------------------------------


class PrepareError(ValueError):
    """``prepare`` will not run as asked (the destination is not its own, or is busy)."""


def _within(path: Path, folder: Path) -> bool:
    return path == folder or folder in path.parents


def _store_manifest(directory: Path) -> dict[str, Any] | None:
    """The manifest of a folder that prepare made (complete or not), or None."""
    try:
        manifest = json.loads((directory / MANIFEST_NAME).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if isinstance(manifest, dict) and "format" in manifest and isinstance(manifest.get("files"), dict):
        return manifest
    return None


def _check_destination(out: Path, inputs: PrepareInputs) -> None:
    """Refuses an ``out`` whose replacement would lose anything prepare did not write.

    Preparing replaces the whole folder, so it must be missing, empty, or a store that
    prepare made holding only the files its manifest lists.
    """
    for _, path in inputs.files():
        source = path.resolve().parent
        if out == source:
            raise PrepareError(
                f"--out {out} is the same folder as the input files; preparing replaces the whole "
                "--out folder and would delete them: pass another --out (e.g. a sibling folder)"
            )
        if _within(out, source) or _within(source, out):
            inner, outer = (out, source) if _within(out, source) else (source, out)
            raise PrepareError(
                f"{inner} is inside {outer}: the store (--out {out}) and the input files ({source}) "
                "must be separate folders, since preparing replaces the whole --out folder; pass an --out "
                "beside the input folder"
            )
    if not out.exists() and not out.is_symlink():
        return
    if not out.is_dir():
        raise PrepareError(f"--out {out} is a file, not a folder; pass a folder that does not exist yet")
    if not any(out.iterdir()):
        return
    manifest = _store_manifest(out)
    if manifest is None:
        raise PrepareError(
            f"--out {out} holds files but is not a store that `webshop-gym data prepare` made (it has no "
            f"store {MANIFEST_NAME}); preparing replaces the whole folder, so it is left alone: pass an "
            "--out that does not exist yet"
        )
    known = {name.replace("\\", "/") for name in manifest["files"]} | {MANIFEST_NAME}  # Windows-made
    foreign = [
        str(path.relative_to(out))
        for path in sorted(out.rglob("*"))
        if (path.is_symlink() or not path.is_dir()) and path.relative_to(out).as_posix() not in known
    ]
    if foreign:
        shown = ", ".join(foreign[:5]) + (f" and {len(foreign) - 5} more" if len(foreign) > 5 else "")
        raise PrepareError(
            f"--out {out} is a store but also holds files that are not part of it ({shown}); preparing "
            "replaces the whole folder, so move them out first (or pass another --out)"
        )


def prepare_catalog(
    inputs: PrepareInputs,
    out_dir: str | os.PathLike[str],
    *,
    name: str | None = None,
    force: bool = False,
    progress: bool = True,
    log: Callable[[str], None] | None = None,
) -> PrepareResult:
    """Builds (or confirms) the store of one catalogue.

    Args:
        inputs: The official files (`find_inputs`).
        out_dir: The store's folder; replaced atomically when rebuilt.
        name: The catalogue's name (`Catalog.name`); defaults to ``out_dir``'s name.
        force: Rebuild even if the store is up to date.
        progress: Show progress bars.
        log: Where to say what happens (e.g. `print`); silent by default.

    Returns:
        What was done.

    Raises:
        FileNotFoundError: An input is missing.
        PrepareError: ``out_dir`` is not prepare's to replace (a folder of other files, the
            input folder, inside it or around it), or another prepare is writing it.
        ValueError: An input is truncated, corrupt or not in the official structure; the
            message names the file and the place.
        OSError: Writing failed (e.g. the disk is full); the previous store is kept.
    """
    start = time.perf_counter()
    out = Path(out_dir).expanduser().resolve()
    name = name or out.name
    say = log or (lambda message: None)
    for _, path in inputs.files():
        if not path.is_file():
            raise FileNotFoundError(
                f"{path}: no such file; `webshop-gym data download` fetches the official files"
            )
    _check_destination(out, inputs)  # before the lock: a refused --out gets not even a lock file
    out.parent.mkdir(parents=True, exist_ok=True)
    with _locked(out):
        _clear_leftovers(out, say)
        if not force and _is_up_to_date(out, inputs, name, say):
            say(f"{out} is up to date with its inputs; nothing to do (--force rebuilds it)")
            manifest = read_manifest(out)
            return PrepareResult(out, True, int(manifest["products"]), time.perf_counter() - start)
        partial = out.parent / f".{out.name}.partial-{os.getpid()}"
        try:
            partial.mkdir()
            manifest = _build(inputs, partial, name, progress, say)
            _fsync_tree(partial)
            _check_destination(out, inputs)  # again: files may have been put there meanwhile
            _swap_in(partial, out)
        except OSError as error:
            shutil.rmtree(partial, ignore_errors=True)
            if error.errno in (errno.ENOSPC, errno.EDQUOT):
                raise OSError(
                    error.errno,
                    f"no space left on the disk of {out.parent} while preparing {out} (writing "
                    f"{error.filename or 'the store'}); nothing was replaced, the previous store is kept: "
                    "free some space and run this again",
                ) from None
            raise
        except BaseException:
            shutil.rmtree(partial, ignore_errors=True)
            raise
    seconds = time.perf_counter() - start
    say(f"prepared {manifest['products']:,} products into {out} in {seconds:.0f} s")
    return PrepareResult(out, False, int(manifest["products"]), seconds)


def _swap_in(partial: Path, out: Path) -> None:
    """Replaces ``out`` by ``partial``; at no moment does ``out`` hold a partial store."""
    old = None
    if out.exists():
        old = out.parent / f".{out.name}.old-{os.getpid()}"
        os.rename(out, old)
    os.rename(partial, out)
    _fsync_dir(out.parent)
    if old is not None:
        shutil.rmtree(old, ignore_errors=True)


def _build(
    inputs: PrepareInputs, directory: Path, name: str, progress: bool, say: Callable[[str], None]
) -> dict:
    from tqdm.auto import tqdm

    readers = {role: _Reader(path, progress) for role, path in inputs.files()}
    say(f"reading {inputs.attributes}")
    attributes = _read_attributes(inputs.attributes, readers["attributes"])
    human: dict[str, tuple[HumanInstruction, ...]] = {}
    if inputs.human is not None:
        say(f"reading {inputs.human}")
        human = _read_human(inputs.human, readers["human"])

    say(f"reading {inputs.products}")
    index = IndexBuilder(directory / INDEX_DIR, k1=BM25_K1, b=BM25_B)
    offsets = array("q", [0])
    prices = array("d")
    asins: list[str] = []
    seen: set[str] = set()
    synthetic_rows = array("i")  # rows with a templated instruction
    planned_rows = array("i")  # rows with synthetic goals
    planned_counts = array("q")
    planned_attributes: list[tuple[str, ...]] = []
    attribute_counts: Counter[str] = Counter()
    human_sources: list[tuple[int, int]] = []
    human_kept: dict[str, tuple[tuple[str, tuple[str, ...], tuple[str, ...]], ...]] = {}
    counter = tqdm(desc="products", unit=" products", disable=not progress, mininterval=1.0)
    with (directory / "products.bin").open("wb") as records:
        for i, raw in enumerate(iter_array(inputs.products, readers["products"])):
            where = f"{inputs.products}: product {i}"
            _require(raw, _PRODUCT_KEYS, where)
            asin = raw["asin"]
            # The original's rules: skip "nan", over-long and repeated asins.
            if not isinstance(asin, str) or asin == "nan" or len(asin) > 10 or asin in seen:
                continue
            seen.add(asin)
            entry = attributes.get(asin)
            product_attributes, synthetic_raw = marshal.loads(entry) if entry is not None else (None, None)
            lookup = {asin: {"attributes": product_attributes}} if product_attributes is not None else {}
            try:
                product = _clean_product(raw, lookup, f"{where} ({asin})")
            except (AttributeError, TypeError) as exc:
                raise ValueError(f"{where} ({asin}): a field has the wrong type ({exc})") from None
            synthetic = SyntheticInstruction(*synthetic_raw) if synthetic_raw is not None else None
            row = len(asins)
            record = encode_product(product, synthetic)
            records.write(record)
            offsets.append(offsets[-1] + len(record))
            asins.append(asin)
            price = product_price(product)
            prices.append(price)
            index.add(analyze(search_document(product)))
            if synthetic is not None:
                synthetic_rows.append(row)
                if synthetic.instruction_attributes:
                    plan = synthetic_plan(product, synthetic, price)
                    planned_rows.append(row)
                    planned_counts.append(plan.n_combinations)
                    planned_attributes.append(synthetic.instruction_attributes)
                    # The original counts each attribute once per goal, i.e. per combination.
                    for attribute in synthetic.instruction_attributes:
                        attribute_counts[attribute] += plan.n_combinations
            entries = human.get(asin)
            if entries:
                human_kept[asin] = tuple(
                    (e.instruction, e.instruction_attributes, e.instruction_options) for e in entries
                )
                human_sources.extend((row, j) for j, e in enumerate(entries) if e.instruction_attributes)
            counter.update()
    counter.close()
    del attributes, seen

    n = len(asins)
    say(f"{n:,} products; writing tables")
    np.save(directory / "offsets.npy", np.frombuffer(offsets, dtype=np.int64))
    encoded = [a.encode("utf-8") for a in asins]
    asin_array = np.array(encoded, dtype=f"S{max((len(a) for a in encoded), default=1)}")
    del encoded
    del asins
    np.save(directory / "asins.npy", asin_array)
    order = np.argsort(asin_array, kind="stable")
    np.save(directory / "asin_sorted.npy", asin_array[order])
    np.save(directory / "asin_rows.npy", order.astype(np.int32))
    np.save(directory / "prices.npy", np.frombuffer(prices, dtype=np.float64) if n else np.zeros(0))
    (directory / "human.bin").write_bytes(pickle.dumps(human_kept, protocol=RECORD_PROTOCOL))
    np.save(directory / "synthetic_rows.npy", np.frombuffer(synthetic_rows, dtype=np.int32).copy())

    # Human goals, listed by their number in the paper's list (see webshop_gym.data.goals).
    positions = np.asarray(paper_positions(len(human_sources), name), dtype=np.int64)
    by_number = np.argsort(positions, kind="stable")
    sources = np.asarray(human_sources, dtype=np.int64).reshape(-1, 2)
    np.save(directory / "human_goal_rows.npy", sources[by_number, 0].astype(np.int32))
    np.save(directory / "human_goal_entries.npy", sources[by_number, 1].astype(np.int32))
    np.save(directory / "human_goal_positions.npy", positions[by_number])

    # Synthetic goals: every option combination of every planned product, in build order,
    # then shuffled as the original shuffles its goal list.
    weights = np.full(n, np.nan)
    for row, goal_attributes in zip(planned_rows, planned_attributes, strict=True):
        weights[row] = synthetic_weight(goal_attributes, attribute_counts)
    np.save(directory / "synthetic_weights.npy", weights)
    counts = np.frombuffer(planned_counts, dtype=np.int64) if planned_counts else np.zeros(0, np.int64)
    total = int(counts.sum())
    say(f"{len(human_sources):,} human goals, {total:,} synthetic goals; shuffling")
    built_rows = np.repeat(
        np.frombuffer(planned_rows, dtype=np.int32) if planned_rows else np.zeros(0, np.int32), counts
    )
    starts = np.repeat(np.cumsum(counts) - counts, counts)
    built_combinations = np.arange(total, dtype=np.int64) - starts
    shuffled = list(range(total))
    random.Random(SHUFFLE_SEED).shuffle(shuffled)
    shuffled_order = np.asarray(shuffled, dtype=np.int64)
    del shuffled
    np.save(directory / "synthetic_goal_rows.npy", built_rows[shuffled_order])
    np.save(directory / "synthetic_goal_combinations.npy", built_combinations[shuffled_order])
    del built_rows, built_combinations, shuffled_order, starts

    say("building the search index")
    index.finish(asin_array, progress=progress)  # Lucene breaks score ties by asin

    manifest: dict[str, Any] = {
        "format": STORE_FORMAT,
        "record_protocol": RECORD_PROTOCOL,
        "webshop_gym_version": __version__,
        "name": name,
        "products": n,
        "human_goals": len(human_sources),
        "synthetic_goals": total,
        "vocabulary": len(index.vocabulary),
        "created": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "inputs": [readers[role].record(role) for role, _ in inputs.files()],
    }
    files = [path for path in sorted(directory.rglob("*")) if path.is_file()]
    manifest["files"] = {path.relative_to(directory).as_posix(): path.stat().st_size for path in files}
    # What `webshop_gym.data.store` checks damage against (at open and in `data verify`).
    manifest["sha256"] = {path.relative_to(directory).as_posix(): file_sha256(path) for path in files}
    manifest["complete"] = True
    # Written last: a folder without it is never taken for a store.
    (directory / MANIFEST_NAME).write_text(json.dumps(manifest, indent=2), encoding="utf-8")
    return manifest
