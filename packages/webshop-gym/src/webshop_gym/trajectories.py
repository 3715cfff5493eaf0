"""Action-annotated trajectories: record episodes as JSON lines, read them back, replay them.

The web shop (`webshop_gym.web`) records every session a person shops in, and any agent
loop can record its episodes the same way (`TrajectoryRecorder`). One file holds one or
more episodes, one JSON object per line:

* ``{"type": "episode", ...}`` starts an episode: the env's arguments (enough to build the
  same env again), the reset seed and goal index, the goal (instruction, asin,
  attributes, options, price limit), the first observation and the actions it allows;
* ``{"type": "step", ...}`` per action: the action exactly as taken, then the observation,
  reward, terminated, truncated and the step's ``info`` (page, action error, available
  actions and, at the purchase, the reward breakdown);
* a *branch* goes on from step ``t`` of an earlier episode of the same file (a person who
  went back to an earlier page and acted there): its episode line says
  ``"branch_of": {"episode": e, "t": t}`` and holds none of the shared start, and its
  step lines follow from ``t + 1``. `read_trajectories` gives every episode whole: a
  branch's episode has episode e's header fields and first t steps, then its own.

Episode lines number the file's episodes from 0 (``"episode"``). Files of format
``webshop-gym-trajectory/1`` (no branches) read as before.

Writing is durable and whole: the lines of each record are appended with one write and
fsync'ed before the call returns; a write or fsync that fails (a full disk) is cut back to
the last whole line and raises `OSError`, so the file never holds a partial line followed
by more. The file is created by its first record: a recorder that records nothing leaves
no file. A crash (or power loss) can at worst cut the last line short; `read_trajectories`
skips such a torn last line with a `RuntimeWarning` (and reports it) and rejects damage
anywhere else.

Agent loops that play episodes side by side (`webshop_gym.agents.episodes`, the benchmark
runner) build each episode's lines with `episode_line` and `step_line` and write whole
episodes with `write_trajectories`. A name ending ``.gz`` writes the file gzip-compressed
(about a tenth of the size), one ending ``.xz`` xz-compressed (about a thirtieth: xz finds
the pages that recur across episodes, which gzip's 32 KB window cannot; recorded runs keep
it); `read_trajectories` and ``webshop-gym replay`` read all three. `TrajectoryRecorder`
appends line by line, so it writes plain ``.jsonl`` only.

`replay` re-runs a recorded episode through a fresh `WebShopEnv` and checks that every
observation, reward and end flag comes out as recorded (``webshop-gym replay FILE``).

Example:
    >>> import tempfile, pathlib
    >>> from webshop_gym.envs import WebShopEnv
    >>> env = WebShopEnv(split="test")
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "demo.jsonl"
    >>> with TrajectoryRecorder(path) as recorder:
    ...     observation, info = recorder.reset(env, seed=0, goal_index=0)
    ...     _ = recorder.step(env, "search[leggings]")
    >>> [step.action for step in read_trajectories(path).episodes[0].steps]
    ['search[leggings]']
    >>> replay(read_trajectories(path).episodes[0]).matches
    True
"""

from __future__ import annotations

import contextlib
import datetime as dt
import gzip
import io
import json
import lzma
import math
import os
import threading
import time
import warnings
import zlib
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from webshop_gym import __version__
from webshop_gym.web.codec import goal_to_json

__all__ = [
    "TRAJECTORY_FORMAT",
    "Episode",
    "ReplayResult",
    "Step",
    "TrajectoryFile",
    "TrajectoryRecorder",
    "append_line",
    "append_whole_lines",
    "episode_line",
    "json_safe",
    "new_trajectory_path",
    "read_trajectories",
    "replay",
    "step_line",
    "write_trajectories",
]

TRAJECTORY_FORMAT = "webshop-gym-trajectory/2"
# Formats this reader takes: /1 is /2 without branches and episode numbers.
READABLE_FORMATS = ("webshop-gym-trajectory/1", TRAJECTORY_FORMAT)
# What a branch's episode takes from the episode it branches from.
INHERITED_FIELDS = ("env", "seed", "goal_index", "goal", "observation", "info")

# The env arguments an episode line records, so that replay can build the same env.
ENV_ARGUMENTS = (
    "catalog",
    "observation_mode",
    "goals",
    "split",
    "search_engine",
    "reward",
    "shaping_discount",
    "max_steps",
    "show_attributes",
)


def _json_line(record: dict[str, Any]) -> bytes:
    return (json.dumps(record, ensure_ascii=False, allow_nan=False) + "\n").encode("utf-8")


def append_line(file: Any, record: dict[str, Any]) -> None:
    """Appends one JSON line to an open text file and makes it durable (write, flush, fsync).

    A failed write can leave part of the line behind; `TrajectoryRecorder` appends whole
    lines or nothing.
    """
    file.write(_json_line(record).decode("utf-8"))
    file.flush()
    os.fsync(file.fileno())


def append_whole_lines(path: Path, data: bytes, known_size: int | None = None) -> int:
    """Appends ``data`` (whole lines) to ``path`` durably, or leaves the file as it was.

    Creates the file (and makes its name durable) when missing. When the write or the
    fsync fails, the file is cut back to its size before the call, or removed when this
    call created it, and the `OSError` is raised.

    Args:
        path: The file.
        data: The bytes to append.
        known_size: The file's size after the last append that succeeded, where an earlier
            failure may have left bytes that could not be cut back: they are cut first.

    Returns:
        The file's size after the append.
    """
    created = not path.exists()
    if created:
        path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o666)
    try:
        start = os.fstat(fd).st_size
        if known_size is not None and start > known_size:
            os.ftruncate(fd, known_size)  # what an earlier failed cut left behind
            start = known_size
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
            os.fsync(fd)
        except OSError:
            try:
                os.ftruncate(fd, start)
                os.fsync(fd)
            except OSError:
                pass  # the caller's known_size makes the next append cut it
            if created:
                with contextlib.suppress(OSError):
                    os.unlink(path)
            raise
        end = start + len(data)
    finally:
        os.close(fd)
    if created:
        _fsync_directory(path.parent)  # the new file's name survives a crash too
    return end


def new_trajectory_path(directory: str | os.PathLike[str], prefix: str = "session") -> Path:
    """A fresh file name in ``directory``: UTC time plus random hex, never a session id.

    The name sorts by start time and reveals nothing that would let a reader of the log
    folder act in the session it came from.
    """
    stamp = dt.datetime.now(dt.timezone.utc).strftime("%Y%m%dT%H%M%S")
    return Path(directory) / f"{prefix}-{stamp}-{os.urandom(6).hex()}.jsonl"


def _env_arguments(env: Any) -> dict[str, Any]:
    unwrapped = env.unwrapped
    return {name: unwrapped._arguments[name] for name in ENV_ARGUMENTS}


def json_safe(value: Any) -> Any:
    """``info`` values as JSON allows (tuples as lists, non-finite floats as strings)."""
    if isinstance(value, dict):
        return {str(k): json_safe(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [json_safe(v) for v in value]
    if isinstance(value, float) and not math.isfinite(value):
        return repr(value)
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    return repr(value)


def episode_line(
    env: Any,
    seed: int | None,
    observation: str,
    info: dict[str, Any],
    source: str = "agent",
    metadata: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """The line that starts an episode, after ``env.reset`` (numbered ``-1`` until it is written)."""
    return {
        "type": "episode",
        "format": TRAJECTORY_FORMAT,
        "episode": -1,
        "webshop_gym_version": __version__,
        "source": source,
        "started_at": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
        "env": _env_arguments(env),
        "seed": seed,
        "goal_index": info["goal_index"],
        "goal": goal_to_json(env.unwrapped.goal),
        "observation": observation,
        "info": json_safe(info),
        **(metadata or {}),
    }


def step_line(
    action: Any,
    observation: str,
    reward: float,
    terminated: bool,
    truncated: bool,
    info: dict[str, Any],
    seconds: float = 0.0,
    agent_output: str | None = None,
) -> dict[str, Any]:
    """The line of one step (``t`` is ``-1`` until it is written).

    ``seconds``: since the episode began; ``agent_output``: what the agent answered besides
    the action (an LLM's raw text), kept only when given.
    """
    line = {
        "type": "step",
        "t": -1,
        "seconds": seconds,
        "action": action if isinstance(action, str) else json_safe(action),
        "observation": observation,
        "reward": float(reward),
        "terminated": bool(terminated),
        "truncated": bool(truncated),
        "info": json_safe(info),
    }
    if agent_output is not None:
        line["agent_output"] = agent_output
    return line


def write_trajectories(path: str | os.PathLike[str], episodes: Iterable[Episode]) -> Path:
    """Writes whole episodes (`episode_line` and `step_line` records) as a new trajectory file.

    Episodes are numbered in the order given and their steps from 1, so the file reads back
    (`read_trajectories`) as these episodes; an existing file is replaced (whole: a crash
    leaves the old file or the new one). A name ending ``.gz`` is written gzip-compressed,
    one ending ``.xz`` xz-compressed.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = []
    for number, episode in enumerate(episodes):
        lines.append(_json_line({**episode.header, "episode": number}))
        for t, step in enumerate(episode.steps, start=1):
            lines.append(_json_line(step.line(t)))
    data = b"".join(lines)
    if path.suffix in COMPRESSIONS:
        data = COMPRESSIONS[path.suffix].compress(data)
    temporary = path.with_name(path.name + ".partial")
    temporary.write_bytes(data)
    temporary.replace(path)
    return path


class TrajectoryRecorder:
    """Records episodes of a `WebShopEnv` into one JSON-lines file, line by durable line.

    Call `reset` and `step` instead of the env's own (they call the env and record what
    it returned). Thread-safe: one lock guards the file. The file is opened for each record
    and closed again, so a server with thousands of idle sessions holds no descriptors.
    A record that cannot be written raises `OSError` and leaves the file as it was (see
    the module docstring); the env has moved on all the same, so a caller that must keep
    both in step restores the env (`webshop_gym.web.snapshots.restore_episode`).

    Args:
        path: The file; created by the first record if missing, appended to otherwise.
        source: Who acted (``"web"`` for people in the web shop, ``"api"``, ``"agent"``...).
        metadata: Extra fields for every episode line (e.g. a participant id).
    """

    def __init__(
        self, path: str | os.PathLike[str], source: str = "agent", metadata: dict | None = None
    ) -> None:
        self.path = Path(path)
        if _is_compressed_name(self.path):
            raise ValueError(
                f"{self.path}: a recorder appends line by line and writes plain JSON lines; name it "
                "*.jsonl (compress it afterwards, or write whole episodes with write_trajectories)"
            )
        self.source = source
        self.metadata = dict(metadata or {})
        self._closed = False
        self._lock = threading.Lock()
        self._started = time.monotonic()
        self._t = 0
        self._episodes = 0  # episode lines this recorder wrote (numbers go on from those in the file)
        self._numbered = False
        self._in_episode = False
        self._size: int | None = None  # the file's size after the last whole record

    def reset(self, env: Any, seed: int | None = None, goal_index: int | None = None) -> tuple[str, dict]:
        """Resets ``env`` and records the start of an episode."""
        options = {"goal_index": goal_index} if goal_index is not None else None
        observation, info = env.reset(seed=seed, options=options)
        self.record_reset(env, seed, observation, info)
        return observation, info

    def record_reset(self, env: Any, seed: int | None, observation: str, info: dict[str, Any]) -> None:
        """Records an episode start for a reset the caller made itself."""
        record = episode_line(env, seed, observation, info, self.source, self.metadata)
        with self._lock:
            record["episode"] = self._next_episode()
            self._append(record)
            self._episodes, self._in_episode = record["episode"] + 1, True
            self._started = time.monotonic()
            self._t = 0

    def step(self, env: Any, action: Any) -> tuple[str, float, bool, bool, dict]:
        """Steps ``env`` and records the action with what it led to."""
        observation, reward, terminated, truncated, info = env.step(action)
        self.record_step(action, observation, reward, terminated, truncated, info)
        return observation, reward, terminated, truncated, info

    def record_step(
        self,
        action: Any,
        observation: str,
        reward: float,
        terminated: bool,
        truncated: bool,
        info: dict[str, Any],
        branch_of: tuple[int, int] | None = None,
    ) -> int:
        """Records one step the caller took itself.

        Args:
            action, observation, reward, terminated, truncated, info: What the step took
                and returned.
            branch_of: ``(e, t)``: the step goes on from step ``t`` of episode ``e`` of this
                file (the env was restored there), so it starts a new episode, a branch,
                recorded without the shared first ``t`` steps. Its episode line and the
                step are written together: both or neither.

        Returns:
            The number of the episode the step belongs to.
        """
        step = step_line(action, observation, reward, terminated, truncated, info)
        with self._lock:
            step["seconds"] = round(time.monotonic() - self._started, 3)
            if branch_of is None:
                if not self._in_episode:
                    raise ValueError("record_reset before the first step")
                step["t"] = self._t + 1
                self._append(step)
                self._t += 1
                return self._episodes - 1
            parent, t = branch_of
            number = self._next_episode()
            if not 0 <= parent < number or t < 0:
                raise ValueError(f"a branch of episode {parent} at step {t}: this file has {number} episodes")
            header = {
                "type": "episode",
                "format": TRAJECTORY_FORMAT,
                "episode": number,
                "branch_of": {"episode": parent, "t": t},
                "webshop_gym_version": __version__,
                "source": self.source,
                "started_at": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
                **self.metadata,
            }
            step["t"] = t + 1
            self._append(header, step)
            self._episodes, self._t, self._in_episode = number + 1, t + 1, True
            return number

    def _next_episode(self) -> int:
        # With the lock held: the number the next episode line gets. A file that already
        # holds episodes (a recorder appending to it) goes on from its count.
        if not self._numbered:
            self._numbered = True
            if self.path.exists():
                self._episodes = _count_episode_lines(self.path)
        return self._episodes

    def _append(self, *records: dict[str, Any]) -> None:
        # Called with the lock held: all the records, whole, or none (and OSError).
        if self._closed:
            raise ValueError(f"the recorder of {self.path} is closed")
        data = b"".join(_json_line(record) for record in records)
        self._size = append_whole_lines(self.path, data, self._size)

    def close(self) -> None:
        """Refuses further records (the file is already complete on disk)."""
        with self._lock:
            self._closed = True

    def __enter__(self) -> TrajectoryRecorder:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _count_episode_lines(path: Path) -> int:
    count = 0
    for _, raw, _ in _lines(path):
        try:
            record = json.loads(raw.decode("utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError):
            continue
        count += isinstance(record, dict) and record.get("type") == "episode"
    return count


def _fsync_directory(directory: Path) -> None:
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:  # e.g. platforms without directory file descriptors
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


@dataclass(frozen=True)
class Step:
    """One recorded action and what followed."""

    t: int
    action: Any
    observation: str
    reward: float
    terminated: bool
    truncated: bool
    info: dict[str, Any]
    seconds: float = 0.0
    """Since the episode began."""
    agent_output: str | None = None
    """What the agent answered besides the action (an LLM's raw text), where recorded."""

    def line(self, t: int | None = None) -> dict[str, Any]:
        """The step as a file line (`step_line`), numbered ``t`` (default: its own)."""
        line = step_line(
            self.action,
            self.observation,
            self.reward,
            self.terminated,
            self.truncated,
            self.info,
            self.seconds,
            self.agent_output,
        )
        line["t"] = self.t if t is None else t
        return line


@dataclass(frozen=True)
class Episode:
    """One recorded episode: its start line and its steps."""

    header: dict[str, Any]
    steps: tuple[Step, ...]

    @property
    def actions(self) -> list[Any]:
        return [step.action for step in self.steps]

    @property
    def total_reward(self) -> float:
        return float(sum(step.reward for step in self.steps))

    @property
    def finished(self) -> bool:
        return bool(self.steps) and (self.steps[-1].terminated or self.steps[-1].truncated)

    @property
    def branch_of(self) -> tuple[int, int] | None:
        """``(e, t)`` when this episode goes on from step t of episode e (its first t steps are e's)."""
        branch = self.header.get("branch_of")
        return None if branch is None else (int(branch["episode"]), int(branch["t"]))


@dataclass(frozen=True)
class TrajectoryFile:
    """The episodes of one file and whether a torn last line was dropped."""

    path: Path
    episodes: tuple[Episode, ...]
    dropped_torn_line: bool = False


@dataclass(frozen=True)
class _Compression:
    """How a file name's ending compresses: its name, how to pack bytes, how to open the file."""

    name: str
    compress: Callable[[bytes], bytes]
    open: Callable[[Path], io.BufferedIOBase]  # for reading


COMPRESSIONS = {
    # mtime 0: the same episodes give the same bytes
    ".gz": _Compression("gzip", lambda data: gzip.compress(data, mtime=0), gzip.GzipFile),
    # preset 9: its 64 MB window spans a whole recorded run
    ".xz": _Compression("xz", lambda data: lzma.compress(data, preset=9), lzma.LZMAFile),
}
"""File name endings `write_trajectories` compresses and `read_trajectories` decompresses."""


def _is_compressed_name(path: Path) -> bool:
    return path.suffix in COMPRESSIONS


def _open_binary(path: Path) -> io.BufferedIOBase:
    compression = COMPRESSIONS.get(path.suffix)
    return compression.open(path) if compression is not None else path.open("rb")


def _lines(path: Path) -> Iterator[tuple[int, bytes, bool]]:
    """(line number, raw bytes, whether the line ended with a newline)."""
    number = 0
    try:
        with _open_binary(path) as file:
            for number, line in enumerate(file, start=1):
                yield number, line.rstrip(b"\n"), line.endswith(b"\n")
    except (EOFError, gzip.BadGzipFile, zlib.error, lzma.LZMAError) as error:
        kind = COMPRESSIONS[path.suffix].name if path.suffix in COMPRESSIONS else "compressed"
        raise ValueError(
            f"{path}: not a whole {kind} file after line {number} ({error}); a compressed trajectory "
            f"file is written whole, so this one was cut short or is not {kind}: record it again"
        ) from None


def read_trajectories(path: str | os.PathLike[str]) -> TrajectoryFile:
    """Reads a trajectory file; every episode comes whole (a branch with its shared start).

    A last line cut short (no newline, and not valid JSON or not even whole UTF-8) is what
    a crash while writing leaves; it is skipped with a `RuntimeWarning` and reported in
    ``dropped_torn_line``. Any other line that is not a valid record raises `ValueError`
    naming the line and how to keep the lines before it.
    """
    path = Path(path)
    records: list[tuple[int, dict[str, Any]]] = []
    dropped = False
    for number, raw, complete in _lines(path):
        if not raw.strip():
            continue
        try:
            record = json.loads(raw.decode("utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError) as error:
            if complete:  # only the very last line can lack its newline
                reason = error.msg if isinstance(error, json.JSONDecodeError) else "not UTF-8"
                raise ValueError(
                    f"{path}:{number}: not a JSON line ({reason}); the file is damaged before its end "
                    "(e.g. a write cut short by a full disk, then more lines appended, as earlier "
                    f"recorders could). To keep the {number - 1} lines before it: "
                    f"head -n {number - 1} FILE > FIXED.jsonl"
                ) from None
            dropped = True
            warnings.warn(
                f"{path}:{number}: skipped a torn last line (a write cut short by a crash); "
                "the lines before it are read",
                RuntimeWarning,
                stacklevel=2,
            )
            continue
        if not isinstance(record, dict) or record.get("type") not in ("episode", "step"):
            raise ValueError(f"{path}:{number}: expected an object with type 'episode' or 'step'")
        records.append((number, record))

    episodes: list[Episode] = []
    header: dict[str, Any] | None = None
    steps: list[Step] = []
    for number, record in records:
        if record["type"] == "episode":
            if header is not None:
                episodes.append(Episode(header, tuple(steps)))
            header, steps = _episode_header(path, number, record, episodes)
            continue
        if header is None:
            raise ValueError(f"{path}:{number}: a step before any episode line")
        try:
            steps.append(
                Step(
                    t=int(record["t"]),
                    action=record["action"],
                    observation=record["observation"],
                    reward=float(record["reward"]),
                    terminated=bool(record["terminated"]),
                    truncated=bool(record["truncated"]),
                    info=record.get("info", {}),
                    seconds=float(record.get("seconds", 0.0)),
                    agent_output=record.get("agent_output"),
                )
            )
        except (KeyError, TypeError, ValueError) as error:
            raise ValueError(f"{path}:{number}: a step line lacks or garbles {error}") from None
    if header is not None:
        episodes.append(Episode(header, tuple(steps)))
    return TrajectoryFile(path, tuple(episodes), dropped)


def _episode_header(
    path: Path, number: int, record: dict[str, Any], earlier: list[Episode]
) -> tuple[dict[str, Any], list[Step]]:
    """An episode line's header (a branch's with what it shares) and the steps it starts with."""
    if record.get("format") not in READABLE_FORMATS:
        raise ValueError(
            f"{path}:{number}: unknown format {record.get('format')!r}; expected one of "
            f"{', '.join(READABLE_FORMATS)} (a newer webshop-gym wrote it? upgrade to read it)"
        )
    if "episode" in record and record["episode"] != len(earlier):
        raise ValueError(
            f"{path}:{number}: episode line numbered {record['episode']!r}, but it is episode "
            f"{len(earlier)} of the file; the file is damaged or two files were joined"
        )
    branch = record.get("branch_of")
    if branch is None:
        return record, []
    try:
        parent_number, t = int(branch["episode"]), int(branch["t"])
    except (KeyError, TypeError, ValueError):
        raise ValueError(
            f"{path}:{number}: branch_of must be {{'episode': e, 't': t}}, got {branch!r}"
        ) from None
    if not 0 <= parent_number < len(earlier):
        raise ValueError(
            f"{path}:{number}: a branch of episode {parent_number}, but there is no episode "
            f"{parent_number} before it; the file is damaged"
        )
    parent = earlier[parent_number]
    if not 0 <= t <= len(parent.steps):
        raise ValueError(
            f"{path}:{number}: a branch at step {t} of episode {parent_number}, which has "
            f"{len(parent.steps)} steps; the file is damaged"
        )
    inherited = {name: parent.header[name] for name in INHERITED_FIELDS if name in parent.header}
    return {**inherited, **record}, list(parent.steps[:t])


@dataclass(frozen=True)
class ReplayResult:
    """How a replay went: the rewards recorded and replayed, and every difference."""

    recorded_rewards: tuple[float, ...]
    replayed_rewards: tuple[float, ...]
    mismatches: tuple[str, ...] = field(default_factory=tuple)

    @property
    def matches(self) -> bool:
        return not self.mismatches

    @property
    def recorded_return(self) -> float:
        return float(sum(self.recorded_rewards))

    @property
    def replayed_return(self) -> float:
        return float(sum(self.replayed_rewards))


def replay(
    episode: Episode, catalog: str | os.PathLike[str] | None = None, max_mismatches: int = 10
) -> ReplayResult:
    """Re-runs ``episode`` through a fresh `WebShopEnv` built from its recorded arguments.

    Args:
        episode: A recorded episode (`read_trajectories`).
        catalog: Use this catalogue instead of the recorded one (e.g. the same data in
            another folder on another machine).
        max_mismatches: Stop comparing after this many differences.

    Returns:
        The recorded and replayed rewards and a description of each difference in
        observation, reward or end flags.
    """
    from webshop_gym.envs import WebShopEnv

    arguments = {name: episode.header["env"][name] for name in ENV_ARGUMENTS}
    if catalog is not None:
        arguments["catalog"] = os.fspath(catalog)
    env = WebShopEnv(**arguments)
    observation, _ = env.reset(
        seed=episode.header["seed"], options={"goal_index": episode.header["goal_index"]}
    )
    mismatches: list[str] = []
    if observation != episode.header["observation"]:
        mismatches.append("the first observation differs")
    if env.goal is None or env.goal.instruction_text != episode.header["goal"]["instruction"]:
        mismatches.append("the goal differs (another catalogue or goal order?)")
    replayed: list[float] = []
    for step in episode.steps:
        if len(mismatches) >= max_mismatches:
            break
        observation, reward, terminated, truncated, _ = env.step(step.action)
        replayed.append(float(reward))
        if observation != step.observation:
            mismatches.append(f"step {step.t} ({step.action!r}): the observation differs")
        if float(reward) != step.reward:
            mismatches.append(f"step {step.t} ({step.action!r}): reward {reward!r}, recorded {step.reward!r}")
        if (terminated, truncated) != (step.terminated, step.truncated):
            mismatches.append(
                f"step {step.t}: terminated/truncated {terminated}/{truncated}, "
                f"recorded {step.terminated}/{step.truncated}"
            )
    env.close()
    return ReplayResult(tuple(s.reward for s in episode.steps), tuple(replayed), tuple(mismatches))
