"""``webshop-gym data download``: the official WebShop files, fetched safely.

The files live on Google Drive (the ids of the official set-up script). Large files there
first answer with an HTML "can't scan this file for viruses" page whose form carries the
confirmation token; `download_file` follows it. Transfers resume: bytes land in
``<name>.part`` and a retry (after a dropped connection, or in a later run) asks only for
the rest with an HTTP ``Range`` request. A finished file is checked against its known
size and SHA-256 before it takes its real name; a mismatch deletes it and says so.

Known sizes and checksums: the sizes of ``items_shuffle_1000.json``,
``items_ins_v2_1000.json`` and ``items_human_ins.json`` are the ones the official data
documents; the SHA-256 of ``items_ins_v2_1000.json`` was computed from a copy of exactly
that size. The full files' sizes and checksums are not known here, so those files are
checked when ``webshop-gym data prepare`` reads them (it rejects truncated or corrupt JSON,
naming the file). ``--source DIR`` copies from a folder that already has the files;
``--source URL`` fetches ``URL/<file name>`` from a mirror; ``--source hf:<org>/<dataset>``
fetches from a dataset on the Hugging Face Hub through ``huggingface_hub`` (`hub`), and
checks each file against the checksum the Hub states for it as well.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import html
import html.parser
import http.client
import http.cookiejar
import os
import shutil
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from webshop_gym.data.hub import HubError, HubRepo, fetch, is_hub_source, matches_etag

__all__ = [
    "DRIVE_URL",
    "OFFICIAL_FILES",
    "SET_FILES",
    "STAND_INS",
    "ChecksumError",
    "DownloadError",
    "OfficialFile",
    "download_file",
    "download_files",
]

DRIVE_URL = "https://drive.usercontent.google.com/download"
_BLOCK = 1 << 20
_TIMEOUT_S = 60.0
_USER_AGENT = "webshop-gym-downloader (+https://github.com/princeton-nlp/WebShop data)"
_HUB_STAGING = ".hub-download"  # in the destination: the Hub client's files while a file arrives


@dataclass(frozen=True)
class OfficialFile:
    """One official data file: its name, Google Drive id and what is known of it."""

    name: str
    drive_id: str
    size: int | None  # bytes, where known
    sha256: str | None  # where known
    description: str


OFFICIAL_FILES: dict[str, OfficialFile] = {
    f.name: f
    for f in (
        OfficialFile(
            "items_shuffle_1000.json", "1EgHdxQ_YxqIQlvvq5iKlCrkEKR6-j0Ib", 4_467_013, None, "1,000 products"
        ),
        OfficialFile(
            "items_ins_v2_1000.json",
            "1IduG0xl544V_A_jv3tHXC0kyFi7PnyBu",
            147_099,
            "f88a36314a397b53b3d9c3fa5878e5f7b26d35019a51ec83fbedeca61a948f6f",
            "attributes and templated instructions of the 1,000 products",
        ),
        OfficialFile(
            "items_shuffle.json",
            "1A2whVgOO0euk5O13n2iYDM0bQRkkRduB",
            None,
            None,
            "1,181,436 products (several GB)",
        ),
        OfficialFile(
            "items_ins_v2.json", "1s2j6NgHljiZzQNL3veZaAiyW_qDEgBNi", None, None, "attributes of all products"
        ),
        OfficialFile(
            "items_human_ins.json",
            "14Kb5SPBk_jfdLZ_CDBNitW98QLDlKR5O",
            5_137_548,
            None,
            "12,087 human instructions",
        ),
    )
}
# Files that stand in for an official one where a --source folder has them instead: the
# human instructions of the 1k set's products only (the 1k copy beside this project ships
# that), which give the 1k set the same goals as the full file. Not checked (no official
# size or checksum exists for them).
STAND_INS: dict[str, OfficialFile] = {
    "items_human_ins.json": OfficialFile(
        "items_human_ins_1000.json",
        "",
        None,
        None,
        "the human instructions of the 1,000 products (a subset of items_human_ins.json)",
    ),
}
SET_FILES: dict[str, tuple[str, ...]] = {
    "1k": ("items_shuffle_1000.json", "items_ins_v2_1000.json", "items_human_ins.json"),
    "full": ("items_shuffle.json", "items_ins_v2.json", "items_human_ins.json"),
}


class DownloadError(RuntimeError):
    """A file could not be fetched; the message says why and what to do."""


class ChecksumError(DownloadError):
    """A fetched file is not the expected one (size or SHA-256); it has been deleted."""


# --- Google Drive's confirmation page ----------------------------------------------------


class _FormParser(html.parser.HTMLParser):
    """Collects the download form (action and hidden inputs) and any confirm links."""

    def __init__(self) -> None:
        super().__init__()
        self.action: str | None = None
        self.fields: dict[str, str] = {}
        self.links: list[str] = []
        self.title = ""
        self._in_title = False
        self._in_form = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = {k: v or "" for k, v in attrs}
        if tag == "form" and self.action is None:
            self.action, self._in_form = values.get("action", ""), True
        elif tag == "input" and self._in_form and values.get("name"):
            self.fields[values["name"]] = values.get("value", "")
        elif tag == "a" and "confirm=" in values.get("href", ""):
            self.links.append(values["href"])
        elif tag == "title":
            self._in_title = True

    def handle_endtag(self, tag: str) -> None:
        if tag == "form":
            self._in_form = False
        elif tag == "title":
            self._in_title = False

    def handle_data(self, data: str) -> None:
        if self._in_title:
            self.title += data


def _confirmed_url(page: str, page_url: str, spec: OfficialFile) -> str:
    """The URL Drive's confirmation page leads to; `DownloadError` if it has none."""
    parser = _FormParser()
    parser.feed(page)
    if parser.action is not None and parser.fields:
        action = urllib.parse.urljoin(page_url, parser.action)
        return f"{action}?{urllib.parse.urlencode(parser.fields)}"
    if parser.links:
        return urllib.parse.urljoin(page_url, html.unescape(parser.links[0]))
    raise DownloadError(
        f"Google Drive answered with a page instead of {spec.name} ({parser.title.strip() or 'no title'}): "
        f"the file may be over its download quota or moved. Fetch it in a browser from "
        f"https://drive.google.com/uc?id={spec.drive_id}, put it in a folder and run "
        f"`webshop-gym data download --source FOLDER`."
    )


# --- transfers -----------------------------------------------------------------------------


def _opener() -> urllib.request.OpenerDirector:
    # Drive ties the confirmation to a cookie on some paths, so keep them.
    return urllib.request.build_opener(urllib.request.HTTPCookieProcessor(http.cookiejar.CookieJar()))


def _offline_error(url: str, error: BaseException, spec: OfficialFile) -> DownloadError:
    host = urllib.parse.urlsplit(url).netloc
    reason = getattr(error, "reason", error)
    return DownloadError(
        f"cannot reach {host} to fetch {spec.name} ({reason}). You seem to be offline, or the host is down. "
        f"Download the official files on a machine with internet access (Google Drive id {spec.drive_id}), "
        f"copy them here and run `webshop-gym data download --source FOLDER`, or use `--source URL` for a "
        f"mirror."
    )


def _start(url: str, offset: int, opener: urllib.request.OpenerDirector) -> http.client.HTTPResponse:
    headers = {"User-Agent": _USER_AGENT}
    if offset:
        headers["Range"] = f"bytes={offset}-"
    return opener.open(urllib.request.Request(url, headers=headers), timeout=_TIMEOUT_S)  # type: ignore[no-any-return]


def _content_total(response: http.client.HTTPResponse, offset: int) -> int | None:
    """The full size of the file as the response states it, if it does."""
    content_range = response.headers.get("Content-Range", "")
    if "/" in content_range and not content_range.endswith("*"):
        return int(content_range.rsplit("/", 1)[1])
    length = response.headers.get("Content-Length")
    return offset + int(length) if length is not None else None


def _range_start(response: http.client.HTTPResponse) -> int | None:
    content_range = response.headers.get("Content-Range", "")  # "bytes 100-199/200"
    try:
        return int(content_range.split()[1].split("-")[0])
    except (IndexError, ValueError):
        return None


def _transfer(
    url: str, spec: OfficialFile, part: Path, opener: urllib.request.OpenerDirector, progress: bool
) -> None:
    """Appends the rest of the file to ``part``; raises on a dropped connection (caller retries)."""
    from tqdm.auto import tqdm

    offset = part.stat().st_size if part.exists() else 0
    if spec.size is not None and offset == spec.size:
        return  # a previous run got every byte; only the checks are left
    try:
        response = _start(url, offset, opener)
        if response.headers.get_content_type() == "text/html":
            # Google Drive's "can't scan this file" page: follow its form, keep the offset.
            with response:
                page = response.read().decode("utf-8", "replace")
            response = _start(_confirmed_url(page, response.geturl(), spec), offset, opener)
            if response.headers.get_content_type() == "text/html":
                response.close()
                raise DownloadError(_confirmed_url_failure(spec))
    except urllib.error.HTTPError as error:
        if error.code == 416 and offset:  # nothing left to send, or the part is bad
            if spec.size is None or offset > spec.size:
                part.unlink()  # start afresh next attempt
            return
        raise DownloadError(f"{url} answered HTTP {error.code} {error.reason} for {spec.name}") from None
    with contextlib.closing(response):
        if response.status == 206:
            if _range_start(response) != offset:
                raise DownloadError(
                    f"{url} resumed {spec.name} at the wrong place; delete {part} and try again"
                )
        elif offset:  # the server ignored the Range header: start again from the first byte
            offset = 0
            part.unlink()
        total = _content_total(response, offset)
        if spec.size is not None and total is not None and total != spec.size:
            raise ChecksumError(
                f"{url} offers {spec.name} with {total:,} bytes, but the official file has {spec.size:,}; "
                "the mirror holds another file"
            )
        bar = tqdm(
            total=total or spec.size,
            initial=offset,
            desc=spec.name,
            unit="B",
            unit_scale=True,
            unit_divisor=1024,
            disable=not progress,
        )
        with part.open("ab") as out, bar:
            while True:
                block = response.read(_BLOCK)
                if not block:
                    break
                out.write(block)
                bar.update(len(block))
            out.flush()
            os.fsync(out.fileno())
        got = part.stat().st_size
        if total is not None and got < total:
            raise ConnectionError(f"the connection closed after {got:,} of {total:,} bytes")


def _confirmed_url_failure(spec: OfficialFile) -> str:
    return (
        f"Google Drive did not release {spec.name} after its confirmation page. Fetch it in a browser from "
        f"https://drive.google.com/uc?id={spec.drive_id} and run `webshop-gym data download --source FOLDER`."
    )


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(_BLOCK), b""):
            digest.update(block)
    return digest.hexdigest()


def _verify(path: Path, spec: OfficialFile, origin: str, origin_is_folder: bool = False) -> None:
    """Size and SHA-256 against what is known; deletes ``path`` and raises on a mismatch."""
    size = path.stat().st_size
    problem = None
    if spec.size is not None and size != spec.size:
        problem = f"it has {size:,} bytes, the official file {spec.size:,}"
    elif spec.sha256 is not None and (digest := _sha256(path)) != spec.sha256:
        problem = f"its SHA-256 is {digest}, the official file's {spec.sha256}"
    if problem is not None:
        path.unlink()
        kept = f"{origin} is untouched" if origin_is_folder else "nothing was kept"
        raise ChecksumError(
            f"{spec.name} from {origin} differs from the official file: {problem} ({kept}). If it is a "
            "copy you trust (a rebuilt or trimmed file, like the 1k set beside this project), run the "
            "command again with --no-verify; otherwise fetch the official file (leave out --source, or "
            "give another one)."
        )


def _is_verified(path: Path, spec: OfficialFile) -> bool:
    if not path.is_file():
        return False
    if spec.size is not None and path.stat().st_size != spec.size:
        return False
    return spec.sha256 is None or _sha256(path) == spec.sha256


def _from_hub(
    spec: OfficialFile,
    repo: HubRepo,
    target: Path,
    *,
    progress: bool,
    endpoint: str | None,
    say: Callable[[str], None],
) -> Path:
    """Fetches ``spec`` from a Hub dataset; checks it against the Hub's checksum and the official one."""
    staging = target.parent / _HUB_STAGING
    say(f"fetching {spec.name} from {repo}")
    try:
        got = fetch(repo, spec.name, staging, progress=progress, endpoint=endpoint)
        origin = f"{repo} (commit {got.commit[:12]})"
        if matches_etag(got.path, got.etag) is False:
            got.path.unlink()
            raise ChecksumError(
                f"{spec.name} from {origin} differs from the checksum the Hub states for it ({got.etag}): it "
                "was damaged on the way and is deleted; run the command again"
            )
        _verify(got.path, spec, origin)
        os.replace(got.path, target)
    except HubError as error:
        raise DownloadError(str(error)) from None
    finally:
        shutil.rmtree(staging, ignore_errors=True)  # ours alone: the library's metadata and locks
    return target


def download_file(
    spec: OfficialFile,
    dest_dir: str | os.PathLike[str],
    *,
    source: str | None = None,
    drive_url: str = DRIVE_URL,
    hub_endpoint: str | None = None,
    retries: int = 5,
    verify: bool = True,
    progress: bool = True,
    log: Callable[[str], None] | None = None,
) -> Path:
    """Fetches one file into ``dest_dir`` (skipped if a verified copy is already there).

    Args:
        spec: The file.
        dest_dir: Where it goes (created if missing).
        source: None for Google Drive; a folder to copy from; a mirror URL (the file is
            fetched from ``source/<name>``); or ``hf:<org>/<dataset>[@<revision>]``, a
            dataset on the Hugging Face Hub (needs the ``hf`` extra).
        drive_url: Google Drive's download endpoint (tests point it at a local server).
        hub_endpoint: The Hub's address for an ``hf:`` source (None: ``HF_ENDPOINT``, else
            huggingface.co).
        retries: How often a dropped transfer is resumed before giving up (Drive and
            mirrors; huggingface_hub retries on its own).
        verify: Check the known size and SHA-256 (off: accept another version of the
            file, e.g. a rebuilt copy; transfers are still checked for completeness).
        progress: Show a progress bar.
        log: Where to say what happens (e.g. `print`).

    Returns:
        The file's path.

    Raises:
        DownloadError: Offline, the host refused, or retries ran out (the partial file is
            kept, so the next run resumes; from the Hub the file starts over).
        ChecksumError: The file is not the official one, or not the one the Hub states
            (it is deleted).
        FileNotFoundError: ``source`` is a folder without the file.
        ValueError: ``source`` starts with ``hf:`` but names no dataset.
    """
    say = log or (lambda message: None)
    hub_repo = HubRepo.parse(source) if source is not None and is_hub_source(source) else None
    if not verify:
        spec = dataclasses.replace(spec, size=None, sha256=None)
    dest = Path(dest_dir).expanduser()
    dest.mkdir(parents=True, exist_ok=True)
    target = dest / spec.name
    if _is_verified(target, spec):
        say(f"{target} is already there")
        return target
    if hub_repo is not None:
        return _from_hub(spec, hub_repo, target, progress=progress, endpoint=hub_endpoint, say=say)
    part = dest / f"{spec.name}.part"

    if source is not None and not urllib.parse.urlsplit(source).scheme.startswith("http"):
        folder = Path(source).expanduser()
        origin = folder / spec.name
        if not origin.is_file():
            raise FileNotFoundError(f"{origin} does not exist: --source {source} must hold {spec.name}")
        say(f"copying {origin}")
        shutil.copyfile(origin, part)
        _verify(part, spec, str(origin), origin_is_folder=True)
        os.replace(part, target)
        return target

    if source is not None:
        url = f"{source.rstrip('/')}/{urllib.parse.quote(spec.name)}"
    else:
        query = {"id": spec.drive_id, "export": "download", "confirm": "t"}
        url = f"{drive_url}?{urllib.parse.urlencode(query)}"
    opener = _opener()
    say(f"fetching {spec.name} from {urllib.parse.urlsplit(url).netloc}")
    for attempt in range(retries + 1):
        try:
            _transfer(url, spec, part, opener, progress)
            break
        except urllib.error.URLError as error:
            if attempt == retries or not part.exists():
                raise _offline_error(url, error, spec) from None
        except (ConnectionError, http.client.HTTPException, TimeoutError) as error:
            if attempt == retries:
                kept = part.stat().st_size if part.exists() else 0
                raise DownloadError(
                    f"fetching {spec.name} from {urllib.parse.urlsplit(url).netloc} failed "
                    f"{retries + 1} times ({error}); {kept:,} bytes are kept in {part}, so running the "
                    "command again resumes"
                ) from None
        say(f"the transfer of {spec.name} broke off; resuming (attempt {attempt + 2} of {retries + 1})")
        time.sleep(min(0.2 * 2**attempt, 5.0))
    if not part.exists():
        raise DownloadError(f"{url} sent no data for {spec.name}")
    _verify(part, spec, url)
    os.replace(part, target)
    return target


def download_files(
    names: Iterable[str],
    dest_dir: str | os.PathLike[str],
    *,
    source: str | None = None,
    files: dict[str, OfficialFile] | None = None,
    **kwargs: object,
) -> list[Path]:
    """Fetches several files (names from `OFFICIAL_FILES`, or ``files``) with `download_file`."""
    catalogue = files or OFFICIAL_FILES
    return [download_file(catalogue[name], dest_dir, source=source, **kwargs) for name in names]  # type: ignore[arg-type]


def files_of(sets: Sequence[str]) -> list[str]:
    """The file names of official settings (``"1k"``, ``"full"``), each once."""
    names: list[str] = []
    for name in sets:
        names.extend(n for n in SET_FILES[name] if n not in names)
    return names
