"""Sessions: one env per visitor or API client, behind an unguessable id.

An id is ``secrets.token_urlsafe(32)`` (256 random bits): knowing one's own id says
nothing about anyone else's, and an id that is not in the store is simply not found
(404), never mapped to another session. Each session has its own lock, so two requests
for one session run one after the other, while different sessions run in parallel.

A server started with an instance name (``serve --instance b1``) prefixes its ids with it
(``b1.<token>``), so a reverse proxy in front of several server processes can send every
request for a session to the process that holds it (see the package README).

The store keeps at most ``max_sessions``; when full, sessions idle for longer than
``idle_timeout`` seconds make room (oldest first), and if none is idle the new one is
refused (`SessionLimitError`, served as 503). Sessions live in this process's memory.
"""

from __future__ import annotations

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

__all__ = ["Session", "SessionLimitError", "SessionStore", "new_session_id"]

# An optional instance name and a dot, then token_urlsafe(32): 43 characters of [A-Za-z0-9_-].
INSTANCE_PATTERN = re.compile(r"[A-Za-z0-9]{1,16}")
_ID_PATTERN = re.compile(r"(?:[A-Za-z0-9]{1,16}\.)?[A-Za-z0-9_-]{43}")


def new_session_id(instance: str | None = None) -> str:
    """A fresh unguessable id (256 bits from the OS's CSPRNG), after ``instance.`` if given."""
    token = secrets.token_urlsafe(32)
    return f"{instance}.{token}" if instance else token


class SessionLimitError(RuntimeError):
    """The store is full of active sessions."""


@dataclass(eq=False)
class Session:
    """One env and what goes with it: its lock, its recorder, its last answer."""

    id: str
    env: WebShopEnv
    recorder: TrajectoryRecorder | None = None
    lock: threading.Lock = field(default_factory=threading.Lock)
    last_used: float = field(default_factory=time.monotonic)
    observation: str = ""
    info: dict[str, Any] = field(default_factory=dict)
    started: bool = False

    def reset(self, seed: int | None, options: dict[str, Any] | None) -> tuple[str, dict[str, Any]]:
        """Resets the env (recording the episode start). Hold ``lock``."""
        observation, info = self.env.reset(seed=seed, options=options)
        if self.recorder is not None:
            self.recorder.record_reset(self.env, seed, observation, info)
        self.observation, self.info, self.started = observation, info, True
        return observation, info

    def step(self, action: Any) -> tuple[str, float, bool, bool, dict[str, Any]]:
        """Steps the env (recording the step). Hold ``lock``; call `reset` first."""
        observation, reward, terminated, truncated, info = self.env.step(action)
        if self.recorder is not None:
            self.recorder.record_step(action, observation, reward, terminated, truncated, info)
        self.observation, self.info = observation, info
        return observation, reward, terminated, truncated, info

    def close(self) -> None:
        if self.recorder is not None:
            self.recorder.close()
        self.env.close()


class SessionStore:
    """Thread-safe map from session id to `Session`, with a size limit and idle expiry."""

    def __init__(
        self,
        max_sessions: int,
        idle_timeout: float,
        clock: Callable[[], float] = time.monotonic,
        instance: str | None = None,
    ) -> None:
        if instance is not None and not INSTANCE_PATTERN.fullmatch(instance):
            raise ValueError(f"an instance name is 1-16 letters or digits, got {instance!r}")
        self.instance = instance
        self.max_sessions = max_sessions
        self.idle_timeout = idle_timeout
        self._clock = clock
        self._sessions: OrderedDict[str, Session] = OrderedDict()  # least recently used first
        self._lock = threading.Lock()

    def add(self, env: WebShopEnv, recorder: TrajectoryRecorder | None = None) -> Session:
        """Stores a new session for ``env`` under a fresh id.

        Raises:
            SessionLimitError: ``max_sessions`` sessions are live and none is idle.
        """
        with self._lock:
            self._drop_idle(need_room=False)
            if len(self._sessions) >= self.max_sessions:
                self._drop_idle(need_room=True)
            if len(self._sessions) >= self.max_sessions:
                raise SessionLimitError(
                    f"the server holds its limit of {self.max_sessions} active sessions; try again later"
                )
            session_id = new_session_id(self.instance)
            while session_id in self._sessions:  # 2**-256 odds, but never share an id
                session_id = new_session_id(self.instance)
            session = Session(session_id, env, recorder, last_used=self._clock())
            self._sessions[session_id] = session
            return session

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

    def remove(self, session_id: str) -> bool:
        """Closes and forgets a session; False if there was none."""
        with self._lock:
            session = self._sessions.pop(session_id, None)
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
        for session in sessions:
            with session.lock:
                session.close()

    def _drop_idle(self, need_room: bool) -> None:
        # Called with the store lock held. Least recently used sessions come first, so the
        # scan stops at the first session that is still active.
        now = self._clock()
        while self._sessions:
            session_id, session = next(iter(self._sessions.items()))
            if now - session.last_used < self.idle_timeout:
                return
            del self._sessions[session_id]
            session.close()
            if need_room and len(self._sessions) < self.max_sessions:
                return
