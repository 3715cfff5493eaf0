"""Sessions: one env per visitor or API client, behind an unguessable id.

An id is ``secrets.token_urlsafe(32)`` (256 random bits): knowing one's own id says
nothing about anyone else's, and an id that is not in the store is simply not found
(404), never mapped to another session. Each session has its own lock, so two requests
for one session run one after the other, while different sessions run in parallel.

A server started with an instance name (``serve --instance b1``) prefixes its ids with it
(``b1.<token>``), so a reverse proxy in front of several server processes can send every
request for a session to the process that holds it (see the package README).

The store keeps at most ``max_sessions``. When it is full, sessions that were never used
(an API env never reset) make room first, oldest first, then sessions idle for longer
than ``idle_timeout`` seconds (least recently used first); if none can go, the new one is
refused (`SessionLimitError`, served as 503 with ``Retry-After``: when the first session
can go). Each session may name its owner (the client's address); with ``max_per_owner``
set, an owner at its limit makes room from its own least recently used session, so one
client cannot fill the store. Sessions live in this process's memory.

A session whose trajectory record cannot be written (a full disk) does not move: `Session.reset`
and `Session.step` put the env back where it was and raise `RecordingError`, so what a
visitor or client was shown and what the log holds never part. `RateLimiter` bounds how
often one client may do what costs the server more than a page.
"""

from __future__ import annotations

import contextlib
import math
import re
import secrets
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from webshop_gym.envs import WebShopEnv
from webshop_gym.trajectories import TrajectoryRecorder
from webshop_gym.web.snapshots import episode_snapshot, restore_episode

__all__ = ["RateLimiter", "RecordingError", "Session", "SessionLimitError", "SessionStore", "new_session_id"]

# An optional instance name and a dot, then token_urlsafe(32): 43 characters of [A-Za-z0-9_-].
INSTANCE_PATTERN = re.compile(r"[A-Za-z0-9]{1,16}")
_ID_PATTERN = re.compile(r"(?:[A-Za-z0-9]{1,16}\.)?[A-Za-z0-9_-]{43}")


def new_session_id(instance: str | None = None) -> str:
    """A fresh unguessable id (256 bits from the OS's CSPRNG), after ``instance.`` if given."""
    token = secrets.token_urlsafe(32)
    return f"{instance}.{token}" if instance else token


class SessionLimitError(RuntimeError):
    """The store is full of active sessions; ``retry_after`` says in how many seconds one can go."""

    def __init__(self, message: str, retry_after: int = 1) -> None:
        super().__init__(message)
        self.retry_after = retry_after


class RecordingError(RuntimeError):
    """A session's record could not be written; the env was put back as it was before.

    ``reason`` is the system's words (``"No space left on device"``), without paths.
    """

    def __init__(self, error: OSError) -> None:
        self.reason = error.strerror or type(error).__name__
        self.errno = error.errno
        super().__init__(f"the trajectory record could not be written: {self.reason}")


@dataclass(eq=False)
class Session:
    """One env and what goes with it: its lock, its recorder, its last answer.

    ``make_recorder`` makes the trajectory recorder at the first reset, so a session that
    never plays leaves no file behind. ``used`` is set by the first reset (or by whoever
    adds a session for someone who already acted); the store drops unused sessions first.
    ``visit`` holds what the web shop keeps of a visitor's pages (`webshop_gym.web.visits`).

    When a record cannot be written, `reset` and `step` restore the env to where it was
    (`webshop_gym.web.snapshots.restore_episode`) and raise `RecordingError`: the session is as if the
    call never came.
    """

    id: str
    env: WebShopEnv
    recorder: TrajectoryRecorder | None = None
    lock: threading.Lock = field(default_factory=threading.Lock)
    last_used: float = field(default_factory=time.monotonic)
    observation: str = ""
    info: dict[str, Any] = field(default_factory=dict)
    started: bool = False
    owner: str | None = None
    used: bool = False
    make_recorder: Callable[[], TrajectoryRecorder | None] | None = None
    visit: Any = None

    def reset(self, seed: int | None, options: dict[str, Any] | None) -> tuple[str, dict[str, Any]]:
        """Resets the env (recording the episode start). Hold ``lock``.

        Raises:
            RecordingError: The record failed; the env is back where it was.
        """
        before = self._snapshot() if self.recorder is not None or self.make_recorder is not None else None
        observation, info = self.env.reset(seed=seed, options=options)
        if self.recorder is None and self.make_recorder is not None:
            self.recorder = self.make_recorder()
        if self.recorder is not None:
            try:
                self.recorder.record_reset(self.env, seed, observation, info)
            except OSError as error:
                self._restore(before)
                raise RecordingError(error) from error
        self.observation, self.info, self.started, self.used = observation, info, True, True
        return observation, info

    def step(
        self, action: Any, branch_of: tuple[int, int] | None = None
    ) -> tuple[str, float, bool, bool, dict[str, Any]]:
        """Steps the env (recording the step). Hold ``lock``; call `reset` first.

        Args:
            action: The action.
            branch_of: ``(e, t)`` when the env was restored to step t of recorded episode e
                (an earlier page): the step is recorded as a branch of that episode
                (`TrajectoryRecorder.record_step`).

        Raises:
            RecordingError: The record failed; the env is back where it was.
        """
        before = self._snapshot() if self.recorder is not None else None
        observation, reward, terminated, truncated, info = self.env.step(action)
        if self.recorder is not None:
            try:
                self.recorder.record_step(
                    action, observation, reward, terminated, truncated, info, branch_of=branch_of
                )
            except OSError as error:
                self._restore(before)
                raise RecordingError(error) from error
        self.observation, self.info = observation, info
        return observation, reward, terminated, truncated, info

    def _snapshot(self) -> dict[str, Any] | None:
        try:
            return episode_snapshot(self.env)
        except ValueError:  # an episode on a goal of the caller's own (no index) has none
            return None

    def _restore(self, snapshot: dict[str, Any] | None) -> None:
        if snapshot is not None:
            restore_episode(self.env, snapshot)

    def close(self) -> None:
        if self.recorder is not None:
            self.recorder.close()
            with contextlib.suppress(OSError):  # a file that got no line is no trajectory
                if self.recorder.path.stat().st_size == 0:
                    self.recorder.path.unlink()
        self.env.close()


class RateLimiter:
    """Per-client token buckets: each client may do ``per_minute`` costly things a minute.

    A client's bucket holds up to ``per_minute`` tokens (a burst) and refills at
    ``per_minute / 60`` a second; each costly request takes one. At most ``max_clients``
    buckets are kept (the least recently used go first: a full bucket loses nothing).

    Example:
        >>> now = [0.0]
        >>> limiter = RateLimiter(per_minute=2, clock=lambda: now[0])
        >>> [limiter.take("a") for _ in range(3)], limiter.take("b")
        ([0.0, 0.0, 30.0], 0.0)
        >>> now[0] = 30.0
        >>> limiter.take("a")
        0.0
    """

    def __init__(
        self, per_minute: int, clock: Callable[[], float] = time.monotonic, max_clients: int = 100_000
    ) -> None:
        if per_minute < 1:
            raise ValueError(f"per_minute must be at least 1, got {per_minute}")
        self.per_minute = per_minute
        self._rate = per_minute / 60.0
        self._clock = clock
        self._max_clients = max_clients
        self._buckets: OrderedDict[str, tuple[float, float]] = OrderedDict()  # client -> (tokens, when)
        self._lock = threading.Lock()

    def take(self, client: str) -> float:
        """Takes a token for ``client``: 0.0 if it had one, else the seconds until it has."""
        with self._lock:
            now = self._clock()
            tokens, when = self._buckets.pop(client, (float(self.per_minute), now))
            tokens = min(float(self.per_minute), tokens + (now - when) * self._rate)
            if tokens >= 1.0:
                tokens -= 1.0
                wait = 0.0
            else:
                wait = (1.0 - tokens) / self._rate
            self._buckets[client] = (tokens, now)
            while len(self._buckets) > self._max_clients:
                self._buckets.popitem(last=False)
            return wait


class SessionStore:
    """Thread-safe map from session id to `Session`, with a size limit and idle expiry."""

    def __init__(
        self,
        max_sessions: int,
        idle_timeout: float,
        clock: Callable[[], float] = time.monotonic,
        instance: str | None = None,
        max_per_owner: int | None = None,
    ) -> None:
        if instance is not None and not INSTANCE_PATTERN.fullmatch(instance):
            raise ValueError(f"an instance name is 1-16 letters or digits, got {instance!r}")
        self.instance = instance
        self.max_sessions = max_sessions
        self.idle_timeout = idle_timeout
        self.max_per_owner = max_per_owner
        self._clock = clock
        self._sessions: OrderedDict[str, Session] = OrderedDict()  # least recently used first
        self._unused: OrderedDict[str, None] = OrderedDict()  # added unused, oldest first
        self._per_owner: dict[str, int] = {}
        self._lock = threading.Lock()

    def add(
        self,
        env: WebShopEnv,
        recorder: TrajectoryRecorder | None = None,
        *,
        owner: str | None = None,
        used: bool = False,
    ) -> Session:
        """Stores a new session for ``env`` under a fresh id.

        Args:
            env: The session's env.
            recorder: Its trajectory recorder, if it has one already.
            owner: Who asked for it (the client's address), for ``max_per_owner``.
            used: Whether it is in use from the start (a visitor who already acted).

        Raises:
            SessionLimitError: ``max_sessions`` sessions are live and none can go.
        """
        closing: list[Session] = []
        try:
            with self._lock:
                closing += self._drop_idle(need_room=False)
                if (
                    owner is not None
                    and self.max_per_owner is not None
                    and self._per_owner.get(owner, 0) >= self.max_per_owner
                ):
                    closing += self._drop_oldest_of(owner)
                if len(self._sessions) >= self.max_sessions:
                    closing += self._drop_unused()
                if len(self._sessions) >= self.max_sessions:
                    closing += self._drop_idle(need_room=True)
                if len(self._sessions) >= self.max_sessions:
                    raise SessionLimitError(
                        f"the server holds its limit of {self.max_sessions} active sessions; try again later",
                        retry_after=self._seconds_until_one_can_go(),
                    )
                session_id = new_session_id(self.instance)
                while session_id in self._sessions:  # 2**-256 odds, but never share an id
                    session_id = new_session_id(self.instance)
                session = Session(session_id, env, recorder, last_used=self._clock(), owner=owner, used=used)
                self._sessions[session_id] = session
                if not used:
                    self._unused[session_id] = None
                if owner is not None:
                    self._per_owner[owner] = self._per_owner.get(owner, 0) + 1
                return session
        finally:
            for dropped in closing:  # outside the store lock: closing may wait for a request
                with dropped.lock:
                    dropped.close()

    def get(self, session_id: str) -> Session | None:
        """The session with this id, or None; marks it as used."""
        if not _ID_PATTERN.fullmatch(session_id):
            return None
        with self._lock:
            session = self._sessions.get(session_id)
            if session is not None:
                session.last_used = self._clock()
                self._sessions.move_to_end(session_id)
            return session

    def sessions_of(self, owner: str | None) -> list[Session]:
        """``owner``'s live (not idle-expired) sessions, least recently used first."""
        with self._lock:
            now = self._clock()
            return [
                session
                for session in self._sessions.values()
                if session.owner == owner and now - session.last_used < self.idle_timeout
            ]

    def remove(self, session_id: str) -> bool:
        """Closes and forgets a session; False if there was none."""
        with self._lock:
            session = self._forget(session_id)
        if session is None:
            return False
        with session.lock:
            session.close()
        return True

    def __len__(self) -> int:
        with self._lock:
            return len(self._sessions)

    def close_all(self) -> None:
        with self._lock:
            sessions = list(self._sessions.values())
            self._sessions.clear()
            self._unused.clear()
            self._per_owner.clear()
        for session in sessions:
            with session.lock:
                session.close()

    # -- with the store lock held ---------------------------------------------------------

    def _forget(self, session_id: str) -> Session | None:
        session = self._sessions.pop(session_id, None)
        self._unused.pop(session_id, None)
        if session is not None and session.owner is not None:
            left = self._per_owner[session.owner] - 1
            if left:
                self._per_owner[session.owner] = left
            else:
                del self._per_owner[session.owner]
        return session

    def _drop_idle(self, need_room: bool) -> list[Session]:
        # Least recently used sessions come first, so the scan stops at the first session
        # that is still active.
        dropped = []
        now = self._clock()
        while self._sessions:
            session_id, session = next(iter(self._sessions.items()))
            if now - session.last_used < self.idle_timeout:
                break
            dropped.append(self._forget(session_id))
            if need_room and len(self._sessions) < self.max_sessions:
                break
        return [session for session in dropped if session is not None]

    def _drop_unused(self) -> list[Session]:
        # One never-used session, the oldest (those used since are skipped on the way).
        while self._unused:
            session_id = next(iter(self._unused))
            session = self._sessions.get(session_id)
            if session is not None and not session.used:
                return [self._forget(session_id)]  # type: ignore[list-item]
            self._unused.pop(session_id)
        return []

    def _drop_oldest_of(self, owner: str) -> list[Session]:
        for session_id, session in self._sessions.items():
            if session.owner == owner:
                return [self._forget(session_id)]  # type: ignore[list-item]
        return []

    def _seconds_until_one_can_go(self) -> int:
        if not self._sessions:
            return 1
        oldest = next(iter(self._sessions.values()))
        return max(1, math.ceil(oldest.last_used + self.idle_timeout - self._clock()))
