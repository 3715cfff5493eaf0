"""Running the web shop: waitress (a production WSGI server) by default, Flask's debugger on request.

`serve` is what ``webshop-gym serve`` runs. `ServerThread` runs a server inside the
current process on a free port (tests, benchmarks, notebooks).

No client can lock others out by holding connections (`ConnectionLimits`): one address
holds at most ``max_connections_per_client`` connections (a client at its limit gives up
its longest idle one); when the server holds ``max_connections``, the longest idle
connection of anyone makes room for a new one; a request must arrive whole within
``request_timeout`` seconds (a client that trickles its headers in is cut off), and a
connection with no request goes after ``idle_timeout``. A connection that is being served
is never closed for room; when a client's connections are all busy, its next one is
answered 503 with ``Retry-After``.

Example:
    >>> from webshop_gym.web import ServerConfig, create_app
    >>> with ServerThread(create_app(ServerConfig(catalog="mini"))) as server:
    ...     import json, urllib.request
    ...     json.load(urllib.request.urlopen(server.url + "/healthz"))["status"]
    'ok'
"""

from __future__ import annotations

import logging
import socket
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from flask import Flask
from waitress.channel import HTTPChannel
from waitress.server import TcpWSGIServer

from webshop_gym.web.config import is_loopback

__all__ = ["DEFAULT_THREADS", "ConnectionLimits", "ServerThread", "serve"]

# Requests are short and mostly hold the GIL (search, rendering), so a few more threads
# than cores keep the CPU busy while others wait on sockets.
DEFAULT_THREADS = 8
_logger = logging.getLogger("waitress")


@dataclass(frozen=True)
class ConnectionLimits:
    """What the server's clients may hold of its connections.

    Attributes:
        max_connections: Open connections at most; beyond, the longest idle one closes to
            make room (and when every one is being served, new ones wait in the backlog).
        max_connections_per_client: Open connections per client address at most (a client
            at its limit gives up its longest idle one, or gets 503 when all are busy);
            None: no limit (behind a reverse proxy every client has the proxy's address).
            Browsers open about 6; a `RemoteWebShopEnv` keeps one per env.
        request_timeout: Seconds from a request's first byte to its last (headers and
            body); a slower request's connection is closed.
        idle_timeout: Seconds a kept-alive connection may wait for its next request.
    """

    max_connections: int = 1000
    max_connections_per_client: int | None = 100
    request_timeout: float = 15.0
    idle_timeout: float = 30.0

    def __post_init__(self) -> None:
        if self.max_connections < 2:
            raise ValueError(f"max_connections must be at least 2, got {self.max_connections}")
        if self.max_connections_per_client is not None and self.max_connections_per_client < 1:
            raise ValueError(
                "max_connections_per_client must be None (no limit) or at least 1, "
                f"got {self.max_connections_per_client}"
            )
        if not (self.request_timeout > 0 and self.idle_timeout > 0):
            raise ValueError(
                f"request_timeout and idle_timeout must be > 0 seconds, got {self.request_timeout} "
                f"and {self.idle_timeout}"
            )


class _Channel(HTTPChannel):
    """waitress's connection, which also notes when its current request began."""

    request_started: float | None = None

    def received(self, data: bytes) -> bool:
        if self.request is None and data:
            self.request_started = time.time()
        result: bool = super().received(data)
        if self.request is None:
            self.request_started = None
        return result

    def del_channel(self, map: Any = None) -> None:
        self.server.untrack(self)
        super().del_channel(map)

    def idle(self) -> bool:
        """Nothing being served or sent: closing it loses no answer."""
        return not self.requests and not self.total_outbufs_len


def _client_of(channel: HTTPChannel) -> str:
    addr = channel.addr
    return str(addr[0]) if isinstance(addr, tuple) and addr else str(addr)


class _GuardedServer(TcpWSGIServer):  # type: ignore[misc]
    """waitress's TCP server with `ConnectionLimits` (its loop thread runs every method here)."""

    channel_class = _Channel
    next_channel_cleanup: float = 0
    in_connection_overflow: bool = False

    def __init__(self, *args: Any, limits: ConnectionLimits, **kwargs: Any) -> None:
        self.limits = limits
        self._by_client: dict[str, dict[int, _Channel]] = {}
        self._tracking = threading.Lock()  # workers may close a channel whose client went away
        super().__init__(*args, **kwargs)

    def track(self, channel: _Channel) -> None:
        with self._tracking:
            self._by_client.setdefault(_client_of(channel), {})[id(channel)] = channel

    def untrack(self, channel: _Channel) -> None:
        with self._tracking:
            client = _client_of(channel)
            mine = self._by_client.get(client)
            if mine is not None and mine.pop(id(channel), None) is not None and not mine:
                del self._by_client[client]

    def _longest_idle(self, channels: Any) -> _Channel | None:
        idle = [channel for channel in channels if channel.idle()]
        return min(idle, key=lambda channel: channel.last_activity, default=None)

    def _make_room(self, client: str) -> str | None:
        """Closes what must go for ``client``'s new connection; why it cannot come in, else None."""
        cap = self.limits.max_connections_per_client
        if cap is not None:
            with self._tracking:
                mine = list(self._by_client.get(client, {}).values())
            if len(mine) >= cap:
                victim = self._longest_idle(mine)
                if victim is None:
                    return (
                        f"your address holds this server's limit of {cap} connections, all busy; "
                        "try again in a moment (or send requests over fewer connections)"
                    )
                victim.handle_close()
        if len(self.active_channels) >= self.limits.max_connections:
            victim = self._longest_idle(list(self.active_channels.values()))
            if victim is None:
                return "the server holds its limit of connections, every one busy; try again in a moment"
            victim.handle_close()
        return None

    def readable(self) -> bool:
        now = time.time()
        if now >= self.next_channel_cleanup:
            self.next_channel_cleanup = now + self.adj.cleanup_interval
            self.maintenance(now)
        if not self.accepting:
            return False
        # Accept while a connection can make room; else leave newcomers in the backlog.
        full = len(self.active_channels) >= self.limits.max_connections and (
            self._longest_idle(list(self.active_channels.values())) is None
        )
        if full != self.in_connection_overflow:
            self.in_connection_overflow = full
            _logger.warning(
                "every one of the %d connections is busy: new ones wait"
                if full
                else "a connection can go again: accepting new ones",
                self.limits.max_connections,
            )
        return not full

    def handle_accept(self) -> None:
        try:
            accepted = self.accept()
            if accepted is None:
                return
            conn, addr = accepted
            self.set_socket_options(conn)
        except OSError:  # the client left before we got to it
            return
        addr = self.fix_addr(addr)
        refusal = self._make_room(str(addr[0]) if isinstance(addr, tuple) else str(addr))
        if refusal is not None:
            _refuse(conn, refusal)
            return
        self.track(self.channel_class(self, conn, addr, self.adj, map=self._map))

    def maintenance(self, now: float) -> None:
        request_cutoff = now - self.limits.request_timeout
        idle_cutoff = now - self.limits.idle_timeout
        for channel in list(self.active_channels.values()):
            if channel.requests:  # being served: never cut off
                continue
            started = channel.request_started
            if (started is not None and started < request_cutoff) or channel.last_activity < idle_cutoff:
                channel.will_close = True


def _refuse(conn: socket.socket, reason: str) -> None:
    body = reason.encode()
    head = (
        "HTTP/1.1 503 Service Unavailable\r\nContent-Type: text/plain; charset=utf-8\r\n"
        f"Retry-After: 1\r\nConnection: close\r\nContent-Length: {len(body)}\r\n\r\n"
    )
    try:
        conn.setblocking(False)
        conn.send(head.encode() + body)  # a fresh socket's buffer takes it whole
    except OSError:
        pass
    finally:
        conn.close()


def _create_server(app: Flask, host: str, port: int, threads: int, limits: ConnectionLimits) -> Any:
    """waitress's ``create_server`` with `_GuardedServer` for each address ``host`` resolves to."""
    from waitress.adjustments import Adjustments
    from waitress.server import MultiSocketServer
    from waitress.task import ThreadedTaskDispatcher

    limit = app.config["MAX_CONTENT_LENGTH"]
    adj = Adjustments(
        host=host,
        port=port,
        threads=threads,
        ident="webshop-gym",
        # Flask answers bodies over the app's limit with a clear 413; waitress only guards
        # against bodies far beyond it (it would answer those itself).
        max_request_body_size=16 * limit,
        # The limits are ours (_GuardedServer); waitress's own stay out of their way.
        connection_limit=limits.max_connections + 16,
        channel_timeout=max(1, int(limits.idle_timeout)),
        cleanup_interval=1,
        # poll(2): select(2) fails on descriptors above 1023, which 1,000 connections reach.
        asyncore_use_poll=True,
    )
    dispatcher = ThreadedTaskDispatcher()
    dispatcher.set_thread_count(threads)
    socket_map: dict[int, Any] = {}
    servers = [
        _GuardedServer(app, socket_map, dispatcher=dispatcher, adj=adj, sockinfo=sockinfo, limits=limits)
        for sockinfo in adj.listen
    ]
    if len(servers) == 1:
        return servers[0]
    listening = [(server.effective_host, server.effective_port) for server in servers]
    return MultiSocketServer(socket_map, adj, listening, dispatcher, servers[-1].log_info)


def serve(
    app: Flask,
    host: str = "127.0.0.1",
    port: int = 8000,
    threads: int = DEFAULT_THREADS,
    debug: bool = False,
    on_listening: Callable[[], None] | None = None,
    limits: ConnectionLimits = ConnectionLimits(),
) -> None:
    """Serves ``app`` until interrupted.

    Args:
        app: The app (`webshop_gym.web.create_app`).
        host: Address to listen on (``0.0.0.0`` for every interface).
        port: Port to listen on.
        threads: Worker threads of waitress.
        debug: Use Flask's development server with the debugger instead; only on a
            loopback address (the debugger runs any code a visitor sends).
        on_listening: Called once the port is bound, before serving (e.g. to say where).
        limits: What clients may hold of the server's connections (waitress only).

    Raises:
        OSError: The address cannot be listened on (e.g. the port is in use); nothing was
            served.
        ValueError: ``debug`` with a host other machines can reach.
    """
    if debug:
        if not is_loopback(host):
            raise ValueError(
                f"the debugger runs any code a visitor sends: use it on 127.0.0.1 only, not {host!r}"
            )
        with socket.create_server((host, port)):  # fail here, with one clear error, if in use
            pass
        if on_listening is not None:
            on_listening()
        app.run(host=host, port=port, debug=True, use_reloader=False, threaded=True)
        return
    server = _create_server(app, host, port, threads, limits)
    if on_listening is not None:
        on_listening()
    try:
        server.run()
    finally:
        server.close()


class ServerThread:
    """A waitress server for ``app`` on ``127.0.0.1`` and a free port, in a daemon thread.

    Use as a context manager, or call `close`; ``url`` is its base address.
    """

    def __init__(
        self,
        app: Flask,
        threads: int = DEFAULT_THREADS,
        host: str = "127.0.0.1",
        port: int = 0,
        limits: ConnectionLimits = ConnectionLimits(),
    ) -> None:
        self.app = app
        self._server = _create_server(app, host, port, threads, limits)
        self.url = f"http://{host}:{self._server.effective_port}"
        self._thread = threading.Thread(target=self._server.run, name="webshop-gym-server", daemon=True)
        self._thread.start()

    def open_connections(self) -> int:
        """How many client connections the server holds now."""
        return len(self._server.active_channels)

    def close(self) -> None:
        """Stops listening, closes open connections and ends the worker threads."""
        server = self._server

        def close_every_channel() -> None:  # runs in the server's own loop thread
            for channel in list(server._map.values()):
                channel.close()  # the listener, each connection and the trigger itself

        # Workers first: one finishing a request pulls the trigger, and once the trigger's
        # pipe is closed its file descriptor number may already belong to a new server.
        server.task_dispatcher.shutdown(timeout=5)
        if self._thread.is_alive():
            server.trigger.pull_trigger(close_every_channel)
            self._thread.join(timeout=10)

    def __enter__(self) -> ServerThread:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
