"""Files from a dataset repository on the Hugging Face Hub, through ``huggingface_hub``.

``--source hf:<org>/<dataset>[@<revision>]`` names the repository; the library does the
transfer (progress bar, a dropped connection resumed with an HTTP ``Range`` request, its
size check) and honours its own settings: ``HF_ENDPOINT`` (a mirror or a private Hub),
``HF_TOKEN`` or ``hf auth login`` (private and gated datasets), ``HF_HUB_OFFLINE``. A file
lands in a staging folder and is returned with the checksum the Hub states for it, the
ETag: the SHA-256 of a file kept in LFS or Xet storage, the git blob SHA-1 of a small file
kept in git. `fetch` first asks the Hub for that metadata without retries, so a wrong name
or no network is one quick, clear error instead of a minute of retries.

Needs the ``hf`` extra (``pip install "webshop-gym[hf]"``).
"""

from __future__ import annotations

import contextlib
import hashlib
import re
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = ["HubError", "HubFile", "HubRepo", "fetch", "is_hub_source", "matches_etag"]

PREFIX = "hf:"
_REPO_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*/[A-Za-z0-9][A-Za-z0-9._-]*")
_BLOCK = 1 << 20


class HubError(RuntimeError):
    """The Hub could not deliver a file; the message says why and what to do."""


def is_hub_source(source: str | None) -> bool:
    return source is not None and source.startswith(PREFIX)


@dataclass(frozen=True)
class HubRepo:
    """A dataset repository and revision, parsed from ``hf:<org>/<dataset>[@<revision>]``."""

    repo_id: str
    revision: str | None = None  # None: the default branch

    @classmethod
    def parse(cls, source: str) -> HubRepo:
        """Raises `ValueError` with the expected form when ``source`` is not one."""
        spec = source.removeprefix(PREFIX)
        repo_id, _, revision = spec.partition("@")
        if not _REPO_ID.fullmatch(repo_id) or ("@" in source and not revision):
            raise ValueError(
                f"--source {source!r} is not a Hub dataset: write hf:<org>/<dataset> or "
                "hf:<org>/<dataset>@<revision> (a branch, tag or commit)"
            )
        return cls(repo_id, revision or None)

    def __str__(self) -> str:
        return f"{PREFIX}{self.repo_id}" + (f"@{self.revision}" if self.revision else "")


@dataclass(frozen=True)
class HubFile:
    """A fetched file: where it is, and what the Hub says of it."""

    path: Path
    etag: str  # the Hub's checksum of the file (see `matches_etag`)
    commit: str  # the commit it came from


def matches_etag(path: Path, etag: str) -> bool | None:
    """Whether ``path`` has the checksum the Hub states; None if the ETag is no checksum.

    A 64-hex ETag is the SHA-256 of the content (LFS and Xet files), a 40-hex one the git
    blob SHA-1 (``sha1(b"blob <size>\\0" + content)``, files kept in git).
    """
    etag = etag.lower()
    if re.fullmatch(r"[0-9a-f]{64}", etag):
        digest = hashlib.sha256()
    elif re.fullmatch(r"[0-9a-f]{40}", etag):
        digest = hashlib.sha1(f"blob {path.stat().st_size}\0".encode(), usedforsecurity=False)
    else:
        return None
    with path.open("rb") as f:
        for block in iter(lambda: f.read(_BLOCK), b""):
            digest.update(block)
    return digest.hexdigest() == etag


def _hub() -> Any:
    try:
        import huggingface_hub
        import huggingface_hub.constants  # lazy attributes of the package otherwise
        import huggingface_hub.utils
    except ImportError:
        raise HubError(
            'a Hub source needs huggingface_hub: pip install "webshop-gym[hf]" (or use another --source)'
        ) from None
    return huggingface_hub


def _network_errors() -> tuple[type[BaseException], ...]:
    """Connection failures, whichever HTTP library this huggingface_hub uses (httpx or httpx2)."""
    errors: list[type[BaseException]] = [ConnectionError, TimeoutError]  # OfflineModeIsEnabled too
    for name in ("httpx", "httpx2"):
        module = sys.modules.get(name)
        if module is not None:
            errors.append(module.TransportError)
    return tuple(errors)


def _explain(error: BaseException, repo: HubRepo, filename: str, endpoint: str) -> HubError:
    """One message naming what went wrong and what to do."""
    from huggingface_hub import constants, errors

    where = f"{repo} ({endpoint})"
    if isinstance(error, errors.GatedRepoError):
        return HubError(
            f"{where} is gated: accept its terms on its page, then set HF_TOKEN (or run `hf auth login`)"
        )
    if isinstance(error, errors.RepositoryNotFoundError):
        return HubError(
            f"no dataset {repo.repo_id} on {endpoint} (or it is private): check the name after hf:, set "
            "HF_TOKEN (or run `hf auth login`) for a private one, or set HF_ENDPOINT for another Hub"
        )
    if isinstance(error, errors.RevisionNotFoundError):
        return HubError(
            f"{repo.repo_id} on {endpoint} has no revision {repo.revision!r}: name a branch, tag or commit"
        )
    if isinstance(error, errors.RemoteEntryNotFoundError):
        return HubError(
            f"{where} has no file {filename}: the dataset must hold the official files under their own names "
            "at its top level (or give another --source)"
        )
    if constants.HF_HUB_OFFLINE:
        return HubError(
            f"HF_HUB_OFFLINE is set, so {filename} cannot be fetched from {where}: unset it, or copy the "
            "files here and run `webshop-gym data download --source FOLDER`"
        )
    if isinstance(error, (*_network_errors(), errors.LocalEntryNotFoundError)):
        return HubError(
            f"cannot reach {endpoint} to fetch {filename} from {repo} ({error}). You seem to be offline, or "
            "the Hub is down: try again later, set HF_ENDPOINT to a mirror, or copy the files here and run "
            "`webshop-gym data download --source FOLDER`"
        )
    if isinstance(error, errors.HfHubHTTPError):
        status = error.response.status_code if error.response is not None else "?"
        return HubError(f"{where} answered HTTP {status} for {filename}: try again later ({error})")
    return HubError(f"fetching {filename} from {where} failed: {error}")


def fetch(
    repo: HubRepo,
    filename: str,
    staging: Path,
    *,
    progress: bool = True,
    endpoint: str | None = None,
) -> HubFile:
    """Downloads ``filename`` from the dataset ``repo`` into the folder ``staging``.

    Args:
        repo: The dataset and revision.
        filename: The file's path in the repository.
        staging: A folder of this module's own (the library keeps its metadata in
            ``staging/.cache``); the caller checks the file and moves it out.
        progress: Show the library's progress bar.
        endpoint: The Hub's address; None: ``HF_ENDPOINT``, else huggingface.co.

    Raises:
        HubError: No huggingface_hub, offline, no such dataset, revision or file, an
            HTTP error, or a transfer that broke off more often than the library retries.
    """
    hub = _hub()
    endpoint = (endpoint or hub.constants.ENDPOINT).rstrip("/")
    try:
        url = hub.hf_hub_url(
            repo.repo_id, filename, repo_type="dataset", revision=repo.revision, endpoint=endpoint
        )
        # One HEAD without retries: fast errors, and the commit and ETag of this very file.
        meta = hub.get_hf_file_metadata(url, endpoint=endpoint)
        if meta.commit_hash is None or meta.etag is None:
            raise HubError(
                f"{endpoint} does not answer like the Hugging Face Hub (no X-Repo-Commit or ETag header for "
                f"{filename}): check HF_ENDPOINT"
            )
        with _progress_bars(hub, progress):
            path = hub.hf_hub_download(
                repo.repo_id,
                filename,
                repo_type="dataset",
                revision=meta.commit_hash,  # exactly the version the HEAD described
                local_dir=staging,
                endpoint=endpoint,
            )
    except HubError:
        raise
    except Exception as error:
        if not isinstance(error, (OSError, ValueError, *_network_errors())):
            raise  # not a failed transfer but a bug: keep its traceback
        raise _explain(error, repo, filename, endpoint) from None  # the library's errors, one line each
    return HubFile(Path(path), meta.etag, meta.commit_hash)


@contextlib.contextmanager
def _progress_bars(hub: Any, show: bool) -> Iterator[None]:
    """The library's progress bars off while a quiet transfer runs (its switch is global)."""
    if show or hub.utils.are_progress_bars_disabled():
        yield
        return
    hub.utils.disable_progress_bars()
    try:
        yield
    finally:
        hub.utils.enable_progress_bars()
