"""Lucene BM25 through pyserini: the search engine of the original WebShop, run the same way.

The original indexes its search documents with Anserini's ``IndexCollection``
(``JsonCollection``, ``DefaultLuceneDocumentGenerator``, one thread, positions, document
vectors and raw documents stored) and searches them with pyserini's ``LuceneSearcher``:
BM25 with k1 = 0.9, b = 0.4 over Anserini's English analyzer (Lucene's StandardTokenizer,
possessive filter, lower case, stop words, Porter stemming), scores rounded to four
decimals with ties broken by asin.

This module runs the Anserini jar that pyserini ships, with the same settings: a ``java``
subprocess builds the index (so building starts no JVM in the calling process), and
searching goes through pyjnius to ``io.anserini.search.SimpleSearcher``, the Java class that
``LuceneSearcher`` wraps. It does not import ``pyserini.search``: in pyserini 0.25 that
package imports torch, transformers, faiss and onnxruntime for dense retrieval, which
webshop-gym never needs, so pyserini can be installed without its dependencies.

Set-up: ``pip install 'webshop-gym[lucene]'`` (pyserini 0.25.x and pyjnius) and a Java 11+
runtime; Debian: ``apt-get install openjdk-17-jdk-headless``. pyserini 0.35 and later need
Java 21. Java is found through ``$JAVA_HOME``, then the ``java`` on ``PATH``, then Debian's
``/usr/lib/jvm/java-17-openjdk-*``.

A JVM cannot be used in a process forked after it started, so the searcher starts lazily,
at the first search: an engine built in a parent process (as ``AsyncVectorEnv`` does for
its first env) still works in forked workers, provided the parent has not searched.
"""

from __future__ import annotations

import collections
import hashlib
import importlib.util
import itertools
import json
import os
import re
import shutil
import subprocess
import tempfile
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from tqdm.auto import tqdm

from webshop_gym.data.locations import data_dir
from webshop_gym.search.base import CachedSearch

__all__ = [
    "INSTALL_HINT",
    "LuceneEngine",
    "LuceneSetupError",
    "anserini_jar",
    "build_lucene_index",
    "default_index_dir",
    "find_java_home",
    "is_lucene_index",
    "lucene_terms",
]

INSTALL_HINT = (
    "search_engine='lucene' needs pyserini 0.25.x, pyjnius and Java 17: "
    "pip install 'webshop-gym[lucene]' and install a JDK (Debian/Ubuntu: "
    "apt-get install openjdk-17-jdk-headless), or set JAVA_HOME to another Java 11+ JDK"
)
# Where Debian's openjdk-17-jdk-headless lives (java-17-openjdk-amd64, -arm64, ...).
DEBIAN_JAVA_DIR = Path("/usr/lib/jvm")
# Written last into a finished index: a folder without it is not (yet) an index.
MANIFEST_NAME = "webshop-gym-lucene.json"
# The original's indexing command (search_engine/run_indexing.sh), minus input and output.
INDEX_ARGUMENTS = (
    "-collection",
    "JsonCollection",
    "-generator",
    "DefaultLuceneDocumentGenerator",
    "-storePositions",
    "-storeDocvectors",
    "-storeRaw",
)
# Options for the JVM this module starts in-process (unless one is running already).
JVM_OPTIONS = ("-XX:+UseSerialGC",)
# Lucene refuses queries with more than 1,024 distinct terms; an agent may type one.
MAX_QUERY_TERMS = 2**31 - 1
_DOCS_ADDED = re.compile(r": ([\d,]+) docs added")
_TOTAL_INDEXED = re.compile(r"Total ([\d,]+) documents indexed")
_COUNTER = re.compile(r"(indexed|unindexable|empty|skipped|errors):\s+([\d,]+)")

# The process that started this module's JVM (a forked child must not use it), and the
# pyjnius class loader it gave.
_jvm_pid: int | None = None
_autoclass: Any = None


class LuceneSetupError(RuntimeError):
    """Java or the Anserini jar is missing or unusable; the message says what to install."""


def anserini_jar() -> Path:
    """The Anserini fat jar that pyserini ships (or ``$ANSERINI_CLASSPATH``, as pyserini reads it).

    Raises:
        ImportError: pyserini is not installed.
    """
    spec = importlib.util.find_spec("pyserini")
    if spec is None or spec.origin is None:
        raise ImportError(INSTALL_HINT)
    folder = os.environ.get("ANSERINI_CLASSPATH") or str(Path(spec.origin).parent / "resources" / "jars")
    jars = list(Path(folder).glob("anserini-*-fatjar.jar"))
    if not jars:
        raise ImportError(f"no anserini-*-fatjar.jar in {folder}; reinstall pyserini. {INSTALL_HINT}")
    # pyserini picks the newest jar in the folder; do the same so both halves use one jar.
    return max(jars, key=lambda jar: jar.stat().st_ctime)


def find_java_home() -> Path:
    """The Java installation to use: ``$JAVA_HOME``, the ``java`` on PATH, or Debian's Java 17.

    Raises:
        LuceneSetupError: no Java found, or ``$JAVA_HOME`` has no ``bin/java``.
    """
    configured = os.environ.get("JAVA_HOME")
    if configured:
        home = Path(configured)
        if not (home / "bin" / "java").is_file():
            raise LuceneSetupError(f"JAVA_HOME={configured} has no bin/java. {INSTALL_HINT}")
        return home
    on_path = shutil.which("java")
    if on_path:
        return Path(os.path.realpath(on_path)).parent.parent
    for home in sorted(DEBIAN_JAVA_DIR.glob("java-17-openjdk-*")):
        if (home / "bin" / "java").is_file():
            return home
    raise LuceneSetupError(f"no Java found. {INSTALL_HINT}")


def is_lucene_index(folder: str | os.PathLike[str]) -> bool:
    """Whether ``folder`` holds a finished index written by :func:`build_lucene_index`."""
    return (Path(folder) / MANIFEST_NAME).is_file()


def _document_digest(asins: Sequence[str], documents: Sequence[str], jar: Path) -> str:
    digest = hashlib.sha256(f"{jar.name} {' '.join(INDEX_ARGUMENTS)}\n".encode())
    for asin, document in zip(asins, documents, strict=True):
        digest.update(f"{asin}\t{document}\n".encode("utf-8", "surrogatepass"))
    return digest.hexdigest()


def default_index_dir(asins: Sequence[str], documents: Sequence[str]) -> Path:
    """Where :meth:`LuceneEngine.from_documents` caches the index of these documents.

    A folder under ``data_dir()/lucene`` named by a hash of the documents and the Anserini
    version, so that each catalogue is indexed once per machine.
    """
    digest = _document_digest(asins, documents, anserini_jar())
    return data_dir() / "lucene" / f"{len(asins)}-{digest[:20]}"


def _write_collection(
    asins: Sequence[str], documents: Iterable[str], folder: Path, per_file: int, show_progress: bool
) -> None:
    """Writes ``{"id", "contents"}`` lines, as the original's conversion script does."""
    folder.mkdir(parents=True)
    pairs = iter(
        tqdm(
            zip(asins, documents, strict=True),
            total=len(asins),
            desc="Lucene documents",
            unit="doc",
            disable=not show_progress,
        )
    )
    for number in itertools.count():
        chunk = list(itertools.islice(pairs, per_file))
        if not chunk:
            return
        with (folder / f"documents{number:05d}.jsonl").open("w", encoding="utf-8") as out:
            # ensure_ascii (json's default, as in the original) also carries lone surrogates.
            out.writelines(json.dumps({"id": asin, "contents": document}) + "\n" for asin, document in chunk)


def _run_indexer(
    collection: Path, index: Path, total: int, threads: int, show_progress: bool
) -> dict[str, int]:
    """Runs Anserini's IndexCollection in a ``java`` subprocess; returns its final counters."""
    java = find_java_home() / "bin" / "java"
    command = [
        str(java),
        "-cp",
        str(anserini_jar()),
        "io.anserini.index.IndexCollection",
        "-input",
        str(collection),
        "-index",
        str(index),
        "-threads",
        str(threads),
        *INDEX_ARGUMENTS,
    ]
    tail: collections.deque[str] = collections.deque(maxlen=40)
    counters: dict[str, int] = {}
    with (
        tqdm(total=total, desc="Lucene index", unit="doc", disable=not show_progress) as progress,
        subprocess.Popen(
            command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, errors="replace"
        ) as process,
    ):
        assert process.stdout is not None
        # Anserini logs one line per finished input file; that is the progress it reports.
        for line in process.stdout:
            tail.append(line.rstrip())
            if added := _DOCS_ADDED.search(line):
                progress.update(int(added.group(1).replace(",", "")))
            elif counter := _COUNTER.search(line):
                counters[counter.group(1)] = int(counter.group(2).replace(",", ""))
            elif finished := _TOTAL_INDEXED.search(line):
                counters["total"] = int(finished.group(1).replace(",", ""))
    log = "\n".join(tail)
    if process.returncode != 0 or "total" not in counters:
        raise RuntimeError(
            f"Anserini's indexer failed (exit status {process.returncode}); its last output:\n{log}"
        )
    if counters.get("errors", 0) or counters.get("unindexable", 0):
        raise RuntimeError(f"Anserini could not index some documents; its last output:\n{log}")
    return counters


def build_lucene_index(
    asins: Sequence[str],
    documents: Iterable[str],
    index_dir: str | os.PathLike[str],
    *,
    threads: int = 1,
    show_progress: bool = True,
    documents_per_file: int = 100_000,
) -> Path:
    """Indexes the search documents with Anserini, as the original does, into ``index_dir``.

    Idempotent: a finished index is kept as it is. The index is written beside
    ``index_dir`` and renamed into place when complete, so an interrupted build never
    leaves a folder that looks finished; builders racing on one folder all succeed.

    Args:
        asins: Document ids, one per document (the hits are these ids).
        documents: The texts (``search_document(product)``), in the same order.
        index_dir: The folder to create.
        threads: Indexing threads (the original uses 1; scores do not depend on it).
        show_progress: Whether to show progress bars.
        documents_per_file: Documents per input file; Anserini reports progress per file.

    Returns:
        ``index_dir``.

    Raises:
        ImportError: pyserini is not installed.
        LuceneSetupError: Java is missing.
        RuntimeError: Anserini failed; the message holds the end of its log.
    """
    index_dir = Path(index_dir)
    if is_lucene_index(index_dir):
        return index_dir
    if threads < 1 or documents_per_file < 1:
        raise ValueError(f"threads ({threads}) and documents_per_file ({documents_per_file}) must be >= 1")
    anserini_jar()  # fail before writing anything when pyserini or Java is missing
    find_java_home()
    index_dir.parent.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix=f".{index_dir.name}.building-", dir=index_dir.parent))
    try:
        _write_collection(asins, documents, work / "collection", documents_per_file, show_progress)
        counters = _run_indexer(work / "collection", work / "index", len(asins), threads, show_progress)
        manifest = {
            "documents": len(asins),
            # The original's generator skips documents whose text is blank; so does this index.
            "indexed": counters["total"],
            "empty": counters.get("empty", 0),
            "anserini": anserini_jar().name,
            "arguments": list(INDEX_ARGUMENTS),
        }
        (work / "index" / MANIFEST_NAME).write_text(json.dumps(manifest, indent=1) + "\n")
        try:
            os.replace(work / "index", index_dir)
        except OSError:
            if not is_lucene_index(index_dir):  # not another builder's finished copy
                raise
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return index_dir


def _check_jvm_process() -> None:
    """Refuses to use a JVM inherited through fork: it hangs at its first garbage collection."""
    if _jvm_pid is not None and _jvm_pid != os.getpid():
        raise RuntimeError(
            f"Lucene's JVM was started in process {_jvm_pid}, and this process ({os.getpid()}) "
            "is a fork of it: a JVM does not survive fork. Create the Lucene envs in the worker "
            "processes without searching in the parent first, or start workers with "
            "multiprocessing's 'spawn' or 'forkserver' context (AsyncVectorEnv(..., context='spawn'))."
        )


def _java_class(name: str) -> Any:
    """A Java class from the Anserini jar, starting this process's JVM on first use."""
    global _jvm_pid, _autoclass
    _check_jvm_process()
    if _autoclass is None:
        if importlib.util.find_spec("jnius") is None:
            raise ImportError(INSTALL_HINT)
        anserini_jar()
        # pyjnius finds libjvm through JAVA_HOME; point it at the Java that builds the index.
        os.environ.setdefault("JAVA_HOME", str(find_java_home()))
        import jnius_config

        if not jnius_config.vm_running:
            # The serial collector: a third less memory per process on the 1k set (250 vs
            # 375 MB RSS after 1,900 searches), no slower; env processes are many, cores few.
            jnius_config.add_options(*JVM_OPTIONS)
        try:
            # pyserini's own set-up: its jar on the class path, then the JVM starts.
            from pyserini.pyclass import autoclass
        except Exception as error:
            raise LuceneSetupError(f"could not start Java for Lucene ({error}). {INSTALL_HINT}") from error
        _jvm_pid, _autoclass = os.getpid(), autoclass
        autoclass("org.apache.lucene.search.IndexSearcher").setMaxClauseCount(MAX_QUERY_TERMS)
    try:
        return _autoclass(name)
    except Exception as error:  # e.g. a Java too old for the jar's class files
        raise LuceneSetupError(f"could not load {name} ({error}). {INSTALL_HINT}") from error


def lucene_terms(text: str) -> list[str]:
    """Lucene's own analysis of ``text`` (Anserini's English analyzer), to check others against.

    Starts this process's JVM, as a search does.
    """
    analyzer = _java_class("io.anserini.analysis.DefaultEnglishAnalyzer").newDefaultInstance()
    tokens = _java_class("io.anserini.analysis.AnalyzerUtils").analyze(analyzer, _java_safe(text))
    return [str(token) for token in tokens.toArray()]


def _java_safe(text: str) -> str:
    # Java strings cannot take lone surrogates, which a Python str (and an agent) can.
    return text.encode("utf-8", "replace").decode("utf-8")


class LuceneEngine(CachedSearch):
    """BM25 search with Lucene, through pyserini's Anserini, over an index folder.

    Example (needs the ``lucene`` extra and Java)::

        engine = LuceneEngine.from_documents(["B1", "B2"], ["red mug", "blue cup"])
        engine.search("mugs")  # ['B1']
    """

    def __init__(self, index_dir: str | os.PathLike[str]) -> None:
        """Opens an index written by :func:`build_lucene_index` (the JVM starts at the first search).

        Raises:
            FileNotFoundError: ``index_dir`` holds no finished index.
        """
        super().__init__()
        self.index_dir = Path(index_dir)
        if not is_lucene_index(self.index_dir):
            raise FileNotFoundError(
                f"{self.index_dir} holds no finished Lucene index; build one with "
                "webshop_gym.search.lucene.build_lucene_index or LuceneEngine.from_documents"
            )
        self.manifest = json.loads((self.index_dir / MANIFEST_NAME).read_text())
        self._searcher: Any = None

    @classmethod
    def from_documents(
        cls,
        asins: Sequence[str],
        documents: Sequence[str],
        index_dir: str | os.PathLike[str] | None = None,
        *,
        threads: int = 1,
        show_progress: bool = True,
    ) -> LuceneEngine:
        """The engine over these documents, indexing them first unless already indexed.

        Args:
            asins: Document ids.
            documents: Their texts, in the same order.
            index_dir: Where the index lives; by default a cache folder keyed by the
                documents (:func:`default_index_dir`), so each catalogue is indexed once.
            threads: Indexing threads.
            show_progress: Whether to show progress bars while indexing.
        """
        if len(asins) != len(documents):
            raise ValueError(f"{len(asins)} asins but {len(documents)} documents")
        folder = Path(index_dir) if index_dir is not None else default_index_dir(asins, documents)
        build_lucene_index(asins, documents, folder, threads=threads, show_progress=show_progress)
        return cls(folder)

    def _java_searcher(self) -> Any:
        _check_jvm_process()
        if self._searcher is None:
            self._searcher = _java_class("io.anserini.search.SimpleSearcher")(str(self.index_dir))
        return self._searcher

    def scored_search(self, query: str, k: int = 50) -> list[tuple[str, float]]:
        """The top ``k`` ``(asin, score)`` pairs, best first, without the answer cache.

        Scores are Anserini's: BM25 rounded to four decimals, ties broken by asin.
        """
        if k <= 0:
            return []
        searcher = self._java_searcher()
        return [(hit.docid, hit.score) for hit in searcher.search(_java_safe(query), k)]

    def _search_uncached(self, query: str, k: int) -> list[str]:
        return [asin for asin, _ in self.scored_search(query, k)]

    def __getstate__(self) -> dict[str, Any]:
        # The Java searcher belongs to this process; a copy opens its own on first search.
        return {**self.__dict__, "_searcher": None}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
