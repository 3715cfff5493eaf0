"""A BM25 index built one document at a time and read through memory maps.

`bm25s` builds its index from every document's token list held in memory at once: for
1.18M products that is about 125M Python strings, far beyond the 4 GB that preparing the
full catalogue may use. `IndexBuilder` computes the very same matrix in a streaming way:
documents go in one by one, their ``(term, count)`` pairs are spilled to a scratch file,
and the matrix is assembled term by term at the end with a counting sort in fixed-size
chunks. It writes `bm25s`'s own file format, so ``bm25s.BM25.load(directory, mmap=True)``
opens the result (a test checks that `bm25s` then ranks exactly as `BM25sEngine` does).

Scores follow `bm25s`'s ``"lucene"`` method exactly, float for float:
``idf = log(1 + (N - df + 0.5) / (df + 0.5))`` rounded to float32, times
``tf / (tf + k1 * (1 - b + b * dl / avgdl))`` in float64, stored as float32.

For reading, `MappedBM25` maps the score matrix and finds query terms through a sorted
table of 64-bit term hashes (also memory-mapped), instead of `bm25s`'s vocabulary dict: a
million-term dict takes seconds to load and hundreds of MB in every process, the table
takes neither.

>>> import tempfile
>>> builder = IndexBuilder(tempfile.mkdtemp(), k1=0.9, b=0.4)
>>> for terms in (["red", "mug"], ["blue", "mug", "mug"], ["red", "shoe"]):
...     builder.add(terms)
>>> index = MappedBM25(builder.finish())
>>> scores = index.scores(index.term_ids(["red", "mug", "teapot"]))
>>> [round(float(s), 3) for s in scores]
[0.509, 0.313, 0.254]
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import shutil
from array import array
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path

import numpy as np

__all__ = ["IndexBuilder", "MappedBM25"]

# The score matrix in bm25s's file names (bm25s.BM25.load reads these).
DATA_FILE = "data.csc.index.npy"
INDICES_FILE = "indices.csc.index.npy"
INDPTR_FILE = "indptr.csc.index.npy"
VOCAB_FILE = "vocab.index.json"
PARAMS_FILE = "params.index.json"
# Ours: terms in id order, and their hashes sorted with the ids, for lookups without a dict.
TERMS_FILE = "terms.bin"
TERM_OFFSETS_FILE = "term_offsets.npy"
TERM_HASHES_FILE = "term_hashes.npy"
TERM_HASH_IDS_FILE = "term_hash_ids.npy"

_SPILL_ENTRIES = 1 << 22  # entries buffered before they go to the scratch file
_SORT_CHUNK = 1 << 22  # entries placed per step when the matrix is assembled


def term_hash(term: str) -> int:
    """A 64-bit hash of a term, the same in every process (unlike `hash`)."""
    return int.from_bytes(hashlib.blake2b(term.encode("utf-8"), digest_size=8).digest(), "little")


class IndexBuilder:
    """Builds a BM25 index (`bm25s` format) from documents added one at a time.

    Args:
        directory: Where the index goes (created; must be empty or missing).
        k1: BM25 term-frequency saturation.
        b: BM25 length normalisation.
    """

    def __init__(self, directory: str | os.PathLike[str], k1: float, b: float) -> None:
        self.directory = Path(directory)
        self.directory.mkdir(parents=True, exist_ok=True)
        self.k1 = k1
        self.b = b
        self.vocabulary: dict[str, int] = {}
        self.doc_lengths = array("q")
        self._terms = array("i")
        self._counts = array("i")
        self._docs = array("i")
        self._scratch = (self.directory / "postings.scratch").open("wb")
        self._spilled = 0

    def add(self, terms: Sequence[str]) -> None:
        """Adds the next document, given as its analysed terms."""
        doc = len(self.doc_lengths)
        self.doc_lengths.append(len(terms))
        # Counter keeps first-occurrence order, so ids are still given in corpus order.
        counts = Counter(terms)
        vocabulary = self.vocabulary
        self._terms.extend([vocabulary.setdefault(term, len(vocabulary)) for term in counts])
        self._counts.extend(counts.values())
        self._docs.extend([doc] * len(counts))
        if len(self._terms) >= _SPILL_ENTRIES:
            self._spill()

    def _spill(self) -> None:
        n = len(self._terms)
        if n:
            block = np.empty((3, n), dtype=np.int32)
            block[0], block[1], block[2] = self._terms, self._counts, self._docs
            self._scratch.write(block.T.tobytes())  # (term, count, doc) triples
            self._spilled += n
        self._terms, self._counts, self._docs = array("i"), array("i"), array("i")

    def _chunks(self, path: Path) -> Iterator[np.ndarray]:
        entries = (
            np.memmap(path, dtype=np.int32, mode="r", shape=(self._spilled, 3)) if self._spilled else None
        )
        for start in range(0, self._spilled, _SORT_CHUNK):
            assert entries is not None
            yield np.array(entries[start : start + _SORT_CHUNK])

    def finish(self, progress: bool = False) -> Path:
        """Writes the index files and returns the directory."""
        from tqdm.auto import tqdm

        self._spill()
        self._scratch.close()
        scratch = self.directory / "postings.scratch"
        n_docs, n_terms, nnz = len(self.doc_lengths), len(self.vocabulary), self._spilled

        doc_frequencies = np.zeros(n_terms, dtype=np.int64)
        for chunk in self._chunks(scratch):
            doc_frequencies += np.bincount(chunk[:, 0], minlength=n_terms)
        # Exactly bm25s's arithmetic: Python's log per term, then float32.
        idf = np.array(
            [math.log(1 + (n_docs - df + 0.5) / (df + 0.5)) for df in doc_frequencies.tolist()],
            dtype=np.float32,
        )
        lengths = np.frombuffer(self.doc_lengths, dtype=np.int64) if n_docs else np.zeros(0, np.int64)
        average_length = lengths.mean() if n_docs else 1.0
        length_norm = self.k1 * ((1 - self.b) + self.b * lengths.astype(np.float64) / average_length)

        indptr = np.zeros(n_terms + 1, dtype=np.int64)
        np.cumsum(doc_frequencies, out=indptr[1:])
        data = np.lib.format.open_memmap(
            self.directory / DATA_FILE, mode="w+", dtype=np.float32, shape=(nnz,)
        )
        indices = np.lib.format.open_memmap(
            self.directory / INDICES_FILE, mode="w+", dtype=np.int32, shape=(nnz,)
        )
        cursor = indptr[:-1].copy()
        chunks = tqdm(
            self._chunks(scratch),
            total=-(-nnz // _SORT_CHUNK),
            desc="assembling the BM25 index",
            unit="chunk",
            disable=not progress,
        )
        for chunk in chunks:
            terms, counts, docs = chunk[:, 0], chunk[:, 1].astype(np.float64), chunk[:, 2]
            tfc = counts / (length_norm[docs] + counts)
            scores = (idf[terms].astype(np.float64) * tfc).astype(np.float32)
            # Stable sort by term keeps documents ascending within each term's run.
            order = np.argsort(terms, kind="stable")
            sorted_terms = terms[order]
            run_starts = np.flatnonzero(np.diff(sorted_terms, prepend=-1))
            run_lengths = np.diff(np.append(run_starts, len(sorted_terms)))
            rank = np.arange(len(sorted_terms)) - np.repeat(run_starts, run_lengths)
            positions = cursor[sorted_terms] + rank
            data[positions] = scores[order]
            indices[positions] = docs[order]
            cursor[sorted_terms[run_starts]] += run_lengths
        data.flush()
        indices.flush()
        del data, indices
        scratch.unlink()
        np.save(self.directory / INDPTR_FILE, indptr)
        self._write_vocabulary(n_docs)
        return self.directory

    def _write_vocabulary(self, n_docs: int) -> None:
        import bm25s

        terms = list(self.vocabulary)
        encoded = [t.encode("utf-8") for t in terms]
        offsets = np.zeros(len(terms) + 1, dtype=np.int64)
        np.cumsum([len(e) for e in encoded], out=offsets[1:])
        with (self.directory / TERMS_FILE).open("wb") as f:
            f.write(b"".join(encoded))
        np.save(self.directory / TERM_OFFSETS_FILE, offsets)
        hashes = np.array([term_hash(t) for t in terms], dtype=np.uint64)
        order = np.argsort(hashes, kind="stable")
        np.save(self.directory / TERM_HASHES_FILE, hashes[order])
        np.save(self.directory / TERM_HASH_IDS_FILE, order.astype(np.int32))
        with (self.directory / VOCAB_FILE).open("w", encoding="utf-8") as f:
            json.dump(self.vocabulary, f, ensure_ascii=False)
        params = {
            "k1": self.k1,
            "b": self.b,
            "delta": 0.5,
            "method": "lucene",
            "idf_method": "lucene",
            "dtype": "float32",
            "int_dtype": "int32",
            "num_docs": n_docs,
            "version": bm25s.__version__,
            "backend": "numpy",
        }
        (self.directory / PARAMS_FILE).write_text(json.dumps(params, indent=2), encoding="utf-8")

    def abort(self) -> None:
        """Drops everything written so far."""
        self._scratch.close()
        shutil.rmtree(self.directory, ignore_errors=True)


class MappedBM25:
    """A BM25 index written by `IndexBuilder`, read through memory maps.

    Args:
        directory: The index directory.
    """

    def __init__(self, directory: str | os.PathLike[str]) -> None:
        directory = Path(directory)

        def load(name: str) -> np.ndarray:
            # A plain ndarray view of the map: slicing a np.memmap costs far more per call.
            return np.asarray(np.load(directory / name, mmap_mode="r", allow_pickle=False))

        params = json.loads((directory / PARAMS_FILE).read_text(encoding="utf-8"))
        self.n_docs = int(params["num_docs"])
        self.k1, self.b = float(params["k1"]), float(params["b"])
        self._data = load(DATA_FILE)
        self._indices = load(INDICES_FILE)
        self._indptr = load(INDPTR_FILE)
        self._term_offsets = load(TERM_OFFSETS_FILE)
        self._hashes = load(TERM_HASHES_FILE)
        self._hash_ids = load(TERM_HASH_IDS_FILE)
        self._terms = (
            np.memmap(directory / TERMS_FILE, dtype=np.uint8, mode="r") if self._term_offsets[-1] else None
        )

    def __len__(self) -> int:
        return self.n_docs

    @property
    def n_terms(self) -> int:
        return len(self._term_offsets) - 1

    def term_id(self, term: str) -> int | None:
        """The id of an indexed term, or None."""
        if self._terms is None:
            return None
        key = np.uint64(term_hash(term))
        i = int(np.searchsorted(self._hashes, key))
        encoded = term.encode("utf-8")
        while i < len(self._hashes) and self._hashes[i] == key:  # equal hashes: compare the text
            candidate = int(self._hash_ids[i])
            start, end = int(self._term_offsets[candidate]), int(self._term_offsets[candidate + 1])
            if self._terms[start:end].tobytes() == encoded:
                return candidate
            i += 1
        return None

    def term_ids(self, terms: Iterable[str]) -> list[int]:
        """The ids of the indexed terms among ``terms``, repeats kept (BM25 counts them again)."""
        ids = (self.term_id(t) for t in terms)
        return [i for i in ids if i is not None]

    def top_k(self, term_ids: Sequence[int], k: int) -> tuple[np.ndarray, np.ndarray]:
        """The ``k`` best documents (positive scores only) and their scores, best first.

        Ties keep document order, as Lucene's do. The k-th best score is found with one
        partition of all scores, and only the documents at or above it are sorted: at
        1.18M documents that is three times faster than sorting out the matching ones first.
        """
        if not term_ids or k <= 0:
            return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float32)
        scores = self.scores(term_ids)
        k = min(k, self.n_docs)
        kth = np.partition(scores, -k)[-k]
        best = np.flatnonzero(scores >= kth) if kth > 0 else np.flatnonzero(scores > 0)
        order = np.lexsort((best, -scores[best]))[:k]
        return best[order], scores[best[order]]

    def scores(self, term_ids: Sequence[int]) -> np.ndarray:
        """The BM25 score of every document for a query, as `bm25s` sums them (float32)."""
        scores = np.zeros(self.n_docs, dtype=np.float32)
        for term in term_ids:
            start, end = int(self._indptr[term]), int(self._indptr[term + 1])
            # np.add.at adds in order in float32, as bm25s does (and is faster than `+=`
            # with int32 indices, which numpy first converts).
            np.add.at(scores, self._indices[start:end], self._data[start:end])
        return scores
