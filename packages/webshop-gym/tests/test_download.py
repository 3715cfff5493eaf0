"""`webshop-gym data download` against a local HTTP server (127.0.0.1) that plays Google Drive."""

from __future__ import annotations

import hashlib
import http.server
import shutil
import threading
import urllib.parse
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from webshop_gym.cli import main
from webshop_gym.data.download import (
    OFFICIAL_FILES,
    SET_FILES,
    ChecksumError,
    DownloadError,
    OfficialFile,
    download_file,
    download_files,
    files_of,
)

PAYLOAD = bytes(range(256)) * 4096 + b"the end"  # ~1 MB, every byte value


@dataclass
class Behaviour:
    """What the fake server does; tests change it between calls."""

    files: dict[str, bytes] = field(default_factory=dict)  # drive id or file name -> content
    cut_after: int | None = None  # send only this many bytes of the body, then drop the connection
    cuts_left: int = 0  # how many responses get cut
    honour_range: bool = True
    confirm_page: bool = True  # answer the first Drive request with the "can't scan" page
    quota_page: bool = False  # answer Drive requests with a page that has no download form
    requests: list[tuple[str, str | None]] = field(default_factory=list)  # (path, Range header)


class FakeDrive(http.server.BaseHTTPRequestHandler):
    behaviour: Behaviour

    def log_message(self, format: str, *args: object) -> None:  # keep test output clean
        pass

    def do_GET(self) -> None:
        b = self.behaviour
        b.requests.append((self.path, self.headers.get("Range")))
        url = urllib.parse.urlsplit(self.path)
        query = dict(urllib.parse.parse_qsl(url.query))
        if url.path == "/download":  # Drive's endpoint: first the confirmation page
            if b.quota_page:
                page = b"<html><head><title>Google Drive - Quota exceeded</title></head><body>Too many users"
                self._send(200, page, "text/html; charset=utf-8")
                return
            if b.confirm_page and query.get("uuid") != "u-123":
                page = (
                    "<html><head><title>Google Drive - Virus scan warning</title></head><body>"
                    '<form id="download-form" action="/download" method="get">'
                    f'<input type="hidden" name="id" value="{query["id"]}">'
                    '<input type="hidden" name="export" value="download">'
                    '<input type="hidden" name="confirm" value="t">'
                    '<input type="hidden" name="uuid" value="u-123">'
                    "</form></body></html>"
                ).encode()
                self._send(200, page, "text/html; charset=utf-8")
                return
            content = b.files.get(query.get("id", ""))
        elif url.path.startswith("/mirror/"):
            content = b.files.get(urllib.parse.unquote(url.path.removeprefix("/mirror/")))
        else:
            content = None
        if content is None:
            self._send(404, b"not found", "text/plain")
            return
        start = 0
        header = self.headers.get("Range")
        if header and b.honour_range:
            start = int(header.removeprefix("bytes=").split("-")[0])
            if start >= len(content):
                self._send(416, b"", "text/plain", extra={"Content-Range": f"bytes */{len(content)}"})
                return
        body = content[start:]
        extra = {"Content-Range": f"bytes {start}-{len(content) - 1}/{len(content)}"} if start else {}
        cut = b.cut_after if b.cuts_left > 0 else None
        if cut is not None:
            b.cuts_left -= 1
        self._send(206 if start else 200, body, "application/octet-stream", extra=extra, cut=cut)

    def _send(
        self, status: int, body: bytes, kind: str, extra: dict[str, str] | None = None, cut: int | None = None
    ) -> None:
        self.send_response(status)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        for key, value in (extra or {}).items():
            self.send_header(key, value)
        self.end_headers()
        self.wfile.write(body if cut is None else body[:cut])
        if cut is not None:
            self.wfile.flush()
            self.close_connection = True


class QuietServer(http.server.ThreadingHTTPServer):
    def handle_error(self, request: object, client_address: object) -> None:
        pass  # clients that hang up on purpose (the cut transfers) are no news


@pytest.fixture
def server() -> Iterator[tuple[str, Behaviour]]:
    behaviour = Behaviour()
    handler = type("Handler", (FakeDrive,), {"behaviour": behaviour})
    httpd = QuietServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_port}", behaviour
    finally:
        httpd.shutdown()
        httpd.server_close()


def _spec(content: bytes, *, sha: str | None = "real", size: int | None = -1) -> OfficialFile:
    return OfficialFile(
        name="items_test.json",
        drive_id="DRIVE-ID-1",
        size=len(content) if size == -1 else size,
        sha256=hashlib.sha256(content).hexdigest() if sha == "real" else sha,
        description="test file",
    )


def test_drive_confirmation_flow(server, tmp_path: Path) -> None:
    base, behaviour = server
    behaviour.files["DRIVE-ID-1"] = PAYLOAD
    path = download_file(_spec(PAYLOAD), tmp_path, drive_url=f"{base}/download", progress=False)
    assert path.read_bytes() == PAYLOAD
    assert not (tmp_path / "items_test.json.part").exists()
    # The first answer was the HTML page; the form led to the file.
    assert [
        urllib.parse.parse_qs(urllib.parse.urlsplit(p).query).get("uuid") for p, _ in behaviour.requests
    ] == [
        None,
        ["u-123"],
    ]
    # A verified copy is not fetched again.
    download_file(_spec(PAYLOAD), tmp_path, drive_url=f"{base}/download", progress=False)
    assert len(behaviour.requests) == 2


def test_dropped_connection_resumes_with_range(server, tmp_path: Path) -> None:
    base, behaviour = server
    behaviour.files["DRIVE-ID-1"] = PAYLOAD
    behaviour.cut_after, behaviour.cuts_left = 300_000, 2  # two broken transfers in a row
    path = download_file(_spec(PAYLOAD), tmp_path, drive_url=f"{base}/download", progress=False, retries=3)
    assert path.read_bytes() == PAYLOAD
    ranges = [r for _, r in behaviour.requests if r]
    assert ranges[0] == "bytes=300000-"  # the second transfer asked only for the rest
    assert ranges[-1] == "bytes=600000-"


def test_partial_file_resumes_in_a_later_run(server, tmp_path: Path) -> None:
    base, behaviour = server
    behaviour.files["items_test.json"] = PAYLOAD
    behaviour.cut_after, behaviour.cuts_left = 400_000, 1
    with pytest.raises(DownloadError, match="running the command again resumes"):
        download_file(_spec(PAYLOAD), tmp_path, source=f"{base}/mirror", progress=False, retries=0)
    part = tmp_path / "items_test.json.part"
    assert part.stat().st_size == 400_000 and not (tmp_path / "items_test.json").exists()
    path = download_file(_spec(PAYLOAD), tmp_path, source=f"{base}/mirror", progress=False, retries=0)
    assert path.read_bytes() == PAYLOAD
    assert behaviour.requests[-1] == ("/mirror/items_test.json", "bytes=400000-")


def test_server_ignoring_range_restarts_cleanly(server, tmp_path: Path) -> None:
    base, behaviour = server
    behaviour.files["items_test.json"] = PAYLOAD
    behaviour.honour_range = False
    (tmp_path / "items_test.json.part").write_bytes(PAYLOAD[:1000])
    path = download_file(_spec(PAYLOAD), tmp_path, source=f"{base}/mirror", progress=False)
    assert path.read_bytes() == PAYLOAD


def test_checksum_mismatch_is_rejected_and_deleted(server, tmp_path: Path) -> None:
    base, behaviour = server
    tampered = PAYLOAD[:-7] + b"THE END"  # same size, other bytes
    behaviour.files["DRIVE-ID-1"] = tampered
    with pytest.raises(ChecksumError, match="SHA-256") as error:
        download_file(_spec(PAYLOAD), tmp_path, drive_url=f"{base}/download", progress=False)
    assert "items_test.json" in str(error.value) and "nothing was kept" in str(error.value)
    assert list(tmp_path.iterdir()) == []


def test_size_mismatch_is_rejected(server, tmp_path: Path) -> None:
    base, behaviour = server
    behaviour.files["items_test.json"] = PAYLOAD
    with pytest.raises(ChecksumError, match="bytes"):
        download_file(
            _spec(PAYLOAD, size=len(PAYLOAD) + 1, sha=None), tmp_path, source=f"{base}/mirror", progress=False
        )
    assert not (tmp_path / "items_test.json").exists()


def test_offline_gets_a_clear_error(tmp_path: Path) -> None:
    import socket

    with socket.socket() as probe:  # a port nobody listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    with pytest.raises(DownloadError, match="offline") as error:
        download_file(_spec(PAYLOAD), tmp_path, drive_url=f"http://127.0.0.1:{port}/download", progress=False)
    assert "--source" in str(error.value)


def test_drive_quota_page_is_explained(server, tmp_path: Path) -> None:
    base, behaviour = server
    behaviour.files["DRIVE-ID-1"] = PAYLOAD
    behaviour.quota_page = True
    with pytest.raises(DownloadError, match="Quota exceeded") as error:
        download_file(_spec(PAYLOAD), tmp_path, drive_url=f"{base}/download", progress=False)
    assert "drive.google.com/uc?id=DRIVE-ID-1" in str(error.value) and "--source" in str(error.value)


def test_missing_file_on_the_server(server, tmp_path: Path) -> None:
    base, _ = server
    missing = OfficialFile("items_test.json", "NO-SUCH-ID", None, None, "missing on the server")
    with pytest.raises(DownloadError, match="HTTP 404"):
        download_file(missing, tmp_path, drive_url=f"{base}/download", progress=False)


def test_source_folder_is_copied_and_verified(tmp_path: Path) -> None:
    source = tmp_path / "src"
    source.mkdir()
    (source / "items_test.json").write_bytes(PAYLOAD)
    path = download_file(_spec(PAYLOAD), tmp_path / "dest", source=str(source), progress=False)
    assert path.read_bytes() == PAYLOAD
    with pytest.raises(ChecksumError):
        download_file(_spec(b"other"), tmp_path / "dest2", source=str(source), progress=False)
    with pytest.raises(FileNotFoundError, match="must hold"):
        download_file(_spec(PAYLOAD), tmp_path / "dest3", source=str(tmp_path / "empty"), progress=False)


def test_official_specs_are_complete() -> None:
    assert {name for names in SET_FILES.values() for name in names} == set(OFFICIAL_FILES)
    assert OFFICIAL_FILES["items_ins_v2_1000.json"].size == 147_099
    assert OFFICIAL_FILES["items_human_ins.json"].size == 5_137_548
    assert OFFICIAL_FILES["items_shuffle_1000.json"].size == 4_467_013


def test_the_official_attribute_file_checksum(webshop_1k: Path) -> None:
    # ../shared holds this file at the official size; its checksum is the one we check.
    spec = OFFICIAL_FILES["items_ins_v2_1000.json"]
    content = (webshop_1k / spec.name).read_bytes()
    assert len(content) == spec.size and hashlib.sha256(content).hexdigest() == spec.sha256


def test_cli_download_from_a_mirror(server, tmp_path: Path, capsys) -> None:
    base, behaviour = server
    for name in SET_FILES["1k"]:
        behaviour.files[name] = b"[]"
    dest = tmp_path / "raw"
    # Not the official files (sizes differ): refused, with exit status 1 and one line.
    assert (
        main(
            ["data", "download", "--set", "1k", "--source", f"{base}/mirror", "--dest", str(dest), "--quiet"]
        )
        == 1
    )
    error = capsys.readouterr().err
    assert error.startswith("webshop-gym: error: ") and "official file" in error
    args = ["data", "download", "--set", "1k", "--source", f"{base}/mirror", "--dest", str(dest), "--quiet"]
    assert main([*args, "--no-verify"]) == 0
    assert sorted(p.name for p in dest.iterdir()) == sorted(SET_FILES["1k"])


@pytest.fixture
def rebuilt_1k_copy(webshop_1k: Path, webshop_1k_human: Path, tmp_path: Path) -> Path:
    """A copy of the 1k set like the one beside this project (../shared/webshop-1k): a rebuilt
    product file (here one byte longer than the one in `webshop_1k`, so it differs from the
    official file whichever copy `webshop_1k` is) and the 1k set's human instructions alone."""
    folder = tmp_path / "rebuilt-1k"
    folder.mkdir()
    products = (webshop_1k / "items_shuffle_1000.json").read_bytes()
    (folder / "items_shuffle_1000.json").write_bytes(products + b"\n")
    shutil.copy(webshop_1k / "items_ins_v2_1000.json", folder / "items_ins_v2_1000.json")
    shutil.copy(webshop_1k_human, folder / "items_human_ins_1000.json")
    return folder


def test_the_1k_copy_beside_the_project_downloads_with_no_verify(
    rebuilt_1k_copy: Path, tmp_path: Path, capsys
) -> None:
    """Issue 28.16: the refusal names --no-verify; with it, items_human_ins_1000.json stands in."""
    dest = tmp_path / "raw"
    source = str(rebuilt_1k_copy)
    args = ["data", "download", "--source", source, "--set", "1k", "--dest", str(dest), "--quiet"]
    assert main(args) == 1
    error = capsys.readouterr().err
    assert "--no-verify" in error and f"{rebuilt_1k_copy / 'items_shuffle_1000.json'} is untouched" in error
    assert "run the command again;" not in error and "It was deleted" not in error
    assert main([*args, "--no-verify"]) == 0
    printed = capsys.readouterr().out
    assert "items_human_ins_1000.json (the human instructions of the 1,000 products" in printed
    assert sorted(p.name for p in dest.iterdir()) == [
        "items_human_ins_1000.json",
        "items_ins_v2_1000.json",
        "items_shuffle_1000.json",
    ]


def test_the_stand_in_makes_human_goals_in_the_prepared_1k_store(
    rebuilt_1k_copy: Path, tmp_path: Path, monkeypatch, capsys
) -> None:
    from webshop_gym.data.store import open_store

    monkeypatch.setenv("WEBSHOP_GYM_DATA", str(tmp_path))
    download = ["data", "download", "--source", str(rebuilt_1k_copy), "--set", "1k", "--no-verify", "--quiet"]
    assert main(download) == 0
    assert main(["data", "prepare", "--set", "1k", "--quiet"]) == 0
    assert "gets no human goals" not in capsys.readouterr().out
    assert len(open_store(tmp_path / "webshop-1k").precomputed_goals("human")) == 13
    assert main(["data", "status"]) == 0
    assert "raw/items_human_ins_1000.json stands in for the 1k set" in capsys.readouterr().out


def test_the_full_set_gets_no_stand_in(rebuilt_1k_copy: Path, tmp_path: Path, capsys) -> None:
    args = ["data", "download", "--source", str(rebuilt_1k_copy), "--set", "all", "--no-verify", "--quiet"]
    assert main([*args, "--dest", str(tmp_path)]) == 1
    assert "must hold items_human_ins.json" in capsys.readouterr().err


def test_the_1k_set_is_fetched_from_the_official_setup_scripts_drive_ids(server, tmp_path: Path) -> None:
    """No network: the fake Drive records what `download_files` asks for. The ids are those of
    princeton-nlp/WebShop's setup.sh (`-d small`, then items_human_ins)."""
    base, behaviour = server
    setup_sh_ids = {
        "1EgHdxQ_YxqIQlvvq5iKlCrkEKR6-j0Ib": "items_shuffle_1000.json",
        "1IduG0xl544V_A_jv3tHXC0kyFi7PnyBu": "items_ins_v2_1000.json",
        "14Kb5SPBk_jfdLZ_CDBNitW98QLDlKR5O": "items_human_ins.json",
    }
    for drive_id, name in setup_sh_ids.items():
        behaviour.files[drive_id] = name.encode()
    paths = download_files(
        files_of(["1k"]), tmp_path, drive_url=f"{base}/download", verify=False, progress=False
    )
    assert [p.read_bytes().decode() for p in paths] == list(setup_sh_ids.values())
    asked = [urllib.parse.parse_qs(urllib.parse.urlsplit(path).query) for path, _ in behaviour.requests]
    assert [q["id"] for q in asked if "uuid" not in q] == [[drive_id] for drive_id in setup_sh_ids]
    assert all(q["export"] == ["download"] for q in asked)
