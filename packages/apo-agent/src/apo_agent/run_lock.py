"""One writer per run folder.

Two processes training into the same ``output_dir`` would truncate each other's metrics and
overwrite each other's checkpoints, so a run holds an advisory lock on ``<folder>/.lock`` for as
long as it writes there. The operating system drops the lock when the process ends, however it
ends, so a crashed run never leaves a stale lock behind. Locks are POSIX ``flock`` locks; where
``fcntl`` does not exist (Windows) folders are not locked.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from tqdm.auto import tqdm

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]

LOCK_FILE = ".lock"
_held: set[Path] = set()  # folders this process holds: a pipeline locks, then calls train()


class FolderInUseError(RuntimeError):
    """Another process is writing to the folder."""


@contextmanager
def locked_folder(folder: str | Path, role: str = "output_dir", wait: bool = False) -> Iterator[Path]:
    """Holds ``folder`` (created if missing) for this process.

    If another process holds it, raises :class:`FolderInUseError`, or with ``wait`` blocks until
    that process lets go (for a shared folder that the other process is filling for both).
    """
    folder = Path(folder).resolve()
    folder.mkdir(parents=True, exist_ok=True)
    if folder in _held or fcntl is None:
        yield folder
        return
    with open(folder / LOCK_FILE, "a+", encoding="utf-8") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            handle.seek(0)
            owner = handle.read().strip() or "another process"
            if not wait:
                raise FolderInUseError(
                    f"{folder} is in use by {owner}. Wait for that run to finish, or give this one "
                    f"another {role}."
                ) from None
            tqdm.write(f"waiting for {owner}, which is writing to {folder}")
            fcntl.flock(handle, fcntl.LOCK_EX)
        handle.truncate(0)
        handle.write(f"process {os.getpid()}\n")
        handle.flush()
        _held.add(folder)
        try:
            yield folder
        finally:
            _held.discard(folder)
            fcntl.flock(handle, fcntl.LOCK_UN)
