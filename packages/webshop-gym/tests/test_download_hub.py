"""`webshop-gym data download --source hf:<org>/<dataset>` against a local server that speaks
the Hub's file API (HEAD and GET ``/datasets/<repo>/resolve/<revision>/<file>``, as
huggingface_hub's `hf_hub_download` calls them), at 127.0.0.1: no Hub is reachable here."""

from __future__ import annotations

import hashlib
import http.server
import os
import socket
import subprocess
import sys
import threading
import time
import urllib.parse
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from webshop_gym.cli import main
from webshop_gym.data import download
from webshop_gym.data.download import SET_FILES, ChecksumError, DownloadError, OfficialFile, download_file
from webshop_gym.data.hub import HubRepo, matches_etag

PAYLOAD = bytes(range(256)) * 4096 + b"the end"  # ~1 MB, every byte value
REPO = "webshop-test/official-files"
COMMIT = "0123456789abcdef0123456789abcdef01234567"


def _sha256(content: bytes) -> str:
    return hashlib.sha256(content).hexdigest()


def _git_sha1(content: bytes) -> str:
    return hashlib.sha1(b"blob %d\0" % len(content) + content).hexdigest()


@dataclass
class Hub:
    """What the fake Hub holds and does; tests change it between calls."""

    files: dict[str, bytes] = field(default_factory=dict)  # file name -> content, in REPO
    etags: dict[str, str] = field(default_factory=dict)  # file name -> stated ETag (default: SHA-256)
    gated: bool = False
    hub_headers: bool = True  # False: answer like a plain web server (no X-Repo-Commit)
    cut_after: int | None = None  # send only this many bytes of a GET's body, then hang up
    cuts_left: int = 0
    requests: list[tuple[str, str, str | None]] = field(default_factory=list)  # (method, path, Range)


class FakeHub(http.server.BaseHTTPRequestHandler):
    hub: Hub

    def log_message(self, format: str, *args: object) -> None:
        pass

    def do_HEAD(self) -> None:
        self._answer(body=False)

    def do_GET(self) -> None:
        self._answer(body=True)

    def _answer(self, body: bool) -> None:
        hub = self.hub
        hub.requests.append((self.command, self.path, self.headers.get("Range")))
        parts = urllib.parse.unquote(urllib.parse.urlsplit(self.path).path).split("/")
        # /datasets/<org>/<name>/resolve/<revision>/<file>
        if len(parts) != 7 or parts[1] != "datasets" or parts[4] != "resolve":
            return self._error(404, "RepoNotFound", body)
        repo, revision, name = f"{parts[2]}/{parts[3]}", parts[5], parts[6]
        if repo != REPO:
            return self._error(404, "RepoNotFound", body)
        if hub.gated:
            return self._error(403, "GatedRepo", body)
        if revision not in ("main", COMMIT):
            return self._error(404, "RevisionNotFound", body)
        if name not in hub.files:
            return self._error(404, "EntryNotFound", body)
        content = hub.files[name]
        start, status = 0, 200
        header = self.headers.get("Range")
        if header:
            start, status = int(header.removeprefix("bytes=").split("-")[0]), 206
        self.send_response(status)
        if hub.hub_headers:
            etag = hub.etags.get(name, _sha256(content))
            self.send_header("X-Repo-Commit", COMMIT)
            self.send_header("X-Linked-Etag", f'"{etag}"')
            self.send_header("X-Linked-Size", str(len(content)))
            self.send_header("ETag", f'"{etag}"')
        self.send_header("Accept-Ranges", "bytes")
        self.send_header("Content-Type", "application/octet-stream")
        self.send_header("Content-Length", str(len(content) - start))
        if status == 206:
            self.send_header("Content-Range", f"bytes {start}-{len(content) - 1}/{len(content)}")
        self.end_headers()
        if not body:
            return
        rest = content[start:]
        if hub.cuts_left > 0 and hub.cut_after is not None:
            hub.cuts_left -= 1
            self.wfile.write(rest[: hub.cut_after])
            self.wfile.flush()
            self.close_connection = True
            return
        self.wfile.write(rest)

    def _error(self, status: int, code: str, body: bool) -> None:
        message = f"{code}: not here".encode()
        self.send_response(status)
        self.send_header("X-Error-Code", code)
        self.send_header("X-Error-Message", f"{code}: not here")
        if self.hub.hub_headers:
            self.send_header("X-Repo-Commit", COMMIT)
        self.send_header("Content-Type", "text/plain")
        self.send_header("Content-Length", str(len(message)))
        self.end_headers()
        if body:
            self.wfile.write(message)


class QuietServer(http.server.ThreadingHTTPServer):
    def handle_error(self, request: object, client_address: object) -> None:
        pass  # clients that hang up on purpose are no news


@pytest.fixture
def hub() -> Iterator[tuple[str, Hub]]:
    state = Hub()
    httpd = QuietServer(("127.0.0.1", 0), type("Handler", (FakeHub,), {"hub": state}))
    thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_port}", state
    finally:
        httpd.shutdown()
        httpd.server_close()


def _spec(name: str, content: bytes | None) -> OfficialFile:
    """An official file with the size and SHA-256 of ``content`` (None: unknown, like the full files)."""
    size, sha = (len(content), _sha256(content)) if content is not None else (None, None)
    return OfficialFile(name, "DRIVE-ID", size, sha, "test file")


def _fetch(base: str, spec: OfficialFile, dest: Path, source: str = f"hf:{REPO}", **kwargs: object) -> Path:
    return download_file(spec, dest, source=source, hub_endpoint=base, progress=False, **kwargs)  # type: ignore[arg-type]


def test_a_file_is_fetched_verified_and_not_fetched_again(hub, tmp_path: Path) -> None:
    base, state = hub
    state.files["items_shuffle_1000.json"] = PAYLOAD
    path = _fetch(base, _spec("items_shuffle_1000.json", PAYLOAD), tmp_path)
    assert path == tmp_path / "items_shuffle_1000.json" and path.read_bytes() == PAYLOAD
    assert sorted(os.listdir(tmp_path)) == ["items_shuffle_1000.json"]  # the staging folder is gone
    # The HEAD named the commit; the file was fetched from exactly that commit.
    assert [(m, p) for m, p, _ in state.requests] == [
        ("HEAD", f"/datasets/{REPO}/resolve/main/items_shuffle_1000.json"),
        ("HEAD", f"/datasets/{REPO}/resolve/{COMMIT}/items_shuffle_1000.json"),
        ("GET", f"/datasets/{REPO}/resolve/{COMMIT}/items_shuffle_1000.json"),
    ]
    # A verified copy is not asked for again.
    _fetch(base, _spec("items_shuffle_1000.json", PAYLOAD), tmp_path)
    assert len(state.requests) == 3


def test_a_revision_is_honoured(hub, tmp_path: Path) -> None:
    base, state = hub
    state.files["items_test.json"] = PAYLOAD
    _fetch(base, _spec("items_test.json", PAYLOAD), tmp_path, source=f"hf:{REPO}@{COMMIT}")
    assert state.requests[0][1] == f"/datasets/{REPO}/resolve/{COMMIT}/items_test.json"
    with pytest.raises(DownloadError, match="has no revision 'v9'"):
        _fetch(base, _spec("items_test.json", PAYLOAD), tmp_path / "other", source=f"hf:{REPO}@v9")


def test_a_dropped_connection_resumes_with_range(hub, tmp_path: Path) -> None:
    # huggingface_hub writes in 10 MiB chunks, so a transfer cut after 15 MiB keeps 10 MiB.
    base, state = hub
    big = PAYLOAD * 24  # 24 MiB
    state.files["items_test.json"] = big
    state.cut_after, state.cuts_left = 15 << 20, 1
    path = _fetch(base, _spec("items_test.json", big), tmp_path)
    assert path.read_bytes() == big
    gets = [r for m, _, r in state.requests if m == "GET"]
    assert gets == [None, f"bytes={10 << 20}-"]  # the second request asked only for the rest


def test_a_file_that_is_not_the_official_one_is_rejected_and_deleted(hub, tmp_path: Path) -> None:
    base, state = hub
    # Same size, other bytes; the Hub's ETag agrees with them.
    state.files["items_test.json"] = PAYLOAD[:-7] + b"THE END"
    with pytest.raises(ChecksumError, match="SHA-256") as error:
        _fetch(base, _spec("items_test.json", PAYLOAD), tmp_path)
    assert f"from hf:{REPO} (commit {COMMIT[:12]})" in str(error.value)
    assert "nothing was kept" in str(error.value) and "--no-verify" in str(error.value)
    assert os.listdir(tmp_path) == []
    # --no-verify accepts another version of the file (the Hub's own checksum still holds).
    path = _fetch(base, _spec("items_test.json", PAYLOAD), tmp_path, verify=False)
    assert path.read_bytes().endswith(b"THE END")


@pytest.mark.parametrize("etag_of", [_sha256, _git_sha1], ids=["lfs-sha256", "git-sha1"])
def test_a_file_damaged_on_the_way_is_caught_by_the_hubs_checksum(hub, tmp_path: Path, etag_of) -> None:
    # A full file: no official size or checksum is known, so the Hub's ETag is what catches it.
    base, state = hub
    state.files["items_shuffle.json"] = PAYLOAD
    state.etags["items_shuffle.json"] = etag_of(PAYLOAD)
    path = _fetch(base, _spec("items_shuffle.json", None), tmp_path / "good")
    assert path.read_bytes() == PAYLOAD and matches_etag(path, etag_of(PAYLOAD))
    state.files["items_shuffle.json"] = PAYLOAD[:-7] + b"THE END"
    with pytest.raises(ChecksumError, match="damaged on the way") as error:
        _fetch(base, _spec("items_shuffle.json", None), tmp_path / "bad", verify=False)
    assert etag_of(PAYLOAD) in str(error.value) and "run the command again" in str(error.value)
    assert os.listdir(tmp_path / "bad") == []


def test_a_missing_dataset_file_or_access_says_what_to_do(hub, tmp_path: Path) -> None:
    base, state = hub
    spec = _spec("items_test.json", PAYLOAD)
    with pytest.raises(DownloadError, match="no dataset nobody/nothing") as error:
        _fetch(base, spec, tmp_path, source="hf:nobody/nothing")
    assert "HF_TOKEN" in str(error.value) and "HF_ENDPOINT" in str(error.value)
    with pytest.raises(DownloadError, match=f"hf:{REPO} .* has no file items_test.json") as error:
        _fetch(base, spec, tmp_path)
    assert "official files under their own names" in str(error.value)
    state.files["items_test.json"], state.gated = PAYLOAD, True
    with pytest.raises(DownloadError, match="is gated: accept its terms"):
        _fetch(base, spec, tmp_path)
    assert os.listdir(tmp_path) == []


def test_a_server_that_is_not_a_hub_is_named(hub, tmp_path: Path) -> None:
    base, state = hub
    state.files["items_test.json"], state.hub_headers = PAYLOAD, False
    with pytest.raises(DownloadError, match=r"does not answer like the Hugging Face Hub.*HF_ENDPOINT"):
        _fetch(base, _spec("items_test.json", PAYLOAD), tmp_path)


def test_no_server_is_one_quick_clear_error(tmp_path: Path) -> None:
    with socket.socket() as probe:  # a port nobody listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    started = time.monotonic()
    with pytest.raises(DownloadError, match=r"cannot reach http://127\.0\.0\.1:") as error:
        _fetch(f"http://127.0.0.1:{port}", _spec("items_test.json", PAYLOAD), tmp_path)
    assert time.monotonic() - started < 15  # not the library's minute of retries
    assert "offline" in str(error.value) and "--source FOLDER" in str(error.value)
    assert os.listdir(tmp_path) == []


def test_bad_hub_sources_are_refused() -> None:
    assert HubRepo.parse("hf:org/data@v1.0") == HubRepo("org/data", "v1.0")
    assert str(HubRepo.parse("hf:org/data")) == "hf:org/data"
    for bad in ("hf:", "hf:org", "hf:org/data/extra", "hf:org/data@", "hf:/data"):
        with pytest.raises(ValueError, match="hf:<org>/<dataset>"):
            HubRepo.parse(bad)


def test_without_huggingface_hub_the_error_names_the_extra(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setitem(sys.modules, "huggingface_hub", None)  # as if not installed
    with pytest.raises(DownloadError, match=r'pip install "webshop-gym\[hf\]"'):
        download_file(_spec("items_test.json", PAYLOAD), tmp_path, source=f"hf:{REPO}", progress=False)


def test_cli_downloads_the_1k_set_from_the_hub(hub, tmp_path: Path, monkeypatch, capsys) -> None:
    base, state = hub
    for i, name in enumerate(SET_FILES["1k"]):
        content = PAYLOAD[: 1000 * (i + 1)]
        state.files[name] = content
        # The fake files are the "official" ones for this test: their sizes and checksums are the known ones.
        monkeypatch.setitem(download.OFFICIAL_FILES, name, _spec(name, content))
    import huggingface_hub.constants

    # What HF_ENDPOINT sets when huggingface_hub is imported (the next test sets HF_ENDPOINT itself).
    monkeypatch.setattr(huggingface_hub.constants, "ENDPOINT", base)
    template = f"{base}/{{repo_id}}/resolve/{{revision}}/{{filename}}"
    monkeypatch.setattr(huggingface_hub.constants, "HUGGINGFACE_CO_URL_TEMPLATE", template)
    dest = tmp_path / "raw"
    args = ["data", "download", "--set", "1k", "--dest", str(dest), "--quiet"]
    assert main([*args, "--source", f"hf:{REPO}"]) == 0
    out = capsys.readouterr().out
    assert f"fetching items_shuffle_1000.json from hf:{REPO}" in out and f"ok: {dest}" in out
    assert sorted(os.listdir(dest)) == sorted(SET_FILES["1k"])
    assert main([*args, "--source", "hf:not a repo"]) == 1
    assert "is not a Hub dataset: write hf:<org>/<dataset>" in capsys.readouterr().err


def _cli(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    code = "import sys; from webshop_gym.cli import main; sys.exit(main(sys.argv[1:]))"
    return subprocess.run(
        [sys.executable, "-c", code, *args],
        env={**os.environ, "HF_HUB_DISABLE_TELEMETRY": "1", **env},
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_hf_endpoint_and_hf_hub_offline_are_honoured(hub, tmp_path: Path) -> None:
    """The library's own settings, read from the environment in a fresh process."""
    base, state = hub
    for name in SET_FILES["1k"]:
        state.files[name] = b"[]"
    args = ["data", "download", "--set", "1k", "--source", f"hf:{REPO}", "--dest", str(tmp_path), "--quiet"]
    offline = _cli({"HF_ENDPOINT": base, "HF_HUB_OFFLINE": "1"}, *args)
    assert offline.returncode == 1 and "Traceback" not in offline.stderr
    assert offline.stderr.startswith("webshop-gym: error: HF_HUB_OFFLINE is set")
    assert "unset it" in offline.stderr
    assert state.requests == []
    # Online: the fake files are not the official ones (sizes differ): refused in one line.
    refused = _cli({"HF_ENDPOINT": base}, *args)
    assert refused.returncode == 1 and "differs from the official file" in refused.stderr
    assert (
        "GET",
        f"/datasets/{REPO}/resolve/{COMMIT}/items_shuffle_1000.json",
        None,
    ) in state.requests  # from the server HF_ENDPOINT names
    fetched = _cli({"HF_ENDPOINT": base}, *args, "--no-verify")
    assert fetched.returncode == 0, fetched.stderr
    assert sorted(os.listdir(tmp_path)) == sorted(SET_FILES["1k"])
