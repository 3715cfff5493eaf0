"""BM25 that scores and ranks exactly as the original's Lucene, built one document at a time.

The original searches an Anserini index with pyserini's ``LuceneSearcher``: Lucene 9.9.1's
``BM25Similarity(k1=0.9, b=0.4)`` over a bag-of-words query, hits sorted by score and then
by document id (the asin). `BM25Index` reproduces that float for float, so that its top 50
equal the original's without Java (all 622 reference queries of the 1k set, and every
score bit-identical on 3,622 queries checked against Lucene itself). What that takes, each
a detail of Lucene or Anserini:

* **idf** ``log(1 + (N - df + 0.5) / (df + 0.5))`` in double, rounded to float32, where N
  counts the documents with at least one term (Lucene's ``docCount``).
* **Document length through Lucene's one-byte norm.** A document's length (its number of
  terms) is stored as ``SmallFloat.intToByte4(length)``: exact up to 40 terms, then only
  the top four bits are kept (a 199-term document weighs as 184). Scoring reads the
  length back through ``byte4ToInt`` (`LENGTH_TABLE`).
* **Lucene 9's term score**, all in float32: ``weight - weight / (1 + freq * inv_norm)``
  with ``weight = boost * idf`` and ``inv_norm = 1 / (k1 * ((1 - b) + b * length / avgdl))``
  from a 256-entry table (``BM25Similarity``'s cache), ``avgdl`` the float32 of
  ``sumTotalTermFreq / docCount``. Since Lucene 8 there is no ``(k1 + 1)`` factor, which
  scales every score alike anyway.
* **The query.** Anserini's ``BagOfWordsQueryGenerator`` makes one SHOULD clause per
  distinct analysed term, boosted by its count: a term typed twice has ``weight = 2 *
  idf`` (not the same float as the single score added twice).
* **The sum.** Lucene adds the clause scores of a document in double and rounds the sum to
  float32. Clause scores lie within a few powers of two of each other, so the double sum
  is exact and its order does not matter.
* **The order.** Anserini sorts hits by float32 score, then by document id as bytes (its
  ``BREAK_SCORE_TIES_BY_DOCID``), not by index order; the four-decimal rounding that
  pyserini reports comes after the sort and does not reorder.

Each posting keeps its term score for a query term typed once, so a search mostly adds
precomputed floats; a repeated term is scored from the posting's frequency and the
document's norm instead. Documents go in one by one: their ``(term, count)`` pairs are
spilled to a scratch file and the postings are assembled term by term at the end with a
counting sort in fixed-size chunks, so indexing 1.18M products needs no 125M Python
strings in memory. The files are flat ``.npy`` arrays read through memory maps: opening
an index costs milliseconds and every process shares the pages. Query terms are found
through a sorted table of 64-bit term hashes instead of a dict: a million-term dict takes
seconds to load and hundreds of MB in every process, the table takes neither.

A search scores only what can reach the top k (`BM25Index.top_k`): the documents of the
query's rarer terms are scored first, and the frequent terms' long posting lists are only
looked up for those documents unless their best possible scores, added up, could still
reach the k-th best score found (Turtle and Flood's MaxScore, exact: it never changes the
answer, only the work). Where it adds up many postings it does so in float32, with every
pruning test leaving room for float32's error, and scores the documents that may make the
top k again exactly before ranking them.

>>> import tempfile
>>> builder = IndexBuilder(tempfile.mkdtemp())
>>> for terms in (["red", "mug"], ["blue", "mug", "mug"], ["red", "shoe"]):
...     builder.add(terms)
>>> index = BM25Index.open(builder.finish(["B3", "B1", "B2"]))
>>> rows, scores = index.top_k(index.query(["red", "mug"]), 3)
>>> rows.tolist(), [round(float(score), 4) for score in scores]
([0, 1, 2], [0.5085, 0.313, 0.2543])
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import shutil
import tempfile
from array import array
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

__all__ = [
    "BM25_B",
    "BM25_K1",
    "INDEX_FORMAT",
    "LENGTH_TABLE",
    "BM25Index",
    "IndexBuilder",
    "Query",
    "build_in_memory",
    "byte4_to_int",
    "int_to_byte4",
    "is_current_index",
]

# Anserini's BM25 defaults, which the original's Lucene index uses.
BM25_K1 = 0.9
BM25_B = 0.4
INDEX_FORMAT = "lucene-bm25/1"
"""Written into ``params.json``; an index of another format must be rebuilt."""

PARAMS_FILE = "params.json"
DOCS_FILE = "postings_docs.npy"  # int32 document rows, ascending within each term
SCORES_FILE = "postings_scores.npy"  # float32 Lucene term score of each posting (boost 1)
FREQS_FILE = "postings_freqs.npy"  # term frequency (uint8, uint16 or int32: the smallest that fits)
STARTS_FILE = "term_starts.npy"  # int64, term t's postings are [starts[t], starts[t + 1])
MAX_SCORES_FILE = "term_max_scores.npy"  # float32, each term's best posting score (boost 1)
NORMS_FILE = "norms.npy"  # uint8 Lucene norm (encoded length) of each document
ID_RANKS_FILE = "id_ranks.npy"  # int32 position of each document's id in byte order
TERMS_FILE = "terms.bin"  # the terms in id order, UTF-8, back to back
TERM_OFFSETS_FILE = "term_offsets.npy"
TERM_HASHES_FILE = "term_hashes.npy"  # sorted 64-bit term hashes ...
TERM_HASH_IDS_FILE = "term_hash_ids.npy"  # ... and the term id of each

_SPILL_ENTRIES = 1 << 22  # entries buffered before they go to the scratch file
_SORT_CHUNK = 1 << 22  # entries placed per step when the postings are assembled

# --- Lucene's SmallFloat: document lengths in one byte ------------------------------------


def _long_to_int4(value: int) -> int:
    bits = value.bit_length()
    if bits < 4:  # subnormal: kept exactly
        return value
    shift = bits - 4
    # The top four bits, the leading one implicit, and the shift (+1: 0 means subnormal).
    return ((value >> shift) & 0x07) | ((shift + 1) << 3)


def _int4_to_long(encoded: int) -> int:
    bits, shift = encoded & 0x07, (encoded >> 3) - 1
    return bits if shift == -1 else (bits | 0x08) << shift


_NUM_FREE_VALUES = 255 - _long_to_int4(2**31 - 1)  # 24: lengths below this are exact


def int_to_byte4(length: int) -> int:
    """Lucene's ``SmallFloat.intToByte4``: a document length as the unsigned byte of its norm.

    >>> [int_to_byte4(n) for n in (0, 23, 24, 40, 41, 199, 10**6)]
    [0, 23, 24, 40, 40, 66, 167]
    """
    if length < _NUM_FREE_VALUES:
        return length
    return _NUM_FREE_VALUES + _long_to_int4(length - _NUM_FREE_VALUES)


def byte4_to_int(norm: int) -> int:
    """Lucene's ``SmallFloat.byte4ToInt``: the length a norm byte stands for.

    >>> [byte4_to_int(int_to_byte4(n)) for n in (40, 41, 199, 10**6)]
    [40, 40, 184, 983064]
    """
    if norm < _NUM_FREE_VALUES:
        return norm
    return _NUM_FREE_VALUES + _int4_to_long(norm - _NUM_FREE_VALUES)


LENGTH_TABLE = np.array([byte4_to_int(i) for i in range(256)], dtype=np.float32)
"""The length each norm byte decodes to, as float32 (``BM25Similarity.LENGTH_TABLE``)."""
_NORM_OF_LENGTH = np.array([int_to_byte4(n) for n in range(1 << 12)], dtype=np.uint8)


def _norms(lengths: np.ndarray) -> np.ndarray:
    short = lengths < len(_NORM_OF_LENGTH)
    norms = np.empty(len(lengths), dtype=np.uint8)
    norms[short] = _NORM_OF_LENGTH[lengths[short]]
    norms[~short] = [int_to_byte4(int(n)) for n in lengths[~short]]
    return norms


# --- Lucene 9's BM25, float for float ----------------------------------------------------


def lucene_idf(doc_freq: int, doc_count: int) -> np.float32:
    """``BM25Similarity.idf``: computed in double, returned as float32."""
    return np.float32(math.log(1 + (doc_count - doc_freq + 0.5) / (doc_freq + 0.5)))


def inverse_norm_table(k1: float, b: float, average_length: np.float32) -> np.ndarray:
    """``BM25Similarity``'s per-query cache: ``1 / (k1 * ((1 - b) + b * length / avgdl))`` per norm byte."""
    k1_, b_, one = np.float32(k1), np.float32(b), np.float32(1)
    return (one / (k1_ * ((one - b_) + b_ * LENGTH_TABLE / average_length))).astype(np.float32)


def term_scores(weight: np.float32, freqs: np.ndarray, inverse_norms: np.ndarray) -> np.ndarray:
    """``BM25Scorer.score``: ``weight - weight / (1 + freq * inv_norm)``, in float32."""
    one = np.float32(1)
    return weight - weight / (one + freqs.astype(np.float32) * inverse_norms)


def term_hash(term: str) -> int:
    """A 64-bit hash of a term, the same in every process (unlike `hash`)."""
    return int.from_bytes(hashlib.blake2b(term.encode("utf-8"), digest_size=8).digest(), "little")


def _id_ranks(ids: Sequence[str] | np.ndarray) -> np.ndarray:
    """Each document's position when the ids are sorted as Lucene sorts them (UTF-8 bytes)."""
    keys = np.asarray(ids) if isinstance(ids, np.ndarray) and ids.dtype.kind == "S" else None
    if keys is None:
        keys = np.array([str(i).encode("utf-8") for i in ids], dtype=object)
    order = np.argsort(keys, kind="stable")
    ranks = np.empty(len(order), dtype=np.int32)
    ranks[order] = np.arange(len(order), dtype=np.int32)
    return ranks


class IndexBuilder:
    """Builds a `BM25Index` from documents added one at a time.

    Args:
        directory: Where the index goes (created; must be empty or missing).
        k1: BM25 term-frequency saturation.
        b: BM25 length normalisation.
    """

    def __init__(self, directory: str | os.PathLike[str], k1: float = BM25_K1, b: float = BM25_B) -> None:
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

    def finish(self, ids: Sequence[str] | np.ndarray, progress: bool = False) -> Path:
        """Writes the index files and returns the directory.

        Args:
            ids: Each document's id (the asin), in the order added: Lucene breaks score
                ties by id. Strings, or a numpy bytes array.
            progress: Show a progress bar.
        """
        from tqdm.auto import tqdm

        self._spill()
        self._scratch.close()
        scratch = self.directory / "postings.scratch"
        n_docs, n_terms, nnz = len(self.doc_lengths), len(self.vocabulary), self._spilled
        if len(ids) != n_docs:
            raise ValueError(f"{len(ids)} ids for {n_docs} documents")

        doc_frequencies = np.zeros(n_terms, dtype=np.int64)
        max_freq = 0
        for chunk in self._chunks(scratch):
            doc_frequencies += np.bincount(chunk[:, 0], minlength=n_terms)
            max_freq = max(max_freq, int(chunk[:, 1].max()))
        lengths = np.frombuffer(self.doc_lengths, dtype=np.int64) if n_docs else np.zeros(0, np.int64)
        # Lucene's collection statistics count only documents that have the field's terms.
        doc_count = int(np.count_nonzero(lengths))
        total_terms = int(lengths.sum())
        average_length = np.float32(total_terms / doc_count) if doc_count else np.float32(1)
        norms = _norms(lengths)
        inverse_norms = inverse_norm_table(self.k1, self.b, average_length)
        idf = np.array([lucene_idf(df, doc_count) for df in doc_frequencies.tolist()], dtype=np.float32)
        freq_dtype = np.uint8 if max_freq < 1 << 8 else np.uint16 if max_freq < 1 << 16 else np.int32

        starts = np.zeros(n_terms + 1, dtype=np.int64)
        np.cumsum(doc_frequencies, out=starts[1:])

        def create(name: str, dtype: type) -> np.memmap:
            return np.lib.format.open_memmap(self.directory / name, mode="w+", dtype=dtype, shape=(nnz,))

        docs_out, scores_out, freqs_out = (
            create(DOCS_FILE, np.int32),
            create(SCORES_FILE, np.float32),
            create(FREQS_FILE, freq_dtype),
        )
        max_scores = np.zeros(n_terms, dtype=np.float32)
        cursor = starts[:-1].copy()
        chunks = tqdm(
            self._chunks(scratch),
            total=-(-nnz // _SORT_CHUNK),
            desc="assembling the BM25 index",
            unit="chunk",
            disable=not progress,
        )
        for chunk in chunks:
            terms, counts, docs = chunk[:, 0], chunk[:, 1], chunk[:, 2]
            scores = term_scores(idf[terms], counts, inverse_norms[norms[docs]])  # type: ignore[arg-type]
            np.maximum.at(max_scores, terms, scores)
            # Stable sort by term keeps documents ascending within each term's run.
            order = np.argsort(terms, kind="stable")
            sorted_terms = terms[order]
            run_starts = np.flatnonzero(np.diff(sorted_terms, prepend=-1))
            run_lengths = np.diff(np.append(run_starts, len(sorted_terms)))
            rank = np.arange(len(sorted_terms)) - np.repeat(run_starts, run_lengths)
            positions = cursor[sorted_terms] + rank
            docs_out[positions] = docs[order]
            scores_out[positions] = scores[order]
            freqs_out[positions] = counts[order]
            cursor[sorted_terms[run_starts]] += run_lengths
        for out in (docs_out, scores_out, freqs_out):
            out.flush()
        del docs_out, scores_out, freqs_out
        scratch.unlink()
        np.save(self.directory / STARTS_FILE, starts)
        np.save(self.directory / MAX_SCORES_FILE, max_scores)
        np.save(self.directory / NORMS_FILE, norms)
        np.save(self.directory / ID_RANKS_FILE, _id_ranks(ids))
        self._write_vocabulary()
        params = {
            "format": INDEX_FORMAT,
            "k1": self.k1,
            "b": self.b,
            "documents": n_docs,
            # Lucene's CollectionStatistics: docCount and sumTotalTermFreq of the field.
            "doc_count": doc_count,
            "sum_total_term_freq": total_terms,
            "terms": n_terms,
            "postings": nnz,
        }
        (self.directory / PARAMS_FILE).write_text(json.dumps(params, indent=2), encoding="utf-8")
        return self.directory

    def _write_vocabulary(self) -> None:
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

    def abort(self) -> None:
        """Drops everything written so far."""
        self._scratch.close()
        shutil.rmtree(self.directory, ignore_errors=True)


def is_current_index(directory: str | os.PathLike[str]) -> bool:
    """Whether ``directory`` holds a finished index of this module's format (`INDEX_FORMAT`)."""
    try:
        params = json.loads((Path(directory) / PARAMS_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return isinstance(params, dict) and params.get("format") == INDEX_FORMAT


_MARGIN = 1e-5
# Up to this many essential clauses, MaxScore adds their scores up in float32 (an error of
# at most clauses * 2^-23 of the sum, far inside _MARGIN).
_FLOAT32_CLAUSES = 32


def _best_few(values: np.ndarray, count: int) -> np.ndarray:
    """Positions (ascending) of the ``count`` largest ``values`` (all when fewer); cheaper
    than ``argpartition`` over many values: a cut from every 16th value, then only what
    passes it."""
    if len(values) <= count:
        return np.arange(len(values))
    if len(values) > 64 * count:
        # The sample's (count / 8)-th largest: about twice count values pass, rarely fewer.
        sample = values[::16]
        cut = np.partition(sample, -(count // 8))[-(count // 8)]
        passing = np.flatnonzero(values >= cut)
        if len(passing) >= count:
            return np.sort(passing[np.argpartition(values[passing], -count)[-count:]])
    return np.sort(np.argpartition(values, -count)[-count:])


def _select(mask: np.ndarray, *arrays: np.ndarray) -> tuple[np.ndarray, ...]:
    """The items of ``arrays`` where ``mask`` holds (the positions found once; numpy's boolean
    indexing, and even ``compress``, cost several times more per array)."""
    where = np.flatnonzero(mask)
    return tuple(array.take(where) for array in arrays)


def _at_least(bound: float, threshold: float) -> bool:
    """Whether a score bounded by ``bound`` may still reach ``threshold``.

    Bounds are sums of float32 upper bounds added in double, scores the float32 of a
    double sum: a margin far above float32's rounding keeps the test on the safe side (a
    document is only ever dropped when it surely falls short).
    """
    return bound >= threshold * (1 - _MARGIN)


def _floor(threshold: float, remaining: float) -> float:
    """The partial sum below which a document cannot reach ``threshold`` with ``remaining`` to gain."""
    return threshold * (1 - _MARGIN) - remaining


@dataclass(frozen=True)
class _Clause:
    """A query term as MaxScore sees it: its postings' count and its best possible score."""

    term: int
    count: int
    length: int
    bound: float
    # Its documents and scores, once computed (a repeated term's scores cost a pass).
    postings: list[tuple[np.ndarray, np.ndarray]] = field(default_factory=list, compare=False, repr=False)


@dataclass(frozen=True)
class Query:
    """A query as Anserini builds it: each distinct indexed term and its count (the clause boost)."""

    terms: tuple[int, ...]
    counts: tuple[int, ...]


class BM25Index:
    """A BM25 index written by `IndexBuilder`: Lucene's scores and order, float for float.

    Open one with `BM25Index.open` (memory-mapped) or build one with `build_in_memory`.
    """

    # Work below which MaxScore's bookkeeping costs more than it saves: score every posting.
    _EXHAUSTIVE_POSTINGS = 1 << 16
    # The threshold of MaxScore comes from the rarest clauses' postings (up to this many) ...
    _SEED_POSTINGS = 1 << 13
    # ... and this many of their documents, scored in full.
    _SEED_DOCUMENTS = 256

    def __init__(self, directory: str | os.PathLike[str], *, mmap: bool = True) -> None:
        directory = Path(directory)

        def load(name: str) -> np.ndarray:
            # A plain ndarray view of the map: slicing a np.memmap costs far more per call.
            return np.asarray(np.load(directory / name, mmap_mode="r" if mmap else None, allow_pickle=False))

        params = json.loads((directory / PARAMS_FILE).read_text(encoding="utf-8"))
        if params.get("format") != INDEX_FORMAT:
            raise ValueError(
                f"{directory} holds a search index of format {params.get('format', 'bm25s')!r}, "
                f"not {INDEX_FORMAT!r}; rebuild it (`webshop-gym data prepare --force`)"
            )
        self.n_docs = int(params["documents"])
        self.k1, self.b = float(params["k1"]), float(params["b"])
        self.doc_count = int(params["doc_count"])
        self.sum_total_term_freq = int(params["sum_total_term_freq"])
        self.average_length = (
            np.float32(self.sum_total_term_freq / self.doc_count) if self.doc_count else np.float32(1)
        )
        self._inverse_norms = inverse_norm_table(self.k1, self.b, self.average_length)
        self._docs = load(DOCS_FILE)
        self._scores = load(SCORES_FILE)
        self._freqs = load(FREQS_FILE)
        self._starts = load(STARTS_FILE)
        self._max_scores = load(MAX_SCORES_FILE)
        self._norms = load(NORMS_FILE)
        self.id_ranks = load(ID_RANKS_FILE)
        self._term_offsets = load(TERM_OFFSETS_FILE)
        self._hashes = load(TERM_HASHES_FILE)
        self._hash_ids = load(TERM_HASH_IDS_FILE)
        terms_path = directory / TERMS_FILE
        if not mmap:
            self._terms: np.ndarray | None = np.fromfile(terms_path, dtype=np.uint8)
        elif self._term_offsets[-1]:
            self._terms = np.memmap(terms_path, dtype=np.uint8, mode="r")
        else:
            self._terms = None

    @classmethod
    def open(cls, directory: str | os.PathLike[str]) -> BM25Index:
        """The index in ``directory``, memory-mapped (milliseconds; pages shared between processes)."""
        return cls(directory, mmap=True)

    def __len__(self) -> int:
        return self.n_docs

    @property
    def n_terms(self) -> int:
        return len(self._term_offsets) - 1

    def term_id(self, term: str) -> int | None:
        """The id of an indexed term, or None."""
        if self._terms is None or not len(self._hashes):
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

    def query(self, terms: Iterable[str]) -> Query:
        """Anserini's bag-of-words query over analysed ``terms``: indexed terms and their counts."""
        counts = Counter(terms)
        ids = {term: self.term_id(term) for term in counts}
        known = [(ids[term], count) for term, count in counts.items() if ids[term] is not None]
        return Query(tuple(t for t, _ in known), tuple(c for _, c in known))  # type: ignore[misc]

    def doc_freq(self, term: int) -> int:
        return int(self._starts[term + 1] - self._starts[term])

    def _postings(self, term: int, count: int) -> tuple[np.ndarray, np.ndarray]:
        """A query term's documents and their scores (float32) for a clause boosted by ``count``."""
        start, end = int(self._starts[term]), int(self._starts[term + 1])
        docs = self._docs[start:end]
        if count == 1:
            return docs, self._scores[start:end]
        weight = np.float32(np.float32(count) * lucene_idf(end - start, self.doc_count))
        return docs, term_scores(weight, self._freqs[start:end], self._inverse_norms[self._norms[docs]])

    def _clause_postings(self, clause: _Clause) -> tuple[np.ndarray, np.ndarray]:
        if not clause.postings:
            clause.postings.append(self._postings(clause.term, clause.count))
        return clause.postings[0]

    def _max_score(self, term: int, count: int) -> float:
        if count == 1:
            return float(self._max_scores[term])
        # weight - weight / (1 + x) < weight for every posting.
        return float(np.float32(count) * lucene_idf(self.doc_freq(term), self.doc_count))

    def scores(self, query: Query) -> np.ndarray:
        """Every document's score (float32; 0 where no term matches), as Lucene computes it."""
        total = np.zeros(self.n_docs, dtype=np.float64)
        for term, count in zip(query.terms, query.counts, strict=True):
            docs, scores = self._postings(term, count)
            total[docs] += scores  # one posting per document and term: no repeated index
        return total.astype(np.float32)

    def top_k(self, query: Query, k: int) -> tuple[np.ndarray, np.ndarray]:
        """The ``k`` best documents for ``query`` and their scores, in Lucene's order.

        Lucene's order: float32 score descending, ties by document id (`id_ranks`).
        Only matching documents (score > 0) are returned.

        Returns:
            Document rows (int64) and their float32 scores, best first.
        """
        if not query.terms or k <= 0:
            return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float32)
        clauses = [
            _Clause(term, count, self.doc_freq(term), self._max_score(term, count))
            for term, count in zip(query.terms, query.counts, strict=True)
        ]
        if sum(c.length for c in clauses) <= self._EXHAUSTIVE_POSTINGS or len(clauses) == 1:
            docs, sums = self._score_all(clauses)
            return self._best(docs, sums.astype(np.float32), k)
        return self._best(*self._max_score_search(clauses, k), k)

    def _score_all(
        self, clauses: Sequence[_Clause], floor: float = 0.0, error: float = 0.0
    ) -> tuple[np.ndarray, np.ndarray]:
        """The documents of ``clauses`` whose sum of their scores reaches ``floor``, and those sums.

        Sums are float64, not rounded to float32 yet; documents ascending (intp). With
        ``error`` > 0 a dense sum may be added up in float32 instead, off by that much at
        most (relative); documents are then kept down to ``floor * (1 - error)``.
        """
        docs: np.ndarray
        sums: np.ndarray
        if len(clauses) == 1:
            postings, scores = self._clause_postings(clauses[0])
            docs, sums = postings.astype(np.intp), scores.astype(np.float64)
        elif sum(c.length for c in clauses) * 16 > self.n_docs:  # many: add up in a dense array
            dense: np.ndarray = np.zeros(self.n_docs, dtype=np.float32 if error else np.float64)
            for clause in clauses:
                postings, scores = self._clause_postings(clause)
                # One posting per document and term: no repeated index. (numpy indexes with
                # intp indices several times faster than with int32 ones.)
                dense[postings.astype(np.intp)] += scores
            # (numpy's nonzero of a float array is several times slower than of a bool one.)
            docs = np.flatnonzero(dense >= floor * (1 - error) if floor > 0 else dense != 0)
            return docs, dense[docs].astype(np.float64)
        else:
            parts = [self._clause_postings(c) for c in clauses]
            unique, inverse = np.unique(np.concatenate([d for d, _ in parts]), return_inverse=True)
            docs, sums = (
                unique.astype(np.intp),
                np.bincount(inverse, weights=np.concatenate([s for _, s in parts])),
            )
        if floor > 0:
            reach = sums >= floor
            docs, sums = _select(reach, docs, sums)
        return docs, sums

    def _add_scores(
        self, docs: np.ndarray, clause: _Clause, sums: np.ndarray, table: list[np.ndarray] | None = None
    ) -> None:
        """Adds ``clause``'s scores to ``sums`` (float64) of the sorted documents ``docs``.

        ``table``: where to keep a document -> position table between calls (its one item),
        all -1 again on return.
        """
        postings, scores = self._clause_postings(clause)
        # A lookup costs ~10x what walking one posting does.
        if len(docs) * 12 < len(postings):  # few documents: look each one up
            # Needles of the postings' dtype: otherwise numpy converts all the postings.
            at = np.minimum(np.searchsorted(postings, docs.astype(postings.dtype)), len(postings) - 1)
            # Adding 0.0 where the term is absent keeps the sums exact.
            sums += np.where(postings[at] == docs, scores[at], 0)
            return
        # Many: walk the postings once, through a document -> position table.
        if not table:
            table = table if table is not None else []
            table.append(np.full(self.n_docs, -1, dtype=np.int32))
        where = table[0]
        where[docs] = np.arange(len(docs), dtype=np.int32)
        at = np.take(where, postings)
        where[docs] = -1
        found = np.flatnonzero(at >= 0)
        sums[at.take(found).astype(np.intp)] += scores.take(found)

    def _threshold(self, clauses: list[_Clause], k: int) -> float:
        """A score that at least ``k`` documents reach: the k-th best of a few documents' real scores.

        The documents: those of the rarest clauses (a few postings) with the best partial
        scores, scored in full. 0 when they are fewer than k.
        """
        by_length = sorted(clauses, key=lambda c: c.length)
        seeds, postings = 0, 0
        while seeds < len(by_length) and (
            seeds == 0 or postings + by_length[seeds].length <= self._SEED_POSTINGS
        ):
            postings += by_length[seeds].length
            seeds += 1
        docs, sums = self._score_all(by_length[:seeds])
        if len(docs) < k:
            return 0.0
        keep = max(k, self._SEED_DOCUMENTS)
        if len(docs) > keep:
            best = np.argpartition(sums, -keep)[-keep:]
            best.sort()  # documents stay ascending
            docs, sums = docs[best], sums[best]
        for clause in by_length[seeds:]:
            self._add_scores(docs, clause, sums)
        return float(np.partition(sums.astype(np.float32), -k)[-k])

    def _max_score_search(self, clauses: list[_Clause], k: int) -> tuple[np.ndarray, np.ndarray]:
        """The documents that may reach the top k, with their exact scores (MaxScore).

        With ``threshold`` a score that k documents reach, a document whose clause scores
        cannot add up to it is not in the top k, nor tied with the k-th. The clauses with
        the lowest upper bounds, as long as those bounds add up to less than the
        threshold, are "non-essential": a document that matches only them cannot reach it.
        So only the documents of the essential clauses are candidates; the non-essential
        clauses' scores are looked up for them, best bound first, dropping candidates as
        soon as what they can still gain cannot lift them to the threshold.
        """
        threshold = self._threshold(clauses, k)
        by_bound = sorted(clauses, key=lambda c: c.bound)
        non_essential, remaining = 0, 0.0
        for clause in by_bound:
            if _at_least(remaining + clause.bound, threshold):
                break
            remaining += clause.bound
            non_essential += 1
        lookups = by_bound[:non_essential][::-1]  # best bound first
        essential = by_bound[non_essential:]
        # The essential clauses' sums may be added up in float32 (twice as fast, half the
        # memory): each addition is off by at most 2^-24 of the sum. Every test below then
        # leaves that much room, and the best documents are scored exactly at the end.
        dense = 1 < len(essential) <= _FLOAT32_CLAUSES and sum(c.length for c in essential) * 16 > self.n_docs
        error = len(essential) * 2.0**-23 if dense else 0.0
        docs, sums = self._score_all(essential, _floor(threshold, remaining), error)
        if lookups and len(docs) > k:
            # A better threshold: the scores of the candidates with the best partial sums.
            keep = max(k, self._SEED_DOCUMENTS)
            best = _best_few(sums, keep)
            exact = sums[best]
            for clause in lookups:
                self._add_scores(docs[best], clause, exact)
            kth = float(np.partition(exact.astype(np.float32), -k)[-k])
            threshold = max(threshold, kth * (1 - error))
        table: list[np.ndarray] = []
        for clause in lookups:
            reach = sums * (1 + error) >= _floor(threshold, remaining)
            if np.count_nonzero(reach) < len(reach):
                docs, sums = _select(reach, docs, sums)
            self._add_scores(docs, clause, sums, table)
            remaining -= clause.bound
        if error:
            docs, sums = self._rescore(docs, sums, clauses, k, error)
        return docs, sums.astype(np.float32)

    def _rescore(
        self, docs: np.ndarray, sums: np.ndarray, clauses: Sequence[_Clause], k: int, error: float
    ) -> tuple[np.ndarray, np.ndarray]:
        """The documents that may be in the top k by sums off by ``error``, scored exactly.

        A document whose approximate sum is below the k-th best one by more than twice the
        error (and float32's rounding) is below the k-th exact score, and not tied with it.
        """
        if len(docs) > k:
            kth = float(np.partition(sums, -k)[-k])
            docs, sums = _select(sums >= kth * (1 - 2 * error - 2.0**-21), docs, sums)
        exact = np.zeros(len(docs), dtype=np.float64)
        for clause in clauses:
            self._add_scores(docs, clause, exact)
        return docs, exact

    def _best(self, docs: np.ndarray, scores: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        positive = scores > 0
        if not positive.all():
            docs, scores = _select(positive, docs, scores)
        if len(docs) > k:
            # Keep everything tied with the k-th score, so that ties are broken by id.
            kth = np.partition(scores, -k)[-k]
            keep = scores >= kth
            docs, scores = _select(keep, docs, scores)
        order = np.lexsort((self.id_ranks[docs], -scores))[:k]
        return docs[order].astype(np.int64), scores[order]


def build_in_memory(
    documents: Iterable[Sequence[str]], ids: Sequence[str], k1: float = BM25_K1, b: float = BM25_B
) -> BM25Index:
    """A `BM25Index` of analysed documents, held in memory (for catalogues loaded from JSON).

    Args:
        documents: Each document's analysed terms, in order.
        ids: Each document's id (the asin), for Lucene's tie-break.
        k1: BM25 term-frequency saturation.
        b: BM25 length normalisation.
    """
    with tempfile.TemporaryDirectory(prefix="webshop-gym-bm25-") as scratch:
        builder = IndexBuilder(scratch, k1=k1, b=b)
        for terms in documents:
            builder.add(terms)
        return BM25Index(builder.finish(ids), mmap=False)
