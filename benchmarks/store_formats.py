"""Which on-disk format for the prepared catalogue store? Measured, not guessed.

    python benchmarks/store_formats.py [--products 100000] [--work /tmp/webshop-scale/formats]

Writes the same cleaned product records (one pickled tuple per product, as
`webshop_gym.data.store` stores them) several ways and measures each in a fresh process:

- arrays: ``records.bin`` read with ``pread`` + memory-mapped int64 offsets and sorted
  asins for binary search (what the store does); ``mmap``: the same with ``records.bin``
  memory-mapped as well;
- SQLite: one table ``(asin TEXT PRIMARY KEY, record BLOB)``;
- Arrow IPC file (pyarrow, if installed), memory-mapped, with the same sorted-asin lookup.

Figures: write time, size on disk, open time, median time to fetch and decode one product
by asin (10,000 random asins), and RSS growth over those fetches. It also times decoding
one record as marshal, pickle and JSON. The products come from a generated catalogue
(`webshop_gym.data.synthetic`), made under ``--work`` if missing.
"""

from __future__ import annotations

import argparse
import json
import marshal
import os
import pickle
import random
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
N_LOOKUPS = 10_000


def rss_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def records_of(raw_dir: Path) -> list[tuple[str, bytes]]:
    from webshop_gym.data.catalog import load_catalog
    from webshop_gym.data.store import encode_product

    catalog = load_catalog(raw_dir)
    return [(p.asin, encode_product(p, catalog.synthetic_instructions.get(p.asin))) for p in catalog]


def write_mmap(records: list[tuple[str, bytes]], out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    offsets = np.zeros(len(records) + 1, dtype=np.int64)
    np.cumsum([len(r) for _, r in records], out=offsets[1:])
    (out / "records.bin").write_bytes(b"".join(r for _, r in records))
    np.save(out / "offsets.npy", offsets)
    asins = np.array([a.encode() for a, _ in records], dtype="S10")
    order = np.argsort(asins)
    np.save(out / "asin_sorted.npy", asins[order])
    np.save(out / "asin_rows.npy", order.astype(np.int32))


def write_sqlite(records: list[tuple[str, bytes]], out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    connection = sqlite3.connect(out / "store.sqlite")
    connection.execute("CREATE TABLE products (asin TEXT PRIMARY KEY, record BLOB NOT NULL)")
    with connection:
        connection.executemany("INSERT INTO products VALUES (?, ?)", records)
    connection.close()


def write_arrow(records: list[tuple[str, bytes]], out: Path) -> None:
    import pyarrow as pa
    import pyarrow.ipc

    out.mkdir(parents=True, exist_ok=True)
    table = pa.table(
        {"asin": [a for a, _ in records], "record": pa.array([r for _, r in records], pa.binary())}
    )
    with (
        pa.OSFile(str(out / "store.arrow"), "wb") as sink,
        pyarrow.ipc.new_file(sink, table.schema) as writer,
    ):
        writer.write_table(table, max_chunksize=65536)
    asins = np.array([a.encode() for a, _ in records], dtype="S10")
    order = np.argsort(asins)
    np.save(out / "asin_sorted.npy", asins[order])
    np.save(out / "asin_rows.npy", order.astype(np.int32))


# The reader of each format, run in a fresh process: prints open time, lookup median, RSS growth.
READER = r"""
import json, mmap, os, statistics, sys, time
from pathlib import Path
import numpy as np
sys.path.insert(0, {root!r})
from benchmarks.store_formats import rss_mb
from webshop_gym.data.store import decode_product
fmt, out, asins = {fmt!r}, Path({out!r}), json.loads(Path({asins!r}).read_text())
before = rss_mb()
start = time.perf_counter()
if fmt in ("mmap", "arrays"):
    offsets = np.load(out / "offsets.npy", mmap_mode="r")
    keys = np.load(out / "asin_sorted.npy", mmap_mode="r")
    rows = np.load(out / "asin_rows.npy", mmap_mode="r")
    if fmt == "mmap":  # records mapped too
        f = (out / "records.bin").open("rb")
        blob = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
        read = lambda start, end: blob[start:end]
    else:  # records read with pread
        fd = os.open(out / "records.bin", os.O_RDONLY)
        read = lambda start, end: os.pread(fd, end - start, start)
    def get(asin):
        i = int(np.searchsorted(keys, np.bytes_(asin.encode()))); row = int(rows[i])
        return decode_product(read(int(offsets[row]), int(offsets[row + 1])))
elif fmt == "sqlite":
    import sqlite3
    connection = sqlite3.connect(f"file:{{out / 'store.sqlite'}}?mode=ro", uri=True)
    def get(asin):
        (record,) = connection.execute("SELECT record FROM products WHERE asin = ?", (asin,)).fetchone()
        return decode_product(record)
else:
    import pyarrow as pa, pyarrow.ipc
    table = pyarrow.ipc.open_file(pa.memory_map(str(out / "store.arrow"))).read_all()
    column = table.column("record")
    keys = np.load(out / "asin_sorted.npy", mmap_mode="r")
    rows = np.load(out / "asin_rows.npy", mmap_mode="r")
    def get(asin):
        i = int(np.searchsorted(keys, np.bytes_(asin.encode()))); row = int(rows[i])
        return decode_product(column[row].as_py())
opened = time.perf_counter() - start
times = []
for asin in asins:
    t = time.perf_counter(); product, _ = get(asin); times.append(time.perf_counter() - t)
    assert product.asin == asin
growth = rss_mb() - before
figures = {{"open_ms": opened * 1e3, "get_us": statistics.median(times) * 1e6, "rss_growth_mb": growth}}
print(json.dumps(figures))
"""


def measure(fmt: str, out: Path, asins_file: Path) -> dict[str, float]:
    code = READER.format(root=str(ROOT), fmt=fmt, out=str(out), asins=str(asins_file))
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return json.loads(result.stdout.strip().splitlines()[-1])


def size_mb(path: Path) -> float:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file()) / 1e6


def decode_costs(records: list[tuple[str, bytes]]) -> dict[str, float]:
    sample = [pickle.loads(r) for _, r in records[:2000]]
    costs = {}
    for name, dumps, loads in (
        ("marshal", marshal.dumps, marshal.loads),
        ("pickle", lambda x: pickle.dumps(x, protocol=5), pickle.loads),
        ("json", lambda x: json.dumps(x).encode(), json.loads),
    ):
        encoded = [dumps(x) for x in sample]
        start = time.perf_counter()
        for e in encoded:
            loads(e)
        costs[name] = (time.perf_counter() - start) / len(encoded) * 1e6
    return costs


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--products", type=int, default=100_000)
    parser.add_argument("--work", type=Path, default=Path("/tmp/webshop-scale/formats"))
    args = parser.parse_args()
    from webshop_gym.data.synthetic import write_catalog

    raw = args.work / f"raw-{args.products}"
    if not (raw / "items_shuffle.json").is_file():
        write_catalog(raw, args.products, seed=0)
    records = records_of(raw)
    asins = random.Random(0).choices([a for a, _ in records], k=N_LOOKUPS)
    asins_file = args.work / "asins.json"
    asins_file.write_text(json.dumps(asins))
    writers = {"arrays": write_mmap, "mmap": write_mmap, "sqlite": write_sqlite}
    try:
        import pyarrow  # noqa: F401

        writers["arrow"] = write_arrow
    except ImportError:
        print("pyarrow is not installed: Arrow is not measured (pip install pyarrow)")
    print(f"{len(records):,} products, {sum(len(r) for _, r in records) / 1e6:.0f} MB of records")
    print("| format | write | size | open | get by asin (median) | RSS growth, 10k gets |")
    print("|---|---|---|---|---|---|")
    for fmt, write in writers.items():
        out = args.work / fmt
        if out.exists():
            subprocess.run(["rm", "-rf", str(out)], check=True)
        start = time.perf_counter()
        write(records, out)
        written = time.perf_counter() - start
        figures = measure(fmt, out, asins_file)
        print(
            f"| {fmt} | {written:.1f} s | {size_mb(out):.0f} MB | {figures['open_ms']:.1f} ms | "
            f"{figures['get_us']:.1f} µs | +{figures['rss_growth_mb']:.1f} MB |"
        )
    costs = decode_costs(records)
    print("decode one record: " + ", ".join(f"{k} {v:.1f} µs" for k, v in costs.items()))
    print(f"machine: {os.cpu_count()} cores, Python {sys.version.split()[0]}")


if __name__ == "__main__":
    main()
