"""Moved to `apo_agent.runtime.lock`; this module keeps the old import path."""

from __future__ import annotations

from apo_agent.runtime.lock import LOCK_FILE, OWNER_FILE, FolderInUseError, locked_folder

__all__ = ["LOCK_FILE", "OWNER_FILE", "FolderInUseError", "locked_folder"]
