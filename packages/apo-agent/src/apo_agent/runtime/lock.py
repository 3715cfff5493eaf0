"""One writer per run folder.

Two processes training into the same ``output_dir`` would truncate each other's metrics and
overwrite each other's checkpoints, so a run holds a lock on ``<folder>/.lock`` for as long as
it writes there. The lock is the operating system's (``filelock``: ``flock`` on POSIX, ``msvcrt``
locking on Windows), so it goes with its process however the process ends, and a crashed run
never leaves a stale lock behind. The holder names itself in ``<folder>/.lock.owner``, so a
refused run can say who holds the folder.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from filelock import FileLock, Timeout
from tqdm.auto import tqdm

LOCK_FILE = ".lock"
OWNER_FILE = ".lock.owner"
_held: set[Path] = set()  # folders this process holds: a pipeline locks, then calls train()


class FolderInUseError(RuntimeError):
    """Another process is writing to the folder."""


def _owner(folder: Path) -> str:
    try:
        return (folder / OWNER_FILE).read_text(encoding="utf-8").strip() or "another process"
    except OSError:
        return "another process"


@contextmanager
def locked_folder(folder: str | Path, role: str = "output_dir", wait: bool = False) -> Iterator[Path]:
    """Holds ``folder`` (created if missing) for this process.

    If another process holds it, raises :class:`FolderInUseError`, or with ``wait`` blocks until
    that process lets go (for a shared folder that the other process is filling for both).
    """
    folder = Path(folder).resolve()
    folder.mkdir(parents=True, exist_ok=True)
    if folder in _held:
        yield folder
        return
    lock = FileLock(folder / LOCK_FILE)
    try:
        lock.acquire(timeout=0)
    except Timeout:
        owner = _owner(folder)
        if not wait:
            raise FolderInUseError(
                f"{folder} is in use by {owner}. Wait for that run to finish, or give this one "
                f"another {role}."
            ) from None
        tqdm.write(f"waiting for {owner}, which is writing to {folder}")
        lock.acquire()
    try:
        (folder / OWNER_FILE).write_text(f"process {os.getpid()}\n", encoding="utf-8")
        _held.add(folder)
        yield folder
    finally:
        _held.discard(folder)
        lock.release()
