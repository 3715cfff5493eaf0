"""What one client can cost the web shop's server: connections (issue 40).

Every test runs a real waitress server on 127.0.0.1 in this process and opens at most a few
hundred sockets to it; each finishes in seconds. The figures with the production limits
(1,050 idle or slow sockets, 25 visitors) come from ``python -m benchmarks.env.web_slow_clients``.
"""

from __future__ import annotations

import contextlib
import http.client
import socket
import time
from collections.abc import Iterator

import pytest

from webshop_gym.web import ServerConfig, create_app
from webshop_gym.web.server import ConnectionLimits, ServerThread


@pytest.fixture(scope="module")
def app():
    return create_app(ServerConfig(catalog="mini"))


def port_of(server: ServerThread) -> int:
    return int(server.url.rsplit(":", 1)[1])


@contextlib.contextmanager
def idle_sockets(port: int, count: int, first_bytes: bytes = b"") -> Iterator[list[socket.socket]]:
    """``count`` connections to 127.0.0.1:``port`` that send ``first_bytes`` and then nothing."""
    sockets: list[socket.socket] = []
    try:
        for _ in range(count):
            sock = socket.create_connection(("127.0.0.1", port), timeout=5)
            if first_bytes:
                sock.sendall(first_bytes)
            sockets.append(sock)
        yield sockets
    finally:
        for sock in sockets:
            sock.close()


def closed_by_server(sock: socket.socket) -> bool:
    """Whether the server has closed this connection (without waiting)."""
    sock.setblocking(False)
    try:
        return sock.recv(1024) == b""
    except BlockingIOError:
        return False
    except OSError:  # reset by the server
        return True
    finally:
        sock.setblocking(True)


def wait_for_connections(server: ServerThread, at_least: int, seconds: float = 10) -> None:
    deadline = time.monotonic() + seconds
    while server.open_connections() < at_least and time.monotonic() < deadline:
        time.sleep(0.02)


def visitor_served(port: int, timeout: float = 5) -> bool:
    """A new visitor's request (its own connection) gets its answer within ``timeout`` seconds."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        connection.request("GET", "/healthz")
        response = connection.getresponse()
        return response.status == 200 and b'"status":"ok"' in response.read().replace(b" ", b"")
    except OSError:
        return False
    finally:
        connection.close()


def test_one_client_holds_at_most_its_share_of_connections_and_a_visitor_is_served(app) -> None:
    """300 idle sockets from one address: the server keeps 100 (the per-client default), closing
    the longest idle ones, and a new visitor from the same address is served at once."""
    assert ConnectionLimits().max_connections_per_client == 100
    with ServerThread(app) as server, idle_sockets(port_of(server), 300) as sockets:
        deadline = time.monotonic() + 10
        while server.open_connections() > 100 and time.monotonic() < deadline:
            time.sleep(0.02)
        assert server.open_connections() <= 100
        started = time.monotonic()
        assert visitor_served(port_of(server))
        assert time.monotonic() - started < 2
        closed = [closed_by_server(sock) for sock in sockets]
        assert sum(closed) >= 200
        assert not any(closed[-50:])  # the longest idle go first: the newest are still open


def test_idle_connections_from_many_clients_give_way_to_new_visitors(app) -> None:
    """Behind a proxy (no per-client limit) the connection limit alone must not lock anyone out:
    200 idle sockets against a limit of 64, then 25 visitors, every one served."""
    limits = ConnectionLimits(max_connections=64, max_connections_per_client=None)
    with ServerThread(app, limits=limits) as server, idle_sockets(port_of(server), 200):
        wait_for_connections(server, 64)
        served = sum(visitor_served(port_of(server)) for _ in range(25))
        assert served == 25
        assert server.open_connections() <= 64


def test_a_request_that_trickles_in_is_cut_off(app) -> None:
    """Slowloris: headers sent a byte at a time keep a connection active, but a request must arrive
    whole within request_timeout; a connection that sends nothing goes after idle_timeout."""
    # The idle timeout is well above the slowest cut-off the test allows (4 s), so that a loaded
    # machine stretching the cut-off cannot also have closed the idle connection by then.
    limits = ConnectionLimits(request_timeout=1, idle_timeout=6)
    with ServerThread(app, limits=limits) as server:
        port = port_of(server)
        with (
            idle_sockets(port, 1, b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n") as [slow],
            idle_sockets(port, 1) as [idle],
        ):
            started = time.monotonic()
            cut_off_after = None
            while time.monotonic() - started < 6 and cut_off_after is None:
                try:
                    slow.sendall(b"X")  # one byte of a header line every 0.2 s
                except OSError:
                    cut_off_after = time.monotonic() - started
                    break
                if closed_by_server(slow):
                    cut_off_after = time.monotonic() - started
                time.sleep(0.2)
            assert cut_off_after is not None and 0.8 < cut_off_after < 4
            assert not closed_by_server(idle)  # idle for under 6 s so far
            deadline = time.monotonic() + 8
            while not closed_by_server(idle) and time.monotonic() < deadline:
                time.sleep(0.1)
            assert closed_by_server(idle)
            assert visitor_served(port)


def test_a_client_whose_connections_are_all_busy_is_told_to_retry(app) -> None:
    """When none of a client's connections can go, the next one is answered 503 with Retry-After,
    never left hanging."""
    limits = ConnectionLimits(max_connections_per_client=2)
    with ServerThread(app, limits=limits) as server:
        holder = server._server  # mark the two connections busy, as long requests would
        with idle_sockets(port_of(server), 2):
            wait_for_connections(server, 2)
            for channel in list(holder.active_channels.values()):
                channel.requests = ["busy"]
            try:
                connection = http.client.HTTPConnection("127.0.0.1", port_of(server), timeout=5)
                connection.request("GET", "/healthz")
                response = connection.getresponse()
                body = response.read().decode()
                connection.close()
            finally:
                for channel in list(holder.active_channels.values()):
                    channel.requests = []
        assert response.status == 503 and response.getheader("Retry-After") == "1"
        assert "2 connections" in body and "try again" in body


def test_limits_are_checked() -> None:
    with pytest.raises(ValueError, match="max_connections_per_client"):
        ConnectionLimits(max_connections_per_client=0)
    with pytest.raises(ValueError, match="request_timeout"):
        ConnectionLimits(request_timeout=0)
