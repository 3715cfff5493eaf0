"""Running the web shop: waitress (a production WSGI server) by default, Flask's debugger on request.

`serve` is what ``webshop-gym serve`` runs. `ServerThread` runs a server inside the
current process on a free port (tests, benchmarks, notebooks).

Example:
    >>> from webshop_gym.web import ServerConfig, create_app
    >>> with ServerThread(create_app(ServerConfig(catalog="mini"))) as server:
    ...     import json, urllib.request
    ...     json.load(urllib.request.urlopen(server.url + "/healthz"))["status"]
    'ok'
"""

from __future__ import annotations

import socket
import threading
from collections.abc import Callable
from typing import Any

from flask import Flask

from webshop_gym.web.config import is_loopback

__all__ = ["DEFAULT_THREADS", "ServerThread", "serve"]

# Requests are short and mostly hold the GIL (search, rendering), so a few more threads
# than cores keep the CPU busy while others wait on sockets.
DEFAULT_THREADS = 8


def _waitress_options(app: Flask, threads: int) -> dict[str, Any]:
    limit = app.config["MAX_CONTENT_LENGTH"]
    return {
        "threads": threads,
        "ident": "webshop-gym",
        # Flask answers bodies over the app's limit with a clear 413; waitress only guards
        # against bodies far beyond it (it would answer those itself).
        "max_request_body_size": 16 * limit,
        "connection_limit": 1000,
        "channel_timeout": 120,
    }


def serve(
    app: Flask,
    host: str = "127.0.0.1",
    port: int = 8000,
    threads: int = DEFAULT_THREADS,
    debug: bool = False,
    on_listening: Callable[[], None] | None = None,
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
    from waitress.server import create_server

    server = create_server(app, host=host, port=port, **_waitress_options(app, threads))
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
        self, app: Flask, threads: int = DEFAULT_THREADS, host: str = "127.0.0.1", port: int = 0
    ) -> None:
        from waitress.server import create_server

        self.app = app
        self._server = create_server(app, host=host, port=port, **_waitress_options(app, threads))
        self.url = f"http://{host}:{self._server.effective_port}"
        self._thread = threading.Thread(target=self._server.run, name="webshop-gym-server", daemon=True)
        self._thread.start()

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
